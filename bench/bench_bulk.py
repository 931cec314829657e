"""Bulk recording throughput as history grows: 2,000-episode batches at 1k / 100k / 1M.

For each size, the cached store (bench/out/n<size>/memwork, built once from the
seeded generator by bench_store.build_memwork) is copied with hard links (a
commit replaces files and never writes into one, so the copy is exact and
cheap), then ``--batches`` batches of 2,000 new episodes are recorded into the
copy, each in one call of ``record_episodes`` (what ``memwork record-episode``
does with a JSON Lines file), fsync on. The figure is the median batch, as
episodes per second, and its ratio to the first size.

Building the 1M store takes a while (about ten minutes here) and 1.3 GB of
disk; it is built at low priority (nice) and kept for later runs.
Usage: python bench/bench_bulk.py [--sizes 1000 100000 1000000] [--batches 5]
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

from core import episodes  # noqa: E402
from core.storage.store import Store  # noqa: E402


def measure(n: int, batches: int) -> dict[str, float]:
    """Median seconds per batch of BATCH episodes recorded into a copy of the n-store."""
    source = build_memwork(n)
    scratch = OUT / "scratch-bulk"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(source, scratch, copy_function=os.link)
    os.environ["MEMWORK_FSYNC"] = "1"
    store = Store(scratch)
    now = datetime(2026, 11, 2, tzinfo=UTC)
    items = synthetic.episodes(99, BATCH * batches)
    times = []
    for _ in range(batches):
        batch = [next(items) for _ in range(BATCH)]
        gc.collect()
        start = time.perf_counter()
        episodes.record_episodes(store, batch, now=now, actor="bench")
        times.append(time.perf_counter() - start)
    shutil.rmtree(scratch, ignore_errors=True)
    median = statistics.median(times)
    return {"n": n, "batch_s": median, "per_s": BATCH / median, "first_s": times[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000, 1_000_000])
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--build-only", action="store_true", help="build the stores and stop")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.build_only:
        for n in args.sizes:
            t0 = time.perf_counter()
            build_memwork(n)
            print(f"[{n}] store ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        return
    rows = []
    for n in args.sizes:
        t0 = time.perf_counter()
        build_memwork(n)
        print(f"[{n}] store ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        rows.append(measure(n, args.batches))
        print(f"[{n}] {rows[-1]}", file=sys.stderr)
    base = rows[0]["batch_s"]
    print(f"\nbatches of {BATCH:,} episodes, one call each, fsync on; median of {args.batches}\n")
    print("| episodes in the store | one batch | episodes / s | vs the first size |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['batch_s']:.2f} s | {r['per_s']:,.0f} "
            f"| {r['batch_s'] / base:.2f}x |"
        )


if __name__ == "__main__":
    main()
