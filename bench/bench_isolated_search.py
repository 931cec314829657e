"""What per-agent isolation costs a search: ``Memory.search`` on two linked copies of
the recall bench's agent memory, one with ``isolation agent``, by the same agent.

Under isolation each candidate is tested for who may see it; without it no test
runs. Both copies are searched in one process, the copy without isolation first,
with tantivy's query for the same question between memwork's (as the recall bench
takes turns), and the CPU time of each ``Memory.search`` is recorded.

Usage: python bench/bench_isolated_search.py [--records 100000] [--questions 200]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall as br  # noqa: E402
import recall_baselines as engines  # noqa: E402
from store_copy import linked_copy  # noqa: E402


def _p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[
        min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--questions", type=int, default=200)
    args = ap.parse_args()
    from memwork import Memory

    source, questions = br.cached_store(args.records)
    asked = questions[: args.questions]
    tantivy = None
    results: dict[str, tuple[float, float]] = {}
    for isolated in (False, True):
        path = linked_copy(source, br.OUT / f"isolated-search-{isolated}-{args.records}")
        if isolated:
            memwork = ROOT / ".venv" / "bin" / "memwork"
            setting = [str(memwork), "--db", str(path), "config", "set", "isolation", "agent"]
            subprocess.run(setting, check=True, capture_output=True)
        memory = Memory(path, clock=lambda: br.NOW, agent="agent-x")
        memory.search("warm up")
        if tantivy is None:
            tantivy = engines.Tantivy(br._texts(memory.store))
        for q in questions[-20:]:  # warm-up, not counted
            memory.search(q)
            tantivy.search(q, 10)
        br._settled(memory)
        spent = []
        for q in asked:
            tantivy.search(q, 10)
            t0 = time.process_time()
            memory.search(q, limit=10)
            spent.append((time.process_time() - t0) * 1000)
        results["isolation agent" if isolated else "shared"] = _p50_p95(spent)
        memory.close()
    print(f"| {args.records:,} agent notes | CPU p50 / p95 |")
    print("|---|---:|")
    for name, (p50, p95) in results.items():
        print(f"| {name} | {p50:.2f} / {p95:.2f} ms |")
    shared, isolated = results["shared"], results["isolation agent"]
    p50, p95 = isolated[0] / shared[0], isolated[1] / shared[1]
    print(f"\nisolated / shared: {p50:.2f}x p50, {p95:.2f}x p95")


if __name__ == "__main__":
    main()
