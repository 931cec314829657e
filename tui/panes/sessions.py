"""The Sessions pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class SessionsPane(Pane):
    """Sessions."""

    PANE_ID = "sessions"
    TITLE = "Sessions"

    def compose(self) -> ComposeResult:
        yield Static("Sessions: coming soon")
