"""First and warm switch to every pane of the workbench, Sessions included, on the demo
store (or a built store of N episodes), headless.

An app is started and left idle (its hidden panes prepared in idle time); then each
pane is shown for the first time, in digit order from 2 to 9 and back to 1 (so the
switch *to* Sessions, the first pane, is measured too), each timed from the digit to
the first frame that shows the pane. Then the same tour again ``--warm`` times: the
warm switch (median) is the baseline each first switch is compared to. The figure
to watch is the worst first / warm ratio (goal: at most 2x).

Usage: python bench/bench_pane_switch.py [--episodes N] [--size 120x40] [--warm 5]
       [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
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
) -> dict[str, tuple[float, float]]:
    """Pane title → (first switch, median warm switch), seconds."""
    app = TimedApp(Store(path), prepare=True)
    start = perf_counter()
    firsts: dict[int, float] = {}
    warm: dict[int, list[float]] = {n: [] for n in TOUR}
    async with app.run_test(size=size) as pilot:
        await until(lambda: app.first_paint is not None, start)
        await until(lambda: app.all_panes_prepared, start)
        await asyncio.sleep(1.0)  # the search index and the last layouts
        await idle(app)
        await pilot.pause()
        for n in TOUR:
            firsts[n] = await switch_to(app, n)
            await idle(app)
            await pilot.pause()
        for _ in range(warm_tours):
            for n in TOUR:
                warm[n].append(await switch_to(app, n))
                await idle(app)
                await pilot.pause()
    return {PANES[n - 1].TITLE: (firsts[n], statistics.median(warm[n])) for n in TOUR}


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
    print("| pane | first switch | warm switch (baseline) | first / warm |")
    print("|---|---:|---:|---:|")
    worst = 0.0
    for title in runs[0]:
        first = statistics.median(r[title][0] for r in runs)
        warm = statistics.median(r[title][1] for r in runs)
        ratio = first / warm if warm else 0.0
        worst = max(worst, ratio)
        print(f"| {title} | {ms(first)} | {ms(warm)} | {ratio:.2f}x |")
    print(f"\nworst first switch / warm switch: {worst:.2f}x (goal: at most 2x)")


if __name__ == "__main__":
    asyncio.run(main())
