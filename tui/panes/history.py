"""The History pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class HistoryPane(Pane):
    """History."""

    PANE_ID = "history"
    TITLE = "History"

    def compose(self) -> ComposeResult:
        yield Static("History: coming soon")
