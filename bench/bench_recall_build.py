"""Building the recall index from a store: what a first search without an index file
waits for (a fresh store, the cache off, Redis, a file that was removed).

Each round is a fresh child process that opens the benchmark store of
``bench/bench_recall.py`` (N records of the ``--shape``, built once into ``bench/out``)
with the cache off and builds the index (``Recall().refresh``); the figure is the
build's CPU time (``time.process_time``), which a busy machine disturbs less than the
wall time. With ``--baseline DIR`` the same store is built by another checkout's code
too (its ``.venv``), the two taking turns, and the ratio of the medians is printed.

``--first-search`` times instead what a long-lived process waits for: the wall time of
the first ``Memory.search`` on the store, cache off, which builds the index the way
such a process does (by a child process, in two parts where there are two cores).

Usage: python bench/bench_recall_build.py [N] [--shape long] [--rounds 6]
       [--first-search] [--baseline /path/to/another/checkout]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall as recall_bench  # noqa: E402
from tree_code import python_of, require_own_code  # noqa: E402

_CHILD = """
import os, sys, time
os.environ["MEMWORK_SEARCH_CACHE"] = "0"
from memwork.core.storage.store import Store
from memwork.core.services.recall.follow import Recall
store = Store(sys.argv[1], create=False)
began = time.process_time()
index = Recall().refresh(store)
print(time.process_time() - began, index.live)
"""

_FIRST_SEARCH = """
import os, sys, time
os.environ["MEMWORK_SEARCH_CACHE"] = "0"
from memwork import Memory
memory = Memory(sys.argv[1])
began = time.perf_counter()
memory.search("deploy canary rollback")
print(time.perf_counter() - began, 0)
"""


def build_cpu(tree: Path, store: Path, code: str = _CHILD) -> tuple[float, int]:
    """Seconds one build of ``store``'s index takes with ``tree``'s code (CPU, or the
    first search's wall time with ``_FIRST_SEARCH``), and how many records it indexed."""
    python = tree / ".venv" / "bin" / "python"
    env = dict(os.environ, MEMWORK_NOW=recall_bench.NOW.isoformat())
    out = subprocess.run(
        [str(python), "-c", code, str(store)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    seconds, records = out.stdout.split()
    return float(seconds), int(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=int, nargs="?", default=10_000)
    parser.add_argument("--shape", default="long", help="long, short or mixed")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--baseline", type=Path, help="another checkout to run beside this one")
    parser.add_argument("--first-search", action="store_true", help="a first search's wall time")
    args = parser.parse_args()
    if args.shape == "mixed":
        store, _ = recall_bench.cached_store(args.records)
    else:
        store, _ = recall_bench.cached_shaped_store(args.records, args.shape)
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    for _, tree in trees:
        require_own_code(tree, python_of(tree))
    times: dict[str, list[float]] = {name: [] for name, _ in trees}
    indexed = 0
    for n in range(args.rounds):
        order = trees if n % 2 == 0 else trees[::-1]
        for name, tree in order:
            seconds, found = build_cpu(tree, store, _FIRST_SEARCH if args.first_search else _CHILD)
            indexed = found or indexed
            times[name].append(seconds)
    what = "first search, wall" if args.first_search else "build CPU"
    counted = f" ({indexed:,} records)" if indexed else ""
    print(f"{args.records:,} {args.shape} notes{counted}, {args.rounds} rounds")
    print(f"| code | {what}, median | range |")
    print("|---|---:|---:|")
    for name, found in times.items():
        spread = f"{min(found):.2f}–{max(found):.2f} s"
        print(f"| {name} | {statistics.median(found):.2f} s | {spread} |")
    if args.baseline:
        ratio = statistics.median(times["this tree"]) / statistics.median(times["baseline"])
        print(f"\nthis tree / baseline: {ratio:.2f}x")


if __name__ == "__main__":
    main()
