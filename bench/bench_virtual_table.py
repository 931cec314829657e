"""Benchmark VirtualTable against Textual's DataTable, headless.

For 1k / 10k / 100k rows it measures, in a fresh app each time:

* first paint: from entering `App.run_test` until the first frame that shows the first
  data row has been composited (includes app start-up, which an empty app also pays:
  see the "empty app" line);
* cursor down / page down: median over `--moves` key presses of the latency from posting
  the key event to the app until the next composited frame (the key handled, the widget
  re-rendered and the screen updated; includes waiting for Textual's refresh timer).
  `Pilot.press` is not used for timing: it sleeps ~60 ms per key waiting for idle.

DataTable (cursor_type="row", rows added with `add_rows` in `on_mount`) is the baseline,
at 1k and 10k rows; pass `--full` to include 100k (it takes ~15 s or more).

Usage: python bench/bench_virtual_table.py [--full] [--moves 50]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import DataTable, Static

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memwork.tui.widgets.virtual_table import Column, Row, VirtualTable  # noqa: E402

SIZE = (120, 40)
MARKER = "episode-000000"  # summary of row 0: the first paint must show it
Record = tuple[str, str, str, str, str]

COLUMNS = [
    Column("id", "ID", width=8, justify="right"),
    Column("agent", "Agent", width=12),
    Column("kind", "Kind", width=10),
    Column("summary", "Summary"),
    Column("tokens", "Tokens", width=8, justify="right"),
]


def make_records(count: int) -> list[Record]:
    kinds = ("observe", "plan", "act", "reflect")
    return [
        (
            str(index),
            f"agent-{index % 13:02d}",
            kinds[index % 4],
            f"episode-{index:06d} did something worth remembering about task {index % 97}",
            str((index * 37) % 5000),
        )
        for index in range(count)
    ]


class RecordSource:
    """A lazy RowSource: a Row is built only when the table asks for it."""

    def __init__(self, records: Sequence[Record]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def row(self, index: int) -> Row:
        record = self._records[index]
        return Row(record, key=record[0])


class TimedVirtualTable(VirtualTable):
    saw_marker = False

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not self.saw_marker and MARKER in strip.text:
            self.saw_marker = True
        return strip


class TimedDataTable(DataTable[str]):
    saw_marker = False

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if not self.saw_marker and MARKER in strip.text:
            self.saw_marker = True
        return strip


class BenchApp(App[None]):
    def __init__(self, kind: str, records: Sequence[Record]) -> None:
        super().__init__()
        self.kind = kind
        self.records = records
        self.first_paint: float | None = None
        self.frame = asyncio.Event()
        self.table: Widget | None = None

    def compose(self) -> ComposeResult:
        if self.kind == "virtual":
            self.table = TimedVirtualTable(COLUMNS, RecordSource(self.records))
        elif self.kind == "datatable":
            self.table = TimedDataTable(cursor_type="row")
        else:
            self.table = Static("empty app")
        yield self.table

    def on_mount(self) -> None:
        if isinstance(self.table, DataTable):
            self.table.add_columns(*(column.label for column in COLUMNS))
            self.table.add_rows(self.records)

    def _display(self, screen: Screen[Any], renderable: Any) -> None:
        # Called with every composited frame (the headless driver just discards it).
        if self.first_paint is None and getattr(self.table, "saw_marker", self.kind == "empty"):
            self.first_paint = perf_counter()
        self.frame.set()
        super()._display(screen, renderable)


async def timed_key(app: BenchApp, pilot: Pilot[None], key: str) -> float:
    await pilot.pause()  # settle: nothing pending before we start the clock
    app.frame.clear()
    start = perf_counter()
    app.post_message(events.Key(key, None))
    await asyncio.wait_for(app.frame.wait(), timeout=60)
    return perf_counter() - start


async def measure(kind: str, records: Sequence[Record], moves: int) -> dict[str, float]:
    app = BenchApp(kind, records)
    gc.collect()  # don't charge a collection of the previous run's garbage to this one
    start = perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        while app.first_paint is None and perf_counter() - start < 120:
            await asyncio.sleep(0.001)
        assert app.first_paint is not None, f"{kind}: no paint showing the first row"
        result = {"first_paint": app.first_paint - start}
        if kind == "empty":
            return result
        await pilot.pause()
        downs = [await timed_key(app, pilot, "down") for _ in range(moves)]
        pages = []
        for _ in range(moves):
            table = app.table
            if getattr(table, "cursor_row", 0) > len(records) - 2 * SIZE[1]:
                # Untimed: back to the top so that every page-down is a real move.
                if isinstance(table, VirtualTable):
                    table.move_cursor(0)
                elif isinstance(table, DataTable):
                    table.move_cursor(row=0)
            pages.append(await timed_key(app, pilot, "pagedown"))
        assert getattr(app.table, "cursor_row", 0) > 0, f"{kind}: cursor did not move"
        result["down"] = statistics.median(downs)
        result["pagedown"] = statistics.median(pages)
    return result


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:9.1f}"


def ratio(baseline: float | None, value: float | None) -> str:
    if baseline is None or value is None or value <= 0:
        return "-"
    return f"{baseline / value:7.1f}x"


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also run DataTable at 100k rows")
    parser.add_argument("--moves", type=int, default=50, help="key presses per median")
    args = parser.parse_args(argv)

    empty = await measure("empty", [], args.moves)
    print(f"empty app (start-up only): first paint {ms(empty['first_paint']).strip()} ms")
    print(f"terminal {SIZE[0]}x{SIZE[1]}, median of {args.moves} key presses, times in ms\n")
    header = (
        f"{'rows':>7} | {'widget':<12} | {'first paint':>11} | {'down':>9} | {'pagedown':>9}"
        f" | {'DT/VT paint':>11} | {'DT/VT down':>10} | {'DT/VT page':>10}"
    )
    print(header)
    print("-" * len(header))
    for count in (1_000, 10_000, 100_000):
        records = make_records(count)
        virtual = await measure("virtual", records, args.moves)
        baseline = None
        if count <= 10_000 or args.full:
            baseline = await measure("datatable", records, args.moves)
        for name, result in (("VirtualTable", virtual), ("DataTable", baseline)):
            if result is None:
                print(f"{count:>7} | {name:<12} | {'(--full)':>11} |")
                continue
            line = (
                f"{count:>7} | {name:<12} | {ms(result['first_paint']):>11} |"
                f" {ms(result['down'])} | {ms(result['pagedown'])}"
            )
            if result is baseline:
                line += (
                    f" | {ratio(baseline['first_paint'], virtual['first_paint']):>11}"
                    f" | {ratio(baseline['down'], virtual['down']):>10}"
                    f" | {ratio(baseline['pagedown'], virtual['pagedown']):>10}"
                )
            print(line, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
