"""A virtual table: a Line API widget that renders only the rows on screen.

`VirtualTable` displays rows from a `RowSource` (anything with `__len__` and
`row(index)`), so a caller can back it with a lazily loaded list of 100,000
records without creating a widget, or even a renderable, per row. Only the
visible lines are rendered, and rendered lines are kept in an LRU cache keyed by
(row index, width, cursor state, focus state).

Rows that arrive while the table is shown never hide above the view: a table
at its top stays at its top (the newest rows come into view), and a table
scrolled down keeps its selection where it was and says in its header how many
rows arrived above (``3 new ↑``) until the view is back at the top.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .row_filter import FilteredRows
from .rows import CellType, Choices, ListRowSource, Row, RowSource

__all__ = [
    "CellType",
    "Choices",
    "Column",
    "fit_columns",
    "ListRowSource",
    "Row",
    "RowSource",
    "VirtualTable",
]


Justify = Literal["left", "right"]

ELLIPSIS = "…"
CELL_PADDING = 1
"""Blank cells on each side of every column."""

ARRIVALS_COUNTED = 400
"""Above this many rows over the view, arrivals are counted by how far the view moved
(building every row to read its key would cost more than the count is worth)."""

# Control characters (newlines, tabs, ...) would break a single-line strip; each one is
# replaced by one space so the cell keeps its length (and a Text keeps its spans).
_CONTROL_TO_SPACE = {code: " " for code in (*range(0x20), 0x7F)}


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a `VirtualTable`.

    When the table is narrower than its columns want, it gives way in this order,
    so the main text column keeps its room: fixed columns that allow it narrow to
    their `min_width`, then columns with a `drop_order` are hidden (1 first); only
    when nothing more can give way is the line cropped on the right.
    """

    key: str
    """Identifier of the column."""
    label: str | Choices
    """Text shown in the header (`Choices`: a shorter label for a narrow column)."""
    width: int | None = None
    """Width in cells, or `None` for a flexible column that shares the remaining width."""
    justify: Justify = "left"
    """Horizontal alignment of the cells (and the header label)."""
    min_width: int | None = None
    """A flexible column's minimum width (3 when `None`); a fixed column may narrow to
    it when the table is short of room (`None`: a fixed column never narrows)."""
    max_width: int | None = None
    """A flexible column never grows past this; the other flexible columns get the rest."""
    weight: int = 1
    """A flexible column's share of the room, relative to the other flexible columns."""
    drop_order: int = 0
    """Hidden when the table is too narrow, lowest first (0: never hidden)."""


FLEX_MIN_WIDTH = 3
"""The minimum width of a flexible column without its own `min_width`."""


def fit_columns(columns: Sequence[Column], width: int) -> list[int | None]:
    """Widths (without padding) of the columns in a line of `width` cells; `None` for a
    column hidden to make room (see `Column`)."""
    shown = list(range(len(columns)))
    while True:
        fixed = [i for i in shown if columns[i].width is not None]
        flexible = [i for i in shown if columns[i].width is None]
        room = width - 2 * CELL_PADDING * len(shown)
        flex_min = sum(_flex_min(columns[i]) for i in flexible)
        short = sum(columns[i].width or 0 for i in fixed) + flex_min - room
        slack: dict[int, int] = {}
        for i in fixed:
            column = columns[i]
            if column.min_width is not None:
                slack[i] = (column.width or 0) - min(column.width or 0, column.min_width)
        droppable = [i for i in shown if columns[i].drop_order > 0]
        if short <= sum(slack.values()) or not droppable:
            break
        # Hide the column that goes first (the rightmost among equals) and try again.
        shown.remove(min(droppable, key=lambda i: (columns[i].drop_order, -i)))
    widths: list[int | None] = [None] * len(columns)
    for i in fixed:
        widths[i] = columns[i].width
    # Narrow the shrinkable fixed columns, the first to be dropped first.
    for i in sorted(slack, key=lambda i: (columns[i].drop_order or 10**6, -i)):
        if short <= 0:
            break
        cut = min(slack[i], short)
        widths[i] = (columns[i].width or 0) - cut
        short -= cut
    left = room - sum(widths[i] or 0 for i in fixed)
    _share(columns, flexible, left, widths)
    return widths


def _flex_min(column: Column) -> int:
    return FLEX_MIN_WIDTH if column.min_width is None else column.min_width


def _share(
    columns: Sequence[Column], flexible: list[int], left: int, widths: list[int | None]
) -> None:
    """Share `left` cells among the flexible columns by weight, within their bounds: a
    column whose minimum is above its part (or maximum below it) is set to that bound
    and the others share what remains."""
    pending = list(flexible)
    while pending:
        room = max(0, left)
        total = sum(columns[i].weight for i in pending)
        parts = {i: room * columns[i].weight // total for i in pending}
        bounded: dict[int, int] = {}
        for i in pending:
            column = columns[i]
            if _flex_min(column) > parts[i]:
                bounded[i] = _flex_min(column)
            elif column.max_width is not None and column.max_width < parts[i]:
                bounded[i] = column.max_width
        if not bounded:
            # Cells lost to rounding go to the first columns, one each.
            for position, i in enumerate(pending):
                widths[i] = parts[i] + (position < room - sum(parts.values()))
            return
        for i, value in bounded.items():
            widths[i] = value
            left -= value
            pending.remove(i)


def _fit_str(text: str, width: int, justify: Justify) -> str:
    """Truncate (with an ellipsis) or pad a string to exactly `width` cells."""
    if width <= 0:
        return ""
    text = text.translate(_CONTROL_TO_SPACE)
    length = len(text) if text.isascii() else cell_len(text)
    if length > width:
        text = set_cell_size(text, width - 1) + ELLIPSIS
        length = width
    padding = " " * (width - length)
    return padding + text if justify == "right" else text + padding


def _choose(cell: Choices, width: int) -> str | Text:
    """The widest of a cell's ways of writing that fits ``width`` cells (else the last)."""
    for option in cell.options:
        if cell_len(option.plain if isinstance(option, Text) else option) <= width:
            return option
    return cell.options[-1] if cell.options else ""


def _fit_text(text: Text, width: int, justify: Justify) -> Text:
    """Truncate (with an ellipsis) or pad a copy of a Rich Text to exactly `width` cells."""
    text = text.copy()
    plain = text.plain
    sanitized = plain.translate(_CONTROL_TO_SPACE)
    if sanitized != plain:
        text.plain = sanitized
    text.no_wrap = True
    text.overflow = "ellipsis"
    text.end = ""
    if width <= 0:
        return Text("")
    text.align(justify, width)
    return text


class VirtualTable(ScrollView, can_focus=True):
    """A read-only table that renders only its visible rows.

    Rows come from a `RowSource`; swap it with `set_source`. The first line is a
    header that does not scroll. The cursor is a row index (`cursor_row`).
    """

    ALLOW_SELECT = False  # No text selection: a click moves the cursor.

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Cursor up", show=False),
        Binding("down,j", "cursor_down", "Cursor down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home,g", "first", "First row", show=False),
        Binding("end,G", "last", "Last row", show=False),
        Binding("enter", "select_cursor", "Select", show=False),
        Binding("escape", "clear_filter", "Clear the filter", show=False),
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | up, k | Move the cursor up one row. |
    | down, j | Move the cursor down one row. |
    | pageup | Move the cursor up one page. |
    | pagedown | Move the cursor down one page. |
    | home, g | Move the cursor to the first row. |
    | end, G | Move the cursor to the last row. |
    | enter | Select the row under the cursor (posts `RowSelected`). |
    | escape | Clear the filter (when one is set; else the key goes on). |
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "virtual-table--header",
        "virtual-table--cursor",
        "virtual-table--empty",
        "virtual-table--new-above",
        "virtual-table--filter",
    }
    """
    | Class | Description |
    | :- | :- |
    | `virtual-table--header` | Target the header line. |
    | `virtual-table--cursor` | Target the cursor row (styled dimmer when not focused). |
    | `virtual-table--empty` | Target the placeholder shown when there are no rows. |
    | `virtual-table--new-above` | Target the "N new ↑" marker in the header. |
    | `virtual-table--filter` | Target the filter's marker in the header. |
    """

    DEFAULT_CSS = """
    VirtualTable {
        height: 1fr;
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        overflow-y: auto;

        & > .virtual-table--header {
            background: $panel;
            color: $text-accent;
            text-style: bold;
        }
        & > .virtual-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
            text-style: $block-cursor-blurred-text-style;
        }
        & > .virtual-table--empty {
            color: $text-muted;
            text-style: italic;
        }
        & > .virtual-table--filter {
            background: $warning 70%;
            color: $text;
            text-style: bold;
        }
        & > .virtual-table--new-above {
            background: $accent;
            color: $text;
            text-style: bold;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .virtual-table--cursor {
                background: $block-cursor-background;
                color: $block-cursor-foreground;
                text-style: $block-cursor-text-style;
            }
        }
        &:ansi > .virtual-table--header {
            background: ansi_bright_blue;
            color: ansi_default;
        }
    }
    """

    cursor_row: reactive[int] = reactive(0, repaint=False, init=False)
    """Index of the row under the cursor (0 when the table is empty)."""

    empty_text: reactive[str] = reactive("No rows")
    """Placeholder shown (centred) when there are no rows."""

    new_above: reactive[int] = reactive(0, init=False)
    """Rows that arrived above the view since it was last at the top (shown in the
    header as ``N new ↑``; back to 0 once the view reaches the top)."""

    @dataclass
    class CursorMoved(Message):
        """Posted when the cursor moves to another row.

        Handle with `on_virtual_table_cursor_moved` or `@on(VirtualTable.CursorMoved)`.
        """

        virtual_table: VirtualTable
        """The table that posted the message."""
        index: int
        """Index of the row under the cursor."""
        key: str | None
        """Key of the row under the cursor (`None` if the row has no key)."""

        @property
        def control(self) -> VirtualTable:
            """Alias for `virtual_table`."""
            return self.virtual_table

    @dataclass
    class RowSelected(Message):
        """Posted when a row is selected (enter, or a click on the cursor row).

        Handle with `on_virtual_table_row_selected` or `@on(VirtualTable.RowSelected)`.
        """

        virtual_table: VirtualTable
        """The table that posted the message."""
        index: int
        """Index of the selected row."""
        key: str | None
        """Key of the selected row (`None` if the row has no key)."""

        @property
        def control(self) -> VirtualTable:
            """Alias for `virtual_table`."""
            return self.virtual_table

    def __init__(
        self,
        columns: Sequence[Column],
        source: RowSource | None = None,
        *,
        empty_text: str = "No rows",
        cache_size: int = 512,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's widget convention
        classes: str | None = None,
        disabled: bool = False,
    ) -> None:
        """Create a virtual table.

        Args:
            columns: The columns, left to right.
            source: The rows, or `None` for an empty table.
            empty_text: Placeholder shown (centred) when there are no rows.
            cache_size: Number of rendered lines kept in the LRU cache.
            name: The name of the widget.
            id: The ID of the widget in the DOM.
            classes: The CSS classes of the widget.
            disabled: Whether the widget is disabled.
        """
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        if not columns:
            raise ValueError("VirtualTable needs at least one column")
        self._columns: tuple[Column, ...] = tuple(columns)
        self._source: RowSource = source if source is not None else ListRowSource()
        self._base: RowSource = self._source  # the rows before the filter
        self._filter = ""
        self._row_count = len(self._source)
        self.set_reactive(VirtualTable.empty_text, empty_text)
        self._line_cache: LRUCache[tuple[int, int, bool, bool], Strip] = LRUCache(cache_size)
        self._header_cache: dict[int, Strip] = {}
        self._widths_cache: tuple[int, list[int | None]] | None = None
        self.virtual_size = Size(0, self._row_count + 1)

    # ------------------------------------------------------------------ public API

    @property
    def columns(self) -> tuple[Column, ...]:
        """The columns of the table."""
        return self._columns

    def set_columns(self, columns: Sequence[Column]) -> None:
        """Replace the columns (hand the table rows whose cells follow them next)."""
        if not columns:
            raise ValueError("VirtualTable needs at least one column")
        self._columns = tuple(columns)
        self._clear_caches()
        self.refresh()

    @property
    def source(self) -> RowSource:
        """The current row source."""
        return self._source

    @property
    def filter_text(self) -> str:
        """What the rows are filtered by ("" when every row shows)."""
        return self._filter

    @property
    def unfiltered_count(self) -> int:
        """Number of rows before the filter."""
        return len(self._base)

    def set_filter(self, query: str) -> None:
        """Show only the rows whose cells hold every word of ``query`` (ignoring case);
        "" shows every row again. The cursor stays on its row when that row is kept, and
        the filter stays on when the owner hands the table new rows."""
        query = " ".join(query.split())
        if query == self._filter:
            return
        self._filter = query
        self.set_source(self._base, keep_key=self.cursor_key)

    def action_clear_filter(self) -> None:
        """Show every row again (the key goes on to the pane when no filter is set)."""
        if not self._filter:
            raise SkipAction()
        self.set_filter("")

    @property
    def row_count(self) -> int:
        """Number of rows (as of the last `set_source` or `refresh_rows`)."""
        return self._row_count

    @property
    def cursor_key(self) -> str | None:
        """Key of the row under the cursor, or `None` (empty table or row without key)."""
        return self.row_key_at(self.cursor_row)

    def row_key_at(self, index: int) -> str | None:
        """Key of the row at `index`, or `None` if out of range or the row has no key."""
        if 0 <= index < self._row_count:
            return self._source.row(index).key
        return None

    def move_cursor(self, index: int) -> None:
        """Move the cursor to the row `index` (clamped) and scroll it into view."""
        self.cursor_row = index
        self.scroll_to_cursor()

    def scroll_to_cursor(self) -> None:
        """Scroll (without animation) the minimum needed to make the cursor row visible."""
        visible = self._visible_rows
        if visible <= 0:
            return  # Not laid out yet; `_on_resize` calls this again.
        top = round(self.scroll_y)
        cursor = self.cursor_row
        if cursor < top:
            target = cursor
        elif cursor >= top + visible:
            target = cursor - visible + 1
        elif cursor == self._row_count - 1 and top != max(0, self._row_count - visible):
            # The last row is shown at the bottom, whatever heights the table had on its
            # way to this one (a tail being followed must not depend on layout order).
            target = max(0, self._row_count - visible)
        else:
            return
        self.scroll_to(y=target, animate=False, force=True)
        if target > self.max_scroll_y and self._scroll_retries < 3:
            # The scroll range lags the new size by a frame (the region grew or shrank,
            # the range not yet): the scroll was clamped short. Ask again after the
            # refresh (a few times at most), or the selected row stays below the view.
            self._scroll_retries += 1
            self.call_after_refresh(self.scroll_to_cursor)
        else:
            self._scroll_retries = 0

    _scroll_retries = 0

    def set_source(self, source: RowSource, keep_key: str | None = None) -> None:
        """Replace the rows.

        The cursor moves to the row whose key is `keep_key` if such a row exists in
        the new source; otherwise the cursor index is kept and clamped to the new row
        count. Posts `CursorMoved` if the row under the cursor changed (index or key).

        Where the view goes: when `keep_key` is the selected row's key (the selection
        is kept across a refresh) and the view was at the top, it stays at the top,
        so rows that arrive first are seen: the cursor stays on its row while that
        row is still on screen, and a cursor on the first row stays on the first row.
        Only a row chosen further down and pushed off the screen scrolls the view (the
        selection is never lost). A view scrolled down keeps the selected row where
        it was on screen. Either way the rows that arrived above the view are counted
        (`new_above`, shown in the header). A `keep_key` naming another row selects
        that row and scrolls it into view.

        Args:
            source: The new rows.
            keep_key: Key of the row to keep the cursor on, typically `self.cursor_key`.
        """
        old_index = self.cursor_row
        old_source = self._source
        # A source changed in place can no longer tell which key was under the cursor
        # (and may be shorter now): trust the caller's `keep_key` then.
        in_place = source is self._base
        self._base = source
        if self._filter:
            source = FilteredRows(source, self._filter)
        old_key = keep_key if in_place else self.cursor_key
        old_top = round(self.scroll_y)
        screen_offset = old_index - old_top
        keeping = keep_key is None or keep_key == old_key

        self._source = source
        self._row_count = len(source)
        self._clear_caches()
        self.virtual_size = Size(0, self._row_count + 1)

        new_index = old_index
        if keep_key is not None:
            found = self._find_key(keep_key, old_index)
            if found is not None:
                new_index = found
        new_index = self._clamp(new_index)
        visible = self._visible_rows

        on_screen = 0 <= new_index < visible
        if keeping and old_top == 0 and (on_screen or old_index == 0):
            # Watching the top: it stays in view. The selection follows its row while
            # that row is on screen; a cursor on the first row stays on the first row.
            if not on_screen:
                new_index = 0
            self.set_reactive(VirtualTable.cursor_row, new_index)
            self.scroll_to(y=0, animate=False, force=True)
        elif keeping and old_top == 0:
            # A row chosen further down was pushed off the screen: the selection wins,
            # and the header counts the new rows the view has to leave above.
            self.set_reactive(VirtualTable.cursor_row, new_index)
            self.scroll_to_cursor()
            if not in_place:
                self.new_above += self._arrived_above(old_source, round(self.scroll_y), 0)
        else:
            # Bypass the watcher: post a single message below, after the scroll is fixed.
            self.set_reactive(VirtualTable.cursor_row, new_index)
            if visible > 0 and 0 <= screen_offset < visible:
                new_top = max(0, new_index - screen_offset)
                self.scroll_to(y=new_top, animate=False, force=True)
                if keeping and not in_place and new_top > 0:
                    self.new_above += self._arrived_above(old_source, new_top, old_top)
            self.scroll_to_cursor()
        self.refresh()
        new_key = self.row_key_at(new_index)
        if new_index != old_index or new_key != old_key:
            self.post_message(self.CursorMoved(self, new_index, new_key))

    def refresh_rows(self, keep_key: str | None = None) -> None:
        """Re-read the row count and redraw, for a source that changed in place.

        Call it right after changing the source, in the same callback (the table may
        ask the source for any row below the old row count until then).

        Args:
            keep_key: As for `set_source`. Read `cursor_key` *before* changing the source.
        """
        self.set_source(self._base, keep_key=keep_key)

    # ------------------------------------------------------------------ reactives

    def watch_new_above(self) -> None:
        self._header_cache.clear()
        self.refresh_line(0)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(new_value) == 0 and self.new_above:
            self.new_above = 0  # the new rows are in view now

    def validate_cursor_row(self, value: int) -> int:
        return self._clamp(value)

    def watch_cursor_row(self, old_row: int, new_row: int) -> None:
        self._refresh_row(old_row)
        self._refresh_row(new_row)
        self.scroll_to_cursor()
        self.post_message(self.CursorMoved(self, new_row, self.row_key_at(new_row)))

    # ------------------------------------------------------------------ actions

    def action_cursor_up(self) -> None:
        """Move the cursor up one row."""
        self.move_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        """Move the cursor down one row."""
        self.move_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        """Move the cursor (and the view) up one page."""
        self._page(-1)

    def action_page_down(self) -> None:
        """Move the cursor (and the view) down one page."""
        self._page(+1)

    def action_first(self) -> None:
        """Move the cursor to the first row."""
        self.move_cursor(0)

    def action_last(self) -> None:
        """Move the cursor to the last row."""
        self.move_cursor(self._row_count - 1)

    def action_select_cursor(self) -> None:
        """Post `RowSelected` for the row under the cursor (nothing if the table is empty)."""
        if self._row_count:
            index = self.cursor_row
            self.post_message(self.RowSelected(self, index, self.row_key_at(index)))

    # ------------------------------------------------------------------ events

    async def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or offset.y < 1:
            return  # Padding, border or header.
        index = round(self.scroll_y) + offset.y - 1
        if not 0 <= index < self._row_count:
            return
        event.stop()
        if index == self.cursor_row or event.chain > 1:
            self.action_select_cursor()
        else:
            self.move_cursor(index)

    def _on_resize(self, event: events.Resize) -> None:
        # Lines are cached per width already; a pane shown again at the same size
        # keeps its cache (and its first frame stays cheap).
        if event.size.width != getattr(self, "_last_width", None):
            self._last_width = event.size.width
            self._clear_caches()
        self.scroll_to_cursor()
        # The scroll range follows the new size a frame late, so that scroll may have
        # been clamped short: look again after the refresh, unless someone scrolled
        # meanwhile (a mouse wheel's view is theirs to keep).
        top = round(self.scroll_y)
        self.call_after_refresh(self._after_resize, top)

    def _after_resize(self, top: int) -> None:
        if round(self.scroll_y) == top:
            self.scroll_to_cursor()

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        # A Resize event is not sent for every size a layout passes through: a table
        # that grew by a row (its scroll clamped to the new range) and then shrank back
        # got no Resize for the shrink, and the selected row stayed below the view.
        # Whatever the events, a selected row that was in view stays in view.
        shown = self._cursor_in_view()
        changed = super()._size_updated(size, virtual_size, container_size, layout)
        if shown and not self._cursor_in_view():
            self.scroll_to_cursor()
        return changed

    def _cursor_in_view(self) -> bool:
        visible = self._visible_rows
        top = round(self.scroll_y)
        return visible > 0 and top <= self.cursor_row < top + visible

    _row_style: Style | None = None

    def notify_style_update(self) -> None:
        self._row_style = None
        super().notify_style_update()
        self._clear_caches()

    # ------------------------------------------------------------------ rendering

    def render_line(self, y: int) -> Strip:
        """Render line `y` of the content area (0 is the header)."""
        width = self.scrollable_content_region.width
        if y == 0:
            return self._render_header(width)
        if self._row_count == 0:
            return self._render_empty_line(y, width)
        index = round(self.scroll_y) + y - 1
        if index >= self._row_count:
            return Strip.blank(width, self.rich_style)
        is_cursor = index == self.cursor_row
        cache_key = (index, width, is_cursor, self.has_focus)
        strip = self._line_cache.get(cache_key)
        if strip is None:
            strip = self._render_row(index, width, is_cursor)
            self._line_cache[cache_key] = strip
        return strip

    def _render_header(self, width: int) -> Strip:
        strip = self._header_cache.get(width)
        if strip is None:
            style = self.get_component_rich_style("virtual-table--header")
            labels: list[CellType] = [column.label for column in self._columns]
            strip = self._render_cells(labels, width, style, None)
            if self._filter:
                # Over the right end of the header: the list is filtered (Esc clears).
                marker = f" /{self._filter} · {self._row_count:,} of {len(self._base):,} "
                marker = marker if cell_len(marker) < width * 2 // 3 else " filtered "
                if cell_len(marker) < width:
                    marker_style = style + self.get_component_rich_style("virtual-table--filter")
                    left = strip.crop(0, width - cell_len(marker))
                    strip = Strip.join([left, Strip([Segment(marker, marker_style)])])
            elif self.new_above:
                # Over the right end of the header: rows arrived above the view.
                marker = f" {self.new_above:,} new ↑ "
                if cell_len(marker) < width:
                    marker_style = style + self.get_component_rich_style("virtual-table--new-above")
                    left = strip.crop(0, width - cell_len(marker))
                    strip = Strip.join([left, Strip([Segment(marker, marker_style)])])
            self._header_cache[width] = strip
        return strip

    def _render_empty_line(self, y: int, width: int) -> Strip:
        base_style = self.rich_style
        body_height = self.scrollable_content_region.height - 1
        # The placeholder wraps (a narrow table keeps all of it), centred both ways.
        shown = self.empty_text
        if self._filter and len(self._base):
            shown = f"Nothing here matches “{self._filter}” (Esc clears the filter)"
        lines = textwrap.wrap(shown, max(1, width - 2)) or [""]
        lines = lines[: max(1, body_height)]
        first = max(0, (body_height - len(lines)) // 2)
        if not first <= y - 1 < first + len(lines) or width <= 0:
            return Strip.blank(width, base_style)
        style = self.get_component_rich_style("virtual-table--empty")
        text = _fit_str(lines[y - 1 - first], width, "left").rstrip()
        left = (width - cell_len(text)) // 2
        return Strip(
            [
                Segment(" " * left, base_style),
                Segment(text, style),
                Segment(" " * (width - left - cell_len(text)), base_style),
            ],
            width,
        )

    def _render_row(self, index: int, width: int, is_cursor: bool) -> Strip:
        cells = self._source.row(index).cells
        if is_cursor:
            style = self.get_component_rich_style("virtual-table--cursor")
            # Like DataTable's default "css" priority: the cursor colours win over
            # colours set on Text cells, so the cursor row stays readable.
            post_style = Style(color=style.color, bgcolor=style.bgcolor)
        else:
            # rich_style walks the CSS ancestry (~0.1 ms); it cannot change between
            # two style updates, so it is computed once per update, not per row.
            if self._row_style is None:
                self._row_style = self.rich_style
            style = self._row_style
            post_style = None
        return self._render_cells(cells, width, style, post_style)

    def _render_cells(
        self,
        cells: Sequence[CellType],
        width: int,
        style: Style,
        post_style: Style | None,
    ) -> Strip:
        """Render one line of cells, padded/cropped to exactly `width` cells."""
        console = self.app.console
        segments: list[Segment] = []
        pending: list[str] = []  # plain-text run sharing `style`, flushed as one segment
        pad = " " * CELL_PADDING
        cell_count = len(cells)
        for column_index, (column, column_width) in enumerate(
            zip(self._columns, self._column_widths(width), strict=True)
        ):
            if column_width is None:
                continue  # hidden: the table is too narrow for it
            cell: CellType = cells[column_index] if column_index < cell_count else ""
            if isinstance(cell, Choices):
                cell = _choose(cell, column_width)
            justify = column.justify
            if isinstance(cell, Text):
                pending.append(pad)
                segments.append(Segment("".join(pending), style))
                pending.clear()
                fitted = _fit_text(cell, column_width, justify)
                # Text.render() yields the spans' styles only; add the Text's own style.
                cell_style = style + console.get_style(fitted.style, default=Style.null())
                segments.extend(
                    Segment.apply_style(fitted.render(console, end=""), cell_style, post_style)
                )
                pending.append(pad)
            else:
                pending.append(pad)
                pending.append(_fit_str(str(cell), column_width, justify))
                pending.append(pad)
        if pending:
            segments.append(Segment("".join(pending), style))
        return Strip(segments).adjust_cell_length(width, style).simplify()

    # ------------------------------------------------------------------ helpers

    @property
    def _visible_rows(self) -> int:
        """Number of rows that fit below the header.

        From the size the layout gave the table, not its region on screen: while a
        layout is under way (``_size_updated``) the region is still the old one."""
        return max(0, self.container_size.height - self.scrollbar_size_horizontal - 1)

    def _clamp(self, index: int) -> int:
        return max(0, min(index, self._row_count - 1))

    def _clear_caches(self) -> None:
        self._line_cache.clear()
        self._header_cache.clear()
        self._widths_cache = None

    def _refresh_row(self, index: int) -> None:
        """Repaint the line showing row `index`, if it is on screen."""
        top = round(self.scroll_y)
        if top <= index < top + self._visible_rows:
            self.refresh_line(index + 1)  # Virtual line; line 0 is the header.

    def _page(self, direction: int) -> None:
        """Move the cursor and the view by one page, keeping the cursor's screen row."""
        page = max(1, self._visible_rows)
        self.scroll_to(y=round(self.scroll_y) + direction * page, animate=False, force=True)
        self.move_cursor(self.cursor_row + direction * page)

    def _arrived_above(self, old_source: RowSource, new_top: int, old_top: int) -> int:
        """How many of the rows above the view (``new_top`` of them) are new: counted
        by key against the old rows when that is cheap, else by how far the view moved."""
        index_of = getattr(old_source, "index_of", None)
        if not callable(index_of) or new_top > ARRIVALS_COUNTED:
            return max(0, new_top - old_top)
        source = self._source
        return sum(
            1
            for index in range(new_top)
            if (key := source.row(index).key) is None or index_of(key) is None
        )

    def _find_key(self, key: str, hint: int) -> int | None:
        """Find the index of the row with `key`, trying `hint` and its neighbours first."""
        index_of = getattr(self._source, "index_of", None)
        if callable(index_of):
            found: int | None = index_of(key)  # a source's optional fast lookup
            return found
        count = self._row_count
        source = self._source
        # Rows usually shift by a few places when the store changes: look near the hint.
        for delta in range(0, 64):
            for candidate in (hint - delta, hint + delta):
                if 0 <= candidate < count and source.row(candidate).key == key:
                    return candidate
        for candidate in range(count):
            if source.row(candidate).key == key:
                return candidate
        return None

    def _column_widths(self, width: int) -> list[int | None]:
        """Widths (without padding) of the columns for a line of `width` cells (`None`:
        hidden)."""
        cached = self._widths_cache
        if cached is not None and cached[0] == width:
            return cached[1]
        widths = fit_columns(self._columns, width)
        self._widths_cache = (width, widths)
        return widths

    def visible_columns(self) -> dict[str, int]:
        """Key → width of the columns shown at the table's current width (hidden ones
        are left out)."""
        widths = self._column_widths(self.scrollable_content_region.width)
        return {c.key: w for c, w in zip(self._columns, widths, strict=True) if w is not None}
