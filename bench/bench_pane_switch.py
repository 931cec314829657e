"""First and warm switch to every pane of the workbench, Sessions included, on the demo
store (or a built store of N episodes), headless.

An app is started and left idle (its hidden panes prepared in idle time); then each
pane is shown for the first time, in key order from 2 to 9, W, R and back to 1 (so
the switch *to* Sessions, the first pane, is measured too), each timed from the key to
the first frame that shows the pane. Then the same tour again ``--warm`` times: the
warm switch (median) is the baseline each first switch is compared to. The figure
to watch is the worst first / warm ratio (goal: at most 2x), on the wall clock and in
the UI thread's CPU time; the second holds on a loaded machine, where the wall clock
mostly measures the wait for a core.

Usage: python bench/bench_pane_switch.py [--episodes N] [--size 120x40] [--warm 5]
       [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_tui import TimedApp, idle, ms, switch_to, until  # noqa: E402

from memwork.core.storage.paths import demo_source  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402
from memwork.tui.pane_list import PANES  # noqa: E402

#: The tour: every pane but the first, then back to the first.
TOUR = [*range(2, len(PANES) + 1), 1]


async def tour(
    path: Path, size: tuple[int, int], warm_tours: int
) -> dict[str, tuple[float, float, float, float]]:
    """Pane title → (first switch, median warm switch, and the same two in the UI
    thread's CPU time), seconds."""
    app = TimedApp(Store(path), prepare=True)
    start = perf_counter()
    firsts: dict[int, float] = {}
    warm: dict[int, list[float]] = {n: [] for n in TOUR}
    first_cpu: dict[int, float] = {}
    warm_cpu: dict[int, list[float]] = {n: [] for n in TOUR}
    async with app.run_test(size=size) as pilot:
        await until(lambda: app.first_paint is not None, start)
        await until(lambda: app.all_panes_prepared, start)
        await asyncio.sleep(1.0)  # the search index and the last layouts
        await idle(app)
        await pilot.pause()
        for n in TOUR:
            firsts[n] = await switch_to(app, n)
            first_cpu[n] = app.last_switch_cpu
            await idle(app)
            await pilot.pause()
        for _ in range(warm_tours):
            for n in TOUR:
                warm[n].append(await switch_to(app, n))
                warm_cpu[n].append(app.last_switch_cpu)
                await idle(app)
                await pilot.pause()
    return {
        PANES[n - 1].TITLE: (
            firsts[n],
            statistics.median(warm[n]),
            first_cpu[n],
            statistics.median(warm_cpu[n]),
        )
        for n in TOUR
    }


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--episodes", type=int, help="a built store of N episodes (default: the demo)"
    )
    parser.add_argument("--size", default="120x40", help="terminal size, COLSxLINES")
    parser.add_argument("--warm", type=int, default=5, help="warm tours (median)")
    parser.add_argument("--runs", type=int, default=3, help="fresh apps (median of firsts)")
    args = parser.parse_args(argv)
    width, height = (int(x) for x in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        if args.episodes:
            from bench_store import build

            path, _, _ = build(args.episodes)
            what = f"{args.episodes:,} episodes"
        else:
            path = Path(tmp) / "demo"
            shutil.copytree(demo_source(), path, ignore=shutil.ignore_patterns(".lock"))
            what = "the demo store"
        runs = [await tour(path, (width, height), args.warm) for _ in range(args.runs)]
    print(f"\n{what}, {width}x{height}, headless; median of {args.runs} fresh apps\n")
    print(
        "| pane | first switch | warm switch (baseline) | first / warm"
        " | CPU: first | warm | first / warm |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    worst = worst_cpu = 0.0
    for title in runs[0]:
        first, warm, first_cpu, warm_cpu = (
            statistics.median(r[title][i] for r in runs) for i in range(4)
        )
        ratio = first / warm if warm else 0.0
        ratio_cpu = first_cpu / warm_cpu if warm_cpu else 0.0
        worst, worst_cpu = max(worst, ratio), max(worst_cpu, ratio_cpu)
        print(
            f"| {title} | {ms(first)} | {ms(warm)} | {ratio:.2f}x"
            f" | {ms(first_cpu)} | {ms(warm_cpu)} | {ratio_cpu:.2f}x |"
        )
    print(
        f"\nworst first switch / warm switch: {worst:.2f}x wall,"
        f" {worst_cpu:.2f}x UI-thread CPU (goal: at most 2x)"
    )
    print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
