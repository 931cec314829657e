"""Tests for the VirtualTable widget (tui/widgets/virtual_table.py)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.message import Message
from textual.widgets import Input

from memwork.tui.widgets.virtual_table import (
    Column,
    ListRowSource,
    Row,
    RowSource,
    VirtualTable,
    fit_columns,
)

SIZE = (100, 30)
VISIBLE_ROWS = 29  # 30 lines minus the header

COLUMNS = [
    Column("id", "ID", width=6, justify="right"),
    Column("agent", "Agent", width=10),
    Column("summary", "Summary"),
]


def make_rows(count: int, prefix: str = "") -> list[Row]:
    return [
        Row((str(index), f"agent-{index % 7}", f"{prefix}summary {index}"), key=f"k{index}")
        for index in range(count)
    ]


def async_test(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    """Run an async test with asyncio.run (the project has no pytest async plugin)."""

    @functools.wraps(test)
    def wrapper() -> None:
        asyncio.run(test())

    return wrapper


class LazySource:
    """A 'lazily loaded' source: builds rows on demand and counts the calls."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.calls = 0

    def __len__(self) -> int:
        return self.count

    def row(self, index: int) -> Row:
        if not 0 <= index < self.count:
            raise IndexError(index)
        self.calls += 1
        return Row((str(index), f"agent-{index % 7}", f"episode {index}"), key=f"ep-{index}")


class TableApp(App[None]):
    def __init__(self, source: RowSource | None, **table_kwargs: object) -> None:
        super().__init__()
        self.source = source
        self.table_kwargs = table_kwargs
        self.messages: list[Message] = []

    def compose(self) -> ComposeResult:
        yield VirtualTable(COLUMNS, self.source, id="episodes", **self.table_kwargs)  # type: ignore[arg-type]

    @on(VirtualTable.RowSelected, "#episodes")
    def _selected(self, message: VirtualTable.RowSelected) -> None:
        self.messages.append(message)

    @on(VirtualTable.CursorMoved, "#episodes")
    def _moved(self, message: VirtualTable.CursorMoved) -> None:
        self.messages.append(message)


def screen_lines(table: VirtualTable) -> list[str]:
    """The text of every line the table currently shows."""
    return [table.render_line(y).text for y in range(table.scrollable_content_region.height)]


def first_cell(line: str) -> str:
    return line.split()[0]


def visible_ids(table: VirtualTable) -> list[int]:
    return [int(first_cell(line)) for line in screen_lines(table)[1:] if line.strip()]


def selected(app: TableApp) -> list[VirtualTable.RowSelected]:
    return [m for m in app.messages if isinstance(m, VirtualTable.RowSelected)]


def moved(app: TableApp) -> list[VirtualTable.CursorMoved]:
    return [m for m in app.messages if isinstance(m, VirtualTable.CursorMoved)]


@async_test
async def test_rows_render_with_header_truncation_and_justify() -> None:
    rows = make_rows(100)
    rows[0] = Row(("0", "a-very-long-agent-name", "x" * 500), key="k0")
    app = TableApp(ListRowSource(rows))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        lines = screen_lines(table)
        assert len(lines) == 30
        assert lines[0].split() == ["ID", "Agent", "Summary"]
        assert lines[0].index("ID") == 5  # right-justified in a 6-cell column, 1 padding
        # Fixed columns are truncated with an ellipsis; flexible column too.
        assert "a-very-lo…" in lines[1]
        assert lines[1].rstrip().endswith("x…")
        assert lines[2].split() == ["1", "agent-1", "summary", "1"]
        assert visible_ids(table) == list(range(VISIBLE_ROWS))
        # Every line is exactly as wide as the content area (no overflow).
        width = table.scrollable_content_region.width
        assert all(table.render_line(y).cell_length == width for y in range(30))
        # The same rows are on the real screen.
        svg = app.export_screenshot()
        assert "agent-1" in svg and "summary&#160;28" in svg


@async_test
async def test_text_cells_and_control_characters() -> None:
    rows = [
        Row(("1", Text("x" * 40, style="green"), Text("right\nside"))),
        Row(("2", Text("styled", style="bold red"), "line one\nline two\ttab"), key="a"),
    ]
    app = TableApp(ListRowSource(rows))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        lines = screen_lines(table)
        assert "xxxxxxxxx…" in lines[1]
        assert "right side" in lines[1]
        assert "styled" in lines[2]
        assert "line one line two tab" in lines[2]
        assert all("\n" not in line for line in lines)

        # Off the cursor, the Text keeps its own style...
        [styled] = [seg for seg in table.render_line(2) if seg.text.strip() == "styled"]
        assert styled.style is not None
        assert styled.style.bold and styled.style.color is not None
        assert styled.style.color.name == "red"
        # ...on the cursor row the cursor colours win, so the row stays readable.
        await pilot.press("down")
        cursor_style = table.get_component_rich_style("virtual-table--cursor")
        assert {seg.style.color for seg in table.render_line(2) if seg.style} == {
            cursor_style.color
        }


@async_test
async def test_missing_cells_render_blank() -> None:
    app = TableApp(ListRowSource([Row(("1",), key="a")]))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        assert screen_lines(table)[1].split() == ["1"]


@async_test
async def test_cursor_movement_with_keys() -> None:
    app = TableApp(ListRowSource(make_rows(1000)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        assert table.has_focus
        assert table.cursor_row == 0
        await pilot.press("down", "down", "j")
        assert table.cursor_row == 3
        await pilot.press("up", "k")
        assert table.cursor_row == 1
        await pilot.press("up", "up", "up")
        assert table.cursor_row == 0  # clamped at the top

        await pilot.press("pagedown")
        assert table.cursor_row == VISIBLE_ROWS
        assert table.scroll_y == VISIBLE_ROWS  # the view moved a page too
        await pilot.press("pageup")
        assert table.cursor_row == 0
        assert table.scroll_y == 0

        await pilot.press("end")
        assert table.cursor_row == 999
        await pilot.pause()
        assert visible_ids(table)[-1] == 999
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.pause()
        assert visible_ids(table)[0] == 0
        await pilot.press("G")
        assert table.cursor_row == 999
        await pilot.press("g")
        assert table.cursor_row == 0
        assert table.cursor_key == "k0"


@pytest.mark.slow
@async_test
async def test_cursor_stays_visible_when_moving_past_the_edge() -> None:
    app = TableApp(ListRowSource(make_rows(100)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        for _ in range(VISIBLE_ROWS):
            await pilot.press("down")
        await pilot.pause()
        assert table.cursor_row == VISIBLE_ROWS
        assert table.scroll_y == 1  # scrolled by exactly one row
        ids = visible_ids(table)
        assert ids[0] == 1 and ids[-1] == VISIBLE_ROWS
        # Scroll away with the scrollbar/wheel, then move: the cursor is brought back.
        table.scroll_to(y=50, animate=False)
        await pilot.press("down")
        await pilot.pause()
        assert table.cursor_row == VISIBLE_ROWS + 1
        assert table.cursor_row in visible_ids(table)


@async_test
async def test_cursor_row_is_highlighted() -> None:
    app = TableApp(ListRowSource(make_rows(10)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("down")

        def bgcolors(y: int) -> set[object]:
            return {seg.style.bgcolor for seg in table.render_line(y) if seg.style}

        focused_cursor = table.get_component_rich_style("virtual-table--cursor")
        assert bgcolors(2) == {focused_cursor.bgcolor}
        assert bgcolors(1) != bgcolors(2)
        assert bgcolors(3) == bgcolors(1)

        # A dimmer cursor when the table does not have focus.
        table.blur()
        await pilot.pause()
        assert not table.has_focus
        blurred_cursor = table.get_component_rich_style("virtual-table--cursor")
        assert blurred_cursor.bgcolor != focused_cursor.bgcolor
        assert bgcolors(2) == {blurred_cursor.bgcolor}


@async_test
async def test_enter_posts_row_selected_and_moves_post_cursor_moved() -> None:
    app = TableApp(ListRowSource(make_rows(50)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert [(m.index, m.key) for m in moved(app)] == [(1, "k1"), (2, "k2")]
        [message] = selected(app)
        assert (message.index, message.key) == (2, "k2")
        assert message.control is app.query_one(VirtualTable)


@async_test
async def test_no_cursor_moved_when_cursor_does_not_move() -> None:
    app = TableApp(ListRowSource(make_rows(5)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("up", "home")
        await pilot.pause()
        assert moved(app) == []


@async_test
async def test_click_moves_cursor_and_click_on_cursor_selects() -> None:
    app = TableApp(ListRowSource(make_rows(50)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        # Line 0 is the header; line 5 shows row 4.
        await pilot.click(VirtualTable, offset=(10, 5))
        await pilot.pause()
        assert table.cursor_row == 4
        assert selected(app) == []
        await pilot.click(VirtualTable, offset=(10, 0))  # header: no change
        await pilot.pause()
        assert table.cursor_row == 4
        await pilot.pause(0.6)  # let the click chain expire (no double click)
        await pilot.click(VirtualTable, offset=(10, 5))
        await pilot.pause()
        [message] = selected(app)
        assert (message.index, message.key) == (4, "k4")


@async_test
async def test_double_click_selects() -> None:
    app = TableApp(ListRowSource(make_rows(50)))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.double_click(VirtualTable, offset=(10, 3))
        await pilot.pause()
        [message] = selected(app)
        assert (message.index, message.key) == (2, "k2")


@async_test
async def test_mouse_wheel_scrolls_without_moving_cursor() -> None:
    app = TableApp(ListRowSource(make_rows(500)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        for _ in range(3):
            table.post_message(
                events.MouseScrollDown(table, 10, 5, 0, 1, 0, False, False, False, 10, 5)
            )
        await pilot.pause()
        assert table.scroll_y > 0
        assert visible_ids(table)[0] == round(table.scroll_y)
        assert table.cursor_row == 0
        assert visible_ids(table)[-1] == round(table.scroll_y) + VISIBLE_ROWS - 1


@async_test
async def test_set_source_keeps_cursor_on_same_key() -> None:
    app = TableApp(ListRowSource(make_rows(100)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        for _ in range(5):
            await pilot.press("down")
        assert table.cursor_key == "k5"

        # Another process wrote three new rows at the top of the store.
        new_rows = [Row(("n", "new", f"new {i}"), key=f"new{i}") for i in range(3)]
        table.set_source(ListRowSource(new_rows + make_rows(100)), keep_key=table.cursor_key)
        await pilot.pause()
        assert table.cursor_row == 8
        assert table.cursor_key == "k5"
        assert table.row_count == 103
        # The view was at the top and stays there: the new rows are in view, the
        # selected row is three lines lower.
        assert table.scroll_y == 0
        assert "new 0" in screen_lines(table)[1]
        assert "summary 5" in screen_lines(table)[1 + table.cursor_row]
        assert table.new_above == 0
        assert moved(app)[-1].index == 8 and moved(app)[-1].key == "k5"

        # A source without `index_of` is searched too.
        lazy = LazySource(1000)
        table.set_source(ListRowSource(make_rows(3)))
        table.move_cursor(2)
        table.set_source(lazy, keep_key="ep-700")
        await pilot.pause()
        assert table.cursor_row == 700
        assert table.cursor_key == "ep-700"
        assert 700 in visible_ids(table)


@async_test
async def test_set_source_clamps_when_key_is_gone() -> None:
    app = TableApp(ListRowSource(make_rows(100)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        table.move_cursor(90)
        await pilot.pause()
        table.set_source(ListRowSource(make_rows(10, prefix="v2 ")), keep_key="no-such-key")
        await pilot.pause()
        assert table.cursor_row == 9
        assert table.cursor_key == "k9"
        assert visible_ids(table) == list(range(10))
        assert "v2 summary 0" in screen_lines(table)[1]
        # Without keep_key the index is kept (and clamped).
        table.move_cursor(4)
        table.set_source(ListRowSource(make_rows(50)))
        assert table.cursor_row == 4


@async_test
async def test_refresh_rows_for_a_source_changed_in_place() -> None:
    source = LazySource(100)
    app = TableApp(source)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        table.move_cursor(60)
        await pilot.pause()
        key = table.cursor_key
        source.count = 50  # the store shrank
        table.refresh_rows(keep_key=key)
        await pilot.pause()
        assert table.row_count == 50
        assert table.cursor_row == 49
        assert visible_ids(table)[-1] == 49
        source.count = 200
        table.refresh_rows(keep_key=table.cursor_key)
        await pilot.pause()
        assert table.row_count == 200
        assert table.cursor_key == "ep-49"


@async_test
async def test_empty_placeholder() -> None:
    app = TableApp(ListRowSource([]), empty_text="No episodes yet")
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        lines = screen_lines(table)
        assert lines[0].split() == ["ID", "Agent", "Summary"]  # header still shown
        [placeholder_line] = [y for y, line in enumerate(lines) if "No episodes yet" in line]
        assert abs(placeholder_line - 15) <= 1  # vertically centred
        text = lines[placeholder_line]
        left = len(text) - len(text.lstrip())
        right = len(text) - len(text.rstrip())
        assert abs(left - right) <= 1  # horizontally centred
        assert table.cursor_key is None
        await pilot.press("down", "end", "enter")
        await pilot.pause()
        assert table.cursor_row == 0
        assert selected(app) == []

        # Data arrives, then goes away again.
        table.set_source(ListRowSource(make_rows(3)))
        await pilot.pause()
        assert visible_ids(table) == [0, 1, 2]
        table.set_source(ListRowSource([]))
        await pilot.pause()
        assert any("No episodes yet" in line for line in screen_lines(table))
        table.empty_text = "Nothing matches the filter"
        await pilot.pause()
        assert any("Nothing matches the filter" in line for line in screen_lines(table))


@async_test
async def test_no_source_is_empty() -> None:
    app = TableApp(None)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        assert table.row_count == 0
        assert any("No rows" in line for line in screen_lines(table))


@async_test
async def test_flexible_columns_share_width() -> None:
    columns = [
        Column("a", "A", width=10),
        Column("b", "B"),
        Column("c", "C", min_width=5),
    ]

    class FlexApp(App[None]):
        def compose(self) -> ComposeResult:
            yield VirtualTable(columns, ListRowSource([Row(("a", "b" * 200, "c" * 200))]))

    app = FlexApp()
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        width = table.scrollable_content_region.width
        widths = table._column_widths(width)
        assert widths[0] == 10
        assert abs(widths[1] - widths[2]) <= 1
        assert sum(widths) + 2 * len(columns) == width
        line = screen_lines(table)[1]
        assert line.count("…") == 2

        # Narrow terminal: flexible columns keep min_width, the line is cropped.
        await pilot.resize_terminal(20, 10)
        await pilot.pause()
        width = table.scrollable_content_region.width
        assert table._column_widths(width)[2] == 5
        assert table.render_line(1).cell_length == width


@async_test
async def test_other_widgets_keep_their_keys() -> None:
    """The table's j/k/g/G bindings apply only when it has focus."""

    class FormApp(App[None]):
        def compose(self) -> ComposeResult:
            yield Input()
            yield VirtualTable(COLUMNS, ListRowSource(make_rows(10)))

    app = FormApp()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("j", "G")
        assert app.query_one(Input).value == "jG"
        assert app.query_one(VirtualTable).cursor_row == 0


@async_test
async def test_100k_lazy_source() -> None:
    source = LazySource(100_000)
    app = TableApp(source)
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        assert table.row_count == 100_000
        assert visible_ids(table) == list(range(VISIBLE_ROWS))
        # Only the visible rows were materialised, not 100k.
        assert source.calls < 500

        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == 99_999
        assert table.cursor_key == "ep-99999"
        assert visible_ids(table)[-1] == 99_999
        assert screen_lines(table)[0].split() == ["ID", "Agent", "Summary"]  # header stays

        await pilot.press("pageup", "up")
        await pilot.pause()
        assert table.cursor_row == 99_999 - VISIBLE_ROWS - 1
        assert table.cursor_row in visible_ids(table)

        await pilot.press("home")
        await pilot.pause()
        assert table.cursor_row == 0
        assert visible_ids(table)[0] == 0
        await pilot.press("enter")
        await pilot.pause()
        assert selected(app)[-1].key == "ep-0"
        assert source.calls < 2_000


def test_narrow_tables_give_way_so_the_text_column_keeps_its_room() -> None:
    """Shrinkable columns narrow first, then columns are hidden in drop order; the
    flexible text column keeps its min_width as long as anything else can give way."""
    columns = [
        Column("state", "State", width=9, min_width=6),
        Column("confidence", "Confidence", width=15, drop_order=2),
        Column("scope", "Scope", min_width=10, max_width=24, drop_order=1),
        Column("content", "Lesson", min_width=20),
    ]
    wide = fit_columns(columns, 140)
    assert wide[0] == 9 and wide[1] == 15
    assert wide[2] == 24  # capped: the text column gets the rest
    assert wide[3] == 140 - 8 - 9 - 15 - 24
    # 60 cells: narrowing the state column is enough.
    assert fit_columns(columns, 60) == [7, 15, 10, 20]
    # 50 cells: the scope is hidden first (the state keeps its width: it fits again).
    assert fit_columns(columns, 50) == [9, 15, None, 20]
    # 40 cells: the confidence goes too.
    assert fit_columns(columns, 40) == [9, None, None, 27]
    assert fit_columns(columns, 34) == [9, None, None, 21]
    assert fit_columns(columns, 30) == [6, None, None, 20]  # the state narrows last
    # Weights: the text column takes two parts of the room for the scope's one.
    weighted = [
        Column("scope", "Scope", min_width=10, max_width=24),
        Column("content", "Lesson", min_width=22, weight=2),
    ]
    assert fit_columns(weighted, 4 + 48) == [16, 32]
    assert fit_columns(weighted, 4 + 90) == [24, 66]  # the scope stops at its maximum
    # Nothing left to hide: the flexible column keeps its minimum (the line is cropped).
    assert fit_columns(columns, 10)[3] == 20


@async_test
async def test_hidden_columns_leave_the_header_and_the_rows() -> None:
    columns = [
        Column("id", "ID", width=6),
        Column("agent", "Agent", width=10, drop_order=1),
        Column("summary", "Summary", min_width=20),
    ]

    class NarrowApp(App[None]):
        def compose(self) -> ComposeResult:
            yield VirtualTable(columns, ListRowSource(make_rows(3)))

    app = NarrowApp()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        assert list(table.visible_columns()) == ["id", "summary"]
        header, first = screen_lines(table)[:2]
        assert "Agent" not in header and "Summary" in header
        assert "summary 0" in first and "agent-0" not in first
        await pilot.resize_terminal(80, 10)
        await pilot.pause()
        assert list(table.visible_columns()) == ["id", "agent", "summary"]
        assert "agent-0" in screen_lines(table)[1]


def _arrivals(count: int, start: int = 0) -> list[Row]:
    return [Row(("n", "agent", f"arrival {i}"), key=f"new{i}") for i in range(start, count)]


@async_test
async def test_rows_arriving_at_the_top_come_into_view_when_the_view_is_at_the_top() -> None:
    app = TableApp(ListRowSource(make_rows(100)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.pause()
        # More rows arrive than the screen holds: the selection (on the first row) cannot
        # stay on its row and on screen, so it keeps its place: the newest row.
        table.set_source(ListRowSource(_arrivals(40) + make_rows(100)), keep_key=table.cursor_key)
        await pilot.pause()
        assert table.scroll_y == 0
        assert "arrival 0" in screen_lines(table)[1]
        assert table.cursor_row == 0 and table.cursor_key == "new0"
        assert not table.new_above
        assert "new ↑" not in screen_lines(table)[0]


@async_test
async def test_rows_arriving_above_a_scrolled_view_are_counted_in_the_header() -> None:
    app = TableApp(ListRowSource(make_rows(200)))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("pagedown", "pagedown", "down")
        await pilot.pause()
        key, top = table.cursor_key, round(table.scroll_y)
        line = table.cursor_row - top
        table.set_source(ListRowSource(_arrivals(7) + make_rows(200)), keep_key=key)
        await pilot.pause()
        # The selection did not move on screen; the header says what came in above.
        assert table.cursor_key == key and table.cursor_row - round(table.scroll_y) == line
        assert table.new_above == 7
        assert screen_lines(table)[0].rstrip().endswith("7 new ↑")
        # More arrive: the count grows. A refresh that adds nothing keeps it.
        rows = _arrivals(10) + make_rows(200)
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        await pilot.pause()
        assert table.new_above == 10
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        await pilot.pause()
        assert table.new_above == 10
        # Back at the top, the new rows are in view and the marker goes.
        await pilot.press("home")
        await pilot.pause()
        assert table.new_above == 0
        assert "new ↑" not in screen_lines(table)[0]
        assert "arrival 0" in screen_lines(table)[1]


@async_test
async def test_rows_reordered_above_a_scrolled_view_are_not_called_new() -> None:
    rows = make_rows(200)
    app = TableApp(ListRowSource(rows))
    async with app.run_test(size=SIZE) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        # A row from below moves to the top (a lesson reinforced past the others).
        moved_up = [rows[150], *rows[:150], *rows[151:]]
        table.set_source(ListRowSource(moved_up), keep_key=table.cursor_key)
        await pilot.pause()
        assert table.new_above == 0
