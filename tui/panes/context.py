"""The Context pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class ContextPane(Pane):
    """Context."""

    PANE_ID = "context"
    TITLE = "Context"

    def compose(self) -> ComposeResult:
        yield Static("Context: coming soon")
