"""Dialogs that are laid out once: sized for the terminal before their first frame.

A modal used to learn the terminal's size only after it was shown: its first frame
had the tall layout, the next the short terminal's classes, the one after the
borderless controls fit_controls sets on a resize (three layouts in ~250 ms
below 32 lines, a flicker). :class:`Dialog` gives a modal the app's size classes
(``-narrow``, ``-short``, …) when it is made, and its inputs and buttons their
compact form when they mount, so the first frame is the final one.
"""

from __future__ import annotations

from typing import Any, TypeVar

from textual import events

# Where Textual defines it (textual.app imports it but does not export it).
from textual._context import active_app
from textual.screen import ModalScreen

#: Below this many lines a dialog draws its fields and buttons without borders.
SHORT_HEIGHT = 32

ResultType = TypeVar("ResultType")


def fit_controls(screen: ModalScreen[Any], height: int) -> None:
    """Borderless inputs and buttons in a short terminal, so a form or dialog fits."""
    compact = height < SHORT_HEIGHT
    for widget in screen.query("Input, TextArea, Button, Select"):
        if widget.compact != compact:  # type: ignore[attr-defined]
            widget.compact = compact  # type: ignore[attr-defined]


class Dialog(ModalScreen[ResultType]):
    """A modal screen sized for the terminal from its first frame."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        try:
            app = active_app.get()
        except LookupError:  # made outside a running app (a test building it)
            return
        width, height = app.size
        horizontal = self.HORIZONTAL_BREAKPOINTS or app.HORIZONTAL_BREAKPOINTS or []
        vertical = self.VERTICAL_BREAKPOINTS or app.VERTICAL_BREAKPOINTS or []
        on = self._get_breakpoint_classes(width, horizontal) | self._get_breakpoint_classes(
            height, vertical
        )
        # The classes the screen's first resize would set: set now, that resize changes
        # nothing and causes no second layout.
        for _, name in (*horizontal, *vertical):
            self.set_class(name in on, name)

    def on_mount(self) -> None:
        fit_controls(self, self.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        fit_controls(self, event.size.height)
