"""The Episodes pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class EpisodesPane(Pane):
    """Episodes."""

    PANE_ID = "episodes"
    TITLE = "Episodes"

    def compose(self) -> ComposeResult:
        yield Static("Episodes: coming soon")
