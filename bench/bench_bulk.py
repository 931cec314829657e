"""Bulk recording throughput as history grows: 2,000-episode batches at 1k / 100k / 1M.

For each size, the cached store (bench/out/n<size>/memwork, built once from the
seeded generator by bench_store.build_memwork) is copied with hard links (table
files are only ever replaced, so the copy is exact and cheap; the log, which is
appended to, is copied), then ``--batches`` batches of 2,000 new episodes are recorded into each
copy, each in one call of ``record_episodes`` (what ``memwork record-episode``
does with a JSON Lines file), fsync on, the sizes taking turns batch by batch.
The figure is the median batch after the first (which also reads what the
process has not seen yet), as episodes per second, and its ratio to the first
size in the same round: median and range over the rounds.

Building the 1M store takes a while (about ten minutes here) and 1.3 GB of
disk; it is built at low priority (nice) and kept for later runs.
Usage: python bench/bench_bulk.py [--sizes 1000 100000 1000000] [--batches 7]
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import synthetic  # noqa: E402
from bench_store import BATCH, OUT, build_memwork  # noqa: E402

from memwork.core.domain import episodes  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402


def _link_or_copy(source: str, target: str) -> None:
    # The log is appended to in place: it is copied. A table file is only ever replaced
    # (a fold renames a new one in), so a hard link is an exact, cheap copy.
    if os.path.basename(source) == "store.log":
        shutil.copy2(source, target)
    else:
        os.link(source, target)


def _copy(n: int) -> Path:
    """A copy of the cached n-store: table files hard-linked, the log copied."""
    source = build_memwork(n)
    scratch = OUT / f"scratch-bulk-{n}"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(source, scratch, copy_function=_link_or_copy)
    return scratch


def measure(sizes: list[int], batches: int) -> dict[int, list[float]]:
    """Seconds of each batch of BATCH episodes, per store size.

    The sizes take turns batch by batch, in one process, so a machine that gets
    busier or quieter during the run weighs on every size alike; each store gets
    the same episodes.
    """
    os.environ["MEMWORK_FSYNC"] = "1"
    stores = {n: Store(_copy(n)) for n in sizes}
    feeds = {n: synthetic.episodes(99, BATCH * batches) for n in sizes}
    now = datetime(2026, 11, 2, tzinfo=UTC)
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(batches):
        for n in sizes:
            batch = [next(feeds[n]) for _ in range(BATCH)]
            gc.collect()
            start = time.perf_counter()
            episodes.record_episodes(stores[n], batch, now=now, actor="bench")
            times[n].append(time.perf_counter() - start)
        print(f"  { ({n: round(t[-1], 2) for n, t in times.items()}) }", file=sys.stderr)
    for n in sizes:
        shutil.rmtree(OUT / f"scratch-bulk-{n}", ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000, 1_000_000])
    parser.add_argument("--batches", type=int, default=7)
    parser.add_argument("--build-only", action="store_true", help="build the stores and stop")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for n in args.sizes:
        t0 = time.perf_counter()
        build_memwork(n)
        print(f"[{n}] store ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.build_only:
        return
    times = measure(args.sizes, args.batches)
    base = args.sizes[0]
    print(
        f"\nbatches of {BATCH:,} episodes, one call each, fsync on; {args.batches} rounds, "
        "the sizes taking turns; the first batch of a process (it reads the store's "
        "indexes) apart\n"
    )
    print(
        "| episodes in the store | one batch, median | episodes / s "
        "| vs the first size, median (range) of rounds | first batch |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n in args.sizes:
        median = statistics.median(times[n][1:])
        ratios = sorted(t / b for t, b in zip(times[n][1:], times[base][1:], strict=True))
        print(
            f"| {n:,} | {median:.2f} s | {BATCH / median:,.0f} "
            f"| {statistics.median(ratios):.2f}x ({ratios[0]:.2f}–{ratios[-1]:.2f}) "
            f"| {times[n][0]:.2f} s |"
        )


if __name__ == "__main__":
    main()
