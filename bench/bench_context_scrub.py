"""`memwork context` on a store of many lessons: scrubbing only the lines the budget may
show, against scrubbing every line first (as it did before).

A store of N global lessons (budget 2000: a few dozen shown, the rest dropped). Each
run is a fresh process, as an agent's call is (the scrubber's cache of clean lines
lives in a process, so an in-process loop would not see what scrubbing costs). Both
sides run the same wrapper, which calls the CLI's entry point; the baseline's wrapper
first makes every line count as one the budget may show. The sides take turns, run by
run, and the text each prints must be the same.

``--agent-memory`` times the same two sides on the recall benchmark's 100k agent
memory (3,204 lessons; built once into ``bench/out`` by ``bench/bench_recall.py``),
``memwork context`` and ``memwork context --query``.

Usage: python bench/bench_context_scrub.py [N ...] [--runs 15] [--agent-memory]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

WRAPPER = """
import sys
if sys.argv[1] == "every":
    from memwork.core.services.context import build
    def every(sections, budget, shown):  # every line may stay: every line is scrubbed
        for n, section in enumerate(sections):
            for i in range(len(section.lines)):
                shown(n, i)
    build.could_stay = every
sys.argv = ["memwork", "--db", sys.argv[2], "context", *sys.argv[3:]]
from memwork.core.doors.cli.main import entry
entry()
"""


def _store(path: Path, count: int) -> None:
    from bench_lessons_budget import fill

    from memwork.core.storage.store import Store

    store = Store(path)
    fill(store, count)
    store.close()


def _run(side: str, db: Path, *extra: str) -> tuple[float, float, str]:
    """Wall and CPU seconds of one process, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, side, str(db), *extra],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "MEMWORK_NOW": "2026-11-01T12:00:00+00:00"},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done.stdout


def _sides(db: Path, runs: int, *extra: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median (wall, CPU) ms of the baseline and of the code as it is, taking turns."""
    _run("shown", db, *extra)  # warms the page cache
    times: dict[str, list[tuple[float, float]]] = {"every": [], "shown": []}
    printed: dict[str, set[str]] = {"every": set(), "shown": set()}
    for _ in range(runs):
        for side in ("every", "shown"):
            wall, cpu, out = _run(side, db, *extra)
            times[side].append((wall, cpu))
            printed[side].add(out)
    if printed["every"] != printed["shown"] or len(printed["shown"]) != 1:
        raise SystemExit("the two sides printed different contexts")
    every, shown = (
        (
            statistics.median(t[0] for t in times[side]) * 1000,
            statistics.median(t[1] for t in times[side]) * 1000,
        )
        for side in ("every", "shown")
    )
    return every, shown


def _row(label: str, every: tuple[float, float], shown: tuple[float, float]) -> None:
    (w0, c0), (w1, c1) = every, shown
    print(
        f"| {label} | {w0:.0f} ms wall, {c0:.0f} ms CPU | {w1:.0f} ms wall, "
        f"{c1:.0f} ms CPU | {w1 / w0:.2f}x wall, {c1 / c0:.2f}x CPU |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[500, 3000])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--agent-memory", action="store_true")
    args = parser.parse_args()
    print("| store | every line scrubbed (before) | lines the budget may show | ratio |")
    print("|---|---:|---:|---:|")
    if args.agent_memory:
        import bench_recall

        db, _ = bench_recall.cached_store(100_000)
        _row("100k agent memory", *_sides(db, args.runs))
        query = ("--query", "deploy rollback failed")
        _row("100k agent memory, `--query`", *_sides(db, args.runs, *query))
        return
    for count in args.sizes:
        work = Path(tempfile.mkdtemp())
        try:
            db = work / "db"
            _store(db, count)
            _row(f"{count:,} lessons", *_sides(db, args.runs))
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
