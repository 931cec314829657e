"""Bulk recording: a JSON Lines file of N episodes through ``memwork record-episode FILE``.

Measures the whole process: wall time, CPU time (user + system) and peak resident
memory (that child's own ``ru_utime``, ``ru_stime`` and ``ru_maxrss``, from
``wait4``), next to the input file's size. On a shared machine the wall time follows
the other processes' load; the CPU time is the figure to compare. With ``--baseline
DIR`` the same file goes through the ``memwork`` of another checkout too (its
``.venv``), in the same run, the two taking turns.

Usage: python bench/bench_bulk_import.py [--sizes 10000 100000 1000000] [--fsync]
       [--no-consolidate] [--baseline /path/to/another/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import synthetic  # noqa: E402
from tree_code import python_of, require_own_code  # noqa: E402

OUT = ROOT / "bench" / "out"
SEED = 11


def input_file(n: int) -> Path:
    """``bench/out/bulk-<n>.jsonl``, generated once from the seeded generator."""
    path = OUT / f"bulk-{n}.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for episode in synthetic.episodes(SEED, n):
                f.write(json.dumps(episode) + "\n")
        tmp.rename(path)
    return path


def run(n: int, fsync: bool, consolidate: bool = True, tree: Path = ROOT) -> dict[str, float]:
    """Record the file into a fresh store in a child process; its time and peak memory."""
    source = input_file(n)
    store = OUT / f"bulk-store-{n}"
    shutil.rmtree(store, ignore_errors=True)
    env = {**os.environ, "MEMWORK_FSYNC": "1" if fsync else "0"}
    if not consolidate:
        # The heuristic consolidation after every 20th episode re-adds the last 100
        # high-scoring summaries as global rules; with a million distinct summaries its
        # rule archive lookups dominate the time (see docs/PERFORMANCE_JOURNAL.md). Off, the
        # run measures reading, validating, recording and the one commit.
        env["MEMWORK_CONSOLIDATE_EVERY"] = str(10**12)
    start = time.perf_counter()
    memwork = str(tree / ".venv" / "bin" / "memwork")
    child = subprocess.Popen(
        [memwork, "--db", str(store), "record-episode", str(source)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    assert child.stderr is not None
    error = child.stderr.read().decode().strip()
    if child.returncode != 0:
        raise SystemExit(f"record-episode failed ({tree}): {error}")
    shutil.rmtree(store, ignore_errors=True)
    return {
        "episodes": n,
        "input_mb": source.stat().st_size / 2**20,
        "seconds": seconds,
        "cpu": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024,
    }


def main() -> None:
    """Print one table row per size (and per tree, with a baseline)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000])
    parser.add_argument("--fsync", action="store_true", help="fsync on (the default store)")
    parser.add_argument(
        "--no-consolidate", action="store_true", help="no automatic consolidation during the run"
    )
    parser.add_argument("--baseline", type=Path, help="another checkout to run beside this one")
    args = parser.parse_args()
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    for _, tree in trees:
        require_own_code(tree, python_of(tree))
    print("| episodes | memwork | input | wall time | CPU time | peak RSS | CPU per episode |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n in sorted(args.sizes):
        for label, tree in trees:
            r = run(n, args.fsync, consolidate=not args.no_consolidate, tree=tree)
            print(
                f"| {n:,} | {label} | {r['input_mb']:.0f} MB | {r['seconds']:.1f} s | "
                f"{r['cpu']:.1f} s | {r['peak_rss_mb']:,.0f} MB | {r['cpu'] / n * 1e6:.0f} µs |",
                flush=True,
            )


if __name__ == "__main__":
    main()
