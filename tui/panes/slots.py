"""The Slots pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class SlotsPane(Pane):
    """Slots."""

    PANE_ID = "slots"
    TITLE = "Slots"

    def compose(self) -> ComposeResult:
        yield Static("Slots: coming soon")
