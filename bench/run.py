"""`make bench`: every benchmark, in one run, printing the tables of docs/PERFORMANCE_JOURNAL.md.

Usage: python bench/run.py [--quick]   (--quick: 1k and 10k only)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = ["1000", "10000"] if quick else ["1000", "10000", "100000"]
    scripts = [
        ("Store and context", "bench_store.py", ["--sizes", *sizes]),
        ("Workbench", "bench_tui.py", ["--sizes", *sizes]),
        ("Global search", "bench_search.py", ["--sizes", *sizes]),
        (
            "Redis store against the folder store",
            "bench_redis.py",
            ["--sizes", sizes[0], sizes[-1]],
        ),
        ("Agents: MCP, Python API, whole processes, recall", "bench_agent.py", ["--sizes", *sizes]),
        ("The HTTP door", "bench_http.py", ["--sizes", sizes[0], sizes[-1]]),
        ("Bulk recording", "bench_bulk.py", [] if not quick else ["--sizes", "1000", "10000"]),
        ("Virtual table vs DataTable", "bench_virtual_table.py", []),
        ("A failure storm", "bench_failures.py", []),
        ("The working-memory fallback", "bench_wm_fallback.py", []),
    ]
    for title, script, args in scripts:
        if not (HERE / script).exists():
            continue
        print(f"\n## {title}\n", flush=True)
        subprocess.run([sys.executable, str(HERE / script), *args], check=True)


if __name__ == "__main__":
    main()
