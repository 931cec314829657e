"""``memwork context --task T`` process time: two installs of memwork, interleaved.

Measures a change's cost on the command every agent step runs, against the same
command of another checkout (say main's) in the same run, on a copy of the demo
store. Runs alternate between the two, so a busy machine slows both alike.

Usage: python bench/bench_context_compare.py BASELINE_MEMWORK [CANDIDATE_MEMWORK] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK = "deploy-api"
DEMO_NOW = "2026-11-20T12:00:00Z"


def main() -> None:
    """Print the median and best process time of each install, and whether outputs agree."""
    parser = argparse.ArgumentParser()
    parser.add_argument("baseline", help="the memwork executable to compare against")
    parser.add_argument("candidate", nargs="?", default=str(ROOT / ".venv" / "bin" / "memwork"))
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    env = {**os.environ, "MEMWORK_NOW": DEMO_NOW}
    with tempfile.TemporaryDirectory(prefix="memwork-ctx-") as tmp:
        store = Path(tmp) / "demo"
        shutil.copytree(ROOT / "data" / "demo", store)
        bins = {"baseline": args.baseline, "candidate": args.candidate}
        command = {k: [b, "--db", str(store), "context", "--task", TASK] for k, b in bins.items()}
        outputs = {
            k: subprocess.run(c, env=env, capture_output=True, text=True, check=True).stdout
            for k, c in command.items()
        }
        times: dict[str, list[float]] = {k: [] for k in bins}
        for _ in range(args.runs):
            for k, c in command.items():
                start = time.perf_counter()
                subprocess.run(c, env=env, capture_output=True, check=True)
                times[k].append((time.perf_counter() - start) * 1000)
    for k, v in times.items():
        print(f"{k:<9} median {statistics.median(v):6.1f} ms   best {min(v):6.1f} ms")
    ratio = statistics.median(times["candidate"]) / statistics.median(times["baseline"])
    same = len(set(outputs.values())) == 1
    print(f"candidate / baseline (medians): {ratio:.2f}x; same output: {same}")


if __name__ == "__main__":
    main()
