"""Search latency of checkouts side by side, each alone in processes of its own.

Runs each tree's own ``bench/bench_recall.py --no-quality --latency N --shapes S`` with
the tree's own interpreter (which must run the tree's own code: see
``bench/tree_code.py``), the trees taking turns, ``--rounds`` times; then prints, per
tree, the median over its runs of ``Memory.search``'s and tantivy's CPU p50 and p95,
the ratio of the two, and its search p50 against the first tree's.

Each run is a fresh process, as the latency goal is measured. Two versions of the
compiled loops or of the search taking turns inside one process measure each with the
caches the other left, which misleads for a change to how a search uses memory (the
journal's entry on the streamed windows, 2026-12-02).

A tree without the cached benchmark stores builds them first (many minutes at 100k
records); ``--share-stores`` links a tree's ``bench/out`` to this checkout's, for trees
whose stores and saved index are of the same format.

Usage: python bench/bench_recall_trees.py TREE [TREE ...] [--size 100000]
       [--shape mixed] [--rounds 3] [--share-stores]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from tree_code import python_of, require_own_code  # noqa: E402


def one_run(tree: Path, size: int, shape: str, out: Path) -> dict[str, float]:
    """One latency run of ``tree``'s bench in a process of its own: CPU p50 and p95 (ms)
    of memwork and tantivy."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")
    }
    command = [str(python_of(tree)), str(tree / "bench" / "bench_recall.py"), "--no-quality"]
    command += ["--latency", str(size), "--shapes", shape, "--json", str(out)]
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, cwd=tree)
    [row] = json.loads(out.read_text())["latency"]
    p50, p95 = row["cpu p50 ms"], row["cpu p95 ms"]
    return {
        "memwork p50": p50["memwork"],
        "memwork p95": p95["memwork"],
        "tantivy p50": p50["tantivy"],
        "tantivy p95": p95["tantivy"],
    }


def share_stores(tree: Path) -> None:
    """``tree``'s ``bench/out`` as a link to this checkout's (left as it is if it exists)."""
    out = tree / "bench" / "out"
    if out.is_symlink() or out.exists():
        return
    out.symlink_to(ROOT / "bench" / "out", target_is_directory=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", type=Path, nargs="+", help="checkouts, the first the reference")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--shape", default="mixed", choices=["mixed", "short", "long"])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--share-stores", action="store_true")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.trees]
    for tree in trees:
        require_own_code(tree, python_of(tree))
        if args.share_stores:
            share_stores(tree)
    runs: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    with tempfile.TemporaryDirectory() as folder:
        for n in range(args.rounds):
            order = trees if n % 2 == 0 else trees[::-1]
            for tree in order:
                found = one_run(tree, args.size, args.shape, Path(folder) / "run.json")
                runs[tree].append(found)
                print(f"round {n + 1}, {tree}: {found}", file=sys.stderr, flush=True)
    print(
        f"\n{args.size:,} records, {args.shape}, {args.rounds} processes a tree (CPU ms, medians)\n"
    )
    print(
        "| tree | memwork p50 / p95 | tantivy p50 / p95 | memwork / tantivy p50 "
        "| p50 against the first |"
    )
    print("|---|---:|---:|---:|---:|")
    first = statistics.median(r["memwork p50"] for r in runs[trees[0]])
    for tree in trees:
        med = {k: statistics.median(r[k] for r in runs[tree]) for k in runs[tree][0]}
        print(
            f"| {tree} | {med['memwork p50']:.3f} / {med['memwork p95']:.3f} "
            f"| {med['tantivy p50']:.3f} / {med['tantivy p95']:.3f} "
            f"| {med['memwork p50'] / med['tantivy p50']:.2f}x | {med['memwork p50'] / first:.3f} |"
        )


if __name__ == "__main__":
    main()
