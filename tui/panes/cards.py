"""The Mistake cards pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class CardsPane(Pane):
    """Mistake cards."""

    PANE_ID = "cards"
    TITLE = "Mistake cards"

    def compose(self) -> ComposeResult:
        yield Static("Mistake cards: coming soon")
