"""The Checkpoints pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class CheckpointsPane(Pane):
    """Checkpoints."""

    PANE_ID = "checkpoints"
    TITLE = "Checkpoints"

    def compose(self) -> ComposeResult:
        yield Static("Checkpoints: coming soon")
