"""``/`` on a list: a one-line field at the bottom that filters the list as you type.

The list keeps only the rows that hold every typed word (any column, any case:
:mod:`tui.widgets.row_filter`). Enter keeps the filter and goes back to the list,
whose header then shows it (``/words · 3 of 40``); Esc puts back the filter the
list had before. On the list, Esc clears the filter; ``/`` again edits it.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Input, Label

from ..widgets.virtual_table import VirtualTable


class ListFilterScreen(ModalScreen[None]):
    """Filter ``table`` (a list on the screen below) by the words typed here."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]
    DEFAULT_CSS = """
    ListFilterScreen { align: left bottom; background: transparent; }
    ListFilterScreen > Horizontal {
        dock: bottom; height: 1; width: 100%; background: $panel;
    }
    ListFilterScreen Label { width: auto; padding: 0 1; color: $text-accent; }
    ListFilterScreen Input { width: 1fr; border: none; height: 1; padding: 0; }
    ListFilterScreen #filter-count { color: $text-muted; }
    """

    def __init__(self, table: VirtualTable) -> None:
        super().__init__()
        self.table = table
        self.before = table.filter_text

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label("Filter /", id="filter-prompt")
            yield Input(
                self.before, placeholder="words the rows must hold", id="filter-input", compact=True
            )
            yield Label(self._count(), id="filter-count")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _count(self) -> str:
        table = self.table
        return f"{table.row_count:,} of {table.unfiltered_count:,} · Enter keep · Esc cancel"

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        self.table.set_filter(event.value)
        self.query_one("#filter-count", Label).update(self._count())

    @on(Input.Submitted)
    def _keep(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        """Put back the filter the list had, and go back to it."""
        self.table.set_filter(self.before)
        self.dismiss(None)
