"""The Rules & lessons pane (placeholder until it is built)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Static

from tui.panes.base import Pane


class LessonsPane(Pane):
    """Rules & lessons."""

    PANE_ID = "lessons"
    TITLE = "Rules & lessons"

    def compose(self) -> ComposeResult:
        yield Static("Rules & lessons: coming soon")
