"""``memwork context --task T`` process time: two installs of memwork, interleaved.

Measures a change's cost on the command every agent step runs, against the same
command of another checkout (say main's) in the same run, on a copy of a store (the
demo, or ``--store``), one copy each: a store format the baseline does not read
(a newer schema) is given to it in the format it wrote, and each side first opens
its own copy as it would (migrating it, for the candidate). ``--writes N`` records N
episodes into each copy first, each with its own memwork (a folder store that
commits through a log then has N commits in its log). Runs alternate between the
two, so a busy machine slows both alike.

Usage: python bench/bench_context_compare.py BASELINE_MEMWORK [CANDIDATE_MEMWORK]
       [--runs N] [--store PATH] [--writes N] [--task T] [--now ISO]
"""

from __future__ import annotations

import argparse
import json
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
    parser.add_argument("--store", type=Path, default=ROOT / "data" / "demo")
    parser.add_argument("--writes", type=int, default=0)
    parser.add_argument("--task", default=TASK)
    parser.add_argument("--now", default=DEMO_NOW)
    args = parser.parse_args()
    env = {**os.environ, "MEMWORK_NOW": args.now, "MEMWORK_FSYNC": "0"}
    bins = {"baseline": args.baseline, "candidate": args.candidate}
    with tempfile.TemporaryDirectory(prefix="memwork-ctx-") as tmp:
        stores = {k: Path(tmp) / k for k in bins}
        for store in stores.values():
            shutil.copytree(args.store, store, ignore=shutil.ignore_patterns(".lock"))
        episode = json.dumps({"task_id": args.task, "score": 0.4, "summary": "bench write"})
        for k, b in bins.items():
            for n in range(args.writes):
                subprocess.run(
                    [b, "--db", str(stores[k]), "record-episode"],
                    input=episode.replace("bench write", f"bench write {n}"),
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
        command = {
            k: [b, "--db", str(stores[k]), "context", "--task", args.task] for k, b in bins.items()
        }
        outputs = {
            k: subprocess.run(c, env=env, capture_output=True, text=True, check=True).stdout
            for k, c in command.items()
        }
        log = stores["candidate"] / "store.log"
        if log.exists():
            print(f"candidate's store.log: {log.stat().st_size / 1024:.0f} KiB")
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
