"""Benchmark the workbench headless on stores of 1k / 10k / 100k episodes.

For each size, in a fresh app (``App.run_test(size=(120, 40))``):

* first paint: from entering ``run_test`` until the first composited frame that
  shows the Sessions pane (app start-up included);
* switch, cold: pressing "2" right after the first paint (while the search index
  is still being built in the background) until the first frame in which the
  Episodes table has painted episode rows;
* all loaded: from that key press until the Episodes pane holds the compact
  index of every episode (it loads in the background, newest first);
* switch, warm: "1" then "2" again once everything is loaded, median of 10;
* cursor down / page down on the Episodes table: median over ``--moves`` key
  presses of the latency from posting the key to the next composited frame
  (as in bench_virtual_table.py);
* search: the app's own ``search_index`` once built (time to build it, from
  start-up), then ``SearchIndex.search`` timed for every prefix of a few
  queries from two characters on, as the search box does on each keystroke
  (median, p95, max);
* first switch per pane: in a second fresh app, once it is idle (the hidden
  panes were loaded and laid out after the first paint), each pane's digit from
  the Sessions pane, until the first frame that shows that pane; then the same
  switches again, warm (median of ``WARM_SWITCHES``: a single slow frame, a
  collection or the machine's other work, moves a median of three). The same
  with ``prepare=False`` (panes loaded and laid out on their first show) for
  comparison.

Stores are built (and cached under bench/out/) by bench_store.py's ``build(n)``.
Usage: python bench/bench_tui.py [--sizes 1000 10000 100000] [--moves 50] [--warm PANE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import statistics
import sys
from pathlib import Path
from time import perf_counter, thread_time
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_store import build  # noqa: E402
from textual import events  # noqa: E402
from textual.screen import Screen  # noqa: E402
from textual.strip import Strip  # noqa: E402

from memwork.core.storage.store import Store  # noqa: E402
from memwork.tui.app import MemworkApp  # noqa: E402
from memwork.tui.pane_list import PANES, pane_key  # noqa: E402
from memwork.tui.panes.episodes import EpisodesPane  # noqa: E402
from memwork.tui.panes.sessions import SessionsPane  # noqa: E402
from memwork.tui.screens.search import MIN_QUERY  # noqa: E402
from memwork.tui.widgets.virtual_table import VirtualTable  # noqa: E402

SIZE = (120, 40)
QUERIES = ["deploy rollback", "timeout", "jwt expiry", "scheduler race", "migrate bucket"]
TIMEOUT = 120.0
WARM_SWITCHES = 9


class TimedApp(MemworkApp):
    """The workbench, noting every composited frame."""

    # Relative CSS paths resolve against the defining module: point at tui/ explicitly.
    CSS_PATH = [ROOT / "tui" / path for path in MemworkApp.CSS_PATH]  # type: ignore[operator]

    def __init__(self, store: Store, prepare: bool = True) -> None:
        super().__init__(store, poll=False, prepare=prepare)
        self.first_paint: float | None = None
        self.frame = asyncio.Event()
        self.rows_painted = False
        self.last_switch_cpu = 0.0

    def _display(self, screen: Screen[Any], renderable: Any) -> None:
        # Called with every composited frame (the headless driver discards it).
        if self.first_paint is None and self._sessions_shown(screen):
            self.first_paint = perf_counter()
        self.frame.set()
        super()._display(screen, renderable)

    def _sessions_shown(self, screen: Screen[Any]) -> bool:
        try:
            pane = self.query_one(SessionsPane)
            return screen.find_widget(pane).region.area > 0
        except Exception:  # not composed or not placed yet
            return False

    def watch_episode_rows(self) -> None:
        """Flag the first time the Episodes table draws a row of episodes (the table may
        not exist yet: a hidden pane is composed when first shown or prepared)."""
        global _watching
        _watching = self
        if getattr(VirtualTable.render_line, "watched", False):
            return
        original = VirtualTable.render_line

        def render_line(table: VirtualTable, y: int) -> Strip:
            strip = original(table, y)
            app = _watching
            if app is not None and table.id == "episodes-table" and table.app is app:
                if y >= 1 and table.row_count and "#" in strip.text:
                    app.rows_painted = True
            return strip

        render_line.watched = True  # type: ignore[attr-defined]
        VirtualTable.render_line = render_line  # type: ignore[method-assign]


#: The app whose Episodes table :meth:`TimedApp.watch_episode_rows` watches.
_watching: TimedApp | None = None


async def next_frame(app: TimedApp) -> None:
    app.frame.clear()
    await asyncio.wait_for(app.frame.wait(), timeout=TIMEOUT)


async def timed_key(app: TimedApp, pilot: Any, key: str) -> float:
    """Seconds from posting ``key`` until the next composited frame."""
    await pilot.pause()
    app.frame.clear()
    start = perf_counter()
    app.post_message(events.Key(key, key if len(key) == 1 else None))
    await asyncio.wait_for(app.frame.wait(), timeout=TIMEOUT)
    return perf_counter() - start


async def switch_to_episodes(app: TimedApp) -> float:
    """Seconds from pressing "2" until a frame shows the Episodes table with rows."""
    app.rows_painted = False
    start = perf_counter()
    app.frame.clear()
    app.post_message(events.Key("2", "2"))
    while True:
        await asyncio.wait_for(app.frame.wait(), timeout=TIMEOUT)
        app.frame.clear()
        if app.rows_painted:
            return perf_counter() - start
        if perf_counter() - start > TIMEOUT:
            raise TimeoutError("the Episodes pane never painted its rows")


async def idle(app: TimedApp) -> None:
    """Wait for every worker (a superseded, cancelled one is not an error here)."""
    await asyncio.gather(*[worker.wait() for worker in app.workers], return_exceptions=True)


async def until(predicate: Any, start: float) -> float:
    while not predicate():
        if perf_counter() - start > TIMEOUT:
            raise TimeoutError("gave up waiting")
        await asyncio.sleep(0.002)
    return perf_counter() - start


async def measure(path: Path, n: int, moves: int) -> dict[str, Any]:
    gc.collect()
    app = TimedApp(Store(path))
    start = perf_counter()
    result: dict[str, Any] = {"n": n}
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.first_paint is not None, start)
        assert app.first_paint is not None
        result["first_paint"] = app.first_paint - start
        app.watch_episode_rows()
        pane = app.pane(EpisodesPane.PANE_ID)
        pressed = perf_counter()
        result["switch_cold"] = await switch_to_episodes(app)
        result["all_loaded"] = await until(lambda: pane.complete, pressed)
        await until(lambda: app.search_index is not None, start)
        result["index_ready"] = perf_counter() - start
        await idle(app)
        await pilot.pause()
        assert len(pane.all_rows) == n, (len(pane.all_rows), n)

        warm = []
        for _ in range(10):
            await timed_key(app, pilot, "1")
            await pilot.pause()
            warm.append(await switch_to_episodes(app))
        result["switch_warm"] = statistics.median(warm)

        table = app.query_one("#episodes-table", VirtualTable)
        table.focus()
        await pilot.pause()
        downs = [await timed_key(app, pilot, "down") for _ in range(moves)]
        pages = []
        for _ in range(moves):
            if table.cursor_row > table.row_count - 2 * SIZE[1]:
                table.move_cursor(0)  # untimed: every page-down must be a real move
            pages.append(await timed_key(app, pilot, "pagedown"))
        assert table.cursor_row > 0
        result["down"] = statistics.median(downs)
        result["pagedown"] = statistics.median(pages)
        await idle(app)
        index = app.search_index
    assert index is not None
    keystrokes = []
    for query in QUERIES:
        # What the search box does: it starts searching at its second character.
        for end in range(MIN_QUERY, len(query) + 1):
            t0 = perf_counter()
            index.search(query[:end], limit=20)
            keystrokes.append(perf_counter() - t0)
    keystrokes.sort()
    result["search_records"] = len(index)
    result["search_median"] = statistics.median(keystrokes)
    result["search_p95"] = keystrokes[int(0.95 * (len(keystrokes) - 1))]
    result["search_max"] = keystrokes[-1]
    return result


async def switch_to(app: TimedApp, n: int) -> float:
    """Seconds from pressing pane ``n``'s key (its digit, or its letter past the ninth)
    until a frame shows that pane."""
    pane = app.pane(PANES[n - 1].PANE_ID)
    key = pane_key(n, PANES[n - 1])
    start = perf_counter()
    cpu = thread_time()
    app.frame.clear()  # before the key: its frame can come before we wait for one
    app.post_message(events.Key(key, key))
    while True:
        # A frame can show the pane before the layout says so, and none come after it
        # once the screen is still: look again without one now and then.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(app.frame.wait(), timeout=0.05)
        app.frame.clear()
        try:
            shown = app.screen.find_widget(pane).region.area > 0
        except Exception:  # not placed yet
            shown = False
        if shown:
            # The UI thread's own CPU time too: on a loaded machine the wall clock
            # mostly measures waiting for a core.
            app.last_switch_cpu = thread_time() - cpu
            return perf_counter() - start
        if perf_counter() - start > TIMEOUT:
            raise TimeoutError(f"pane {n} never showed")


async def first_switches(path: Path, prepare: bool) -> dict[str, tuple[float, float]]:
    """Pane title → (first switch, warm switch) in seconds, from an idle app."""
    gc.collect()
    app = TimedApp(Store(path), prepare=prepare)
    out: dict[str, tuple[float, float]] = {}
    start = perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.first_paint is not None, start)
        # Idle: every pane prepared (when preparing) and every worker done.
        await asyncio.sleep(1.5)
        await until(lambda: app.search_index is not None, start)
        if prepare:
            await until(lambda: app.all_panes_prepared, start)
        await idle(app)
        await pilot.pause()
        firsts = {}
        for n in range(2, len(PANES) + 1):
            firsts[n] = await switch_to(app, n)
            await idle(app)
            await pilot.pause()
            await switch_to(app, 1)
            await idle(app)
            await pilot.pause()
        for n in range(2, len(PANES) + 1):
            warm = []
            for _ in range(WARM_SWITCHES):
                warm.append(await switch_to(app, n))
                await pilot.pause()
                await switch_to(app, 1)
                await pilot.pause()
            out[PANES[n - 1].TITLE] = (firsts[n], statistics.median(warm))
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


async def warm_switches(path: Path, pane_id: str, count: int) -> list[float]:
    """``count`` warm switches to one pane, each from the Sessions pane, in one idle app:
    the whole spread, where a median of a few hides or shows one slow frame."""
    app = TimedApp(Store(path), prepare=True)
    n = next(i for i, pane in enumerate(PANES, 1) if pane.PANE_ID == pane_id)
    start = perf_counter()
    times = []
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.first_paint is not None, start)
        await until(lambda: app.all_panes_prepared, start)
        await idle(app)
        for _ in range(2):  # shown once before: warm from here on
            await switch_to(app, n)
            await idle(app)
            await switch_to(app, 1)
            await idle(app)
        for _ in range(count):
            times.append(await switch_to(app, n))
            await pilot.pause()
            await switch_to(app, 1)
            await pilot.pause()
    return sorted(times)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--moves", type=int, default=50, help="key presses per median")
    parser.add_argument(
        "--warm", metavar="PANE", help="only: 20 warm switches to this pane (say: context)"
    )
    args = parser.parse_args(argv)
    if args.warm:
        for n in args.sizes:
            times = await warm_switches(build(n)[0], args.warm, 20)
            shown = ", ".join(f"{t * 1000:.0f}" for t in times)
            median = ms(statistics.median(times))
            print(f"{n:,} episodes, {args.warm}: median {median} ({shown} ms)")
        return
    rows = []
    for n in args.sizes:
        t0 = perf_counter()
        path, _, _ = build(n)
        print(f"[{n}] store ready in {perf_counter() - t0:.1f} s", file=sys.stderr)
        rows.append(await measure(path, n, args.moves))
        rows[-1]["panes"] = await first_switches(path, prepare=True)
        rows[-1]["panes_unprepared"] = await first_switches(path, prepare=False)
        print(f"[{n}] {rows[-1]}", file=sys.stderr)
    print(f"\nterminal {SIZE[0]}x{SIZE[1]}, headless; key latencies are medians of {args.moves}\n")
    print(
        "| episodes | first paint | switch to Episodes (cold) | all loaded | switch (warm) "
        "| cursor down | page down |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']:,} | {ms(r['first_paint'])} | {ms(r['switch_cold'])} "
            f"| {ms(r['all_loaded'])} | {ms(r['switch_warm'])} | {ms(r['down'])} "
            f"| {ms(r['pagedown'])} |"
        )
    print(
        "\n| episodes | records indexed | index ready after | search per keystroke: median "
        "| p95 | max |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['n']:,} | {r['search_records']:,} | {ms(r['index_ready'])} "
            f"| {ms(r['search_median'])} | {ms(r['search_p95'])} | {ms(r['search_max'])} |"
        )
    print_panes(rows)


def print_panes(rows: list[dict[str, Any]]) -> None:
    """First vs warm switch per pane: prepared in idle time (and, for comparison, not)."""
    titles = list(rows[0]["panes"])
    print(
        "\nfirst switch / warm switch per pane, from an idle app (prepared in idle time; "
        "in brackets: not prepared)\n"
    )
    print("| pane | " + " | ".join(f"{r['n']:,} episodes" for r in rows) + " |")
    print("|---|" + "---:|" * len(rows))
    for title in titles:
        cells = []
        for r in rows:
            first, warm = r["panes"][title]
            cold = r["panes_unprepared"][title][0]
            cells.append(f"{ms(first)} / {ms(warm)} ({ms(cold)})")
        print(f"| {title} | " + " | ".join(cells) + " |")
    worst = max(
        r["panes"][t][0] / r["panes"][t][1] for r in rows for t in titles if r["panes"][t][1]
    )
    print(f"\nworst first switch / warm switch: {worst:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
