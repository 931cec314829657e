"""What every pane shares: lazy loading off the UI thread, refresh on store changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.containers import Vertical

if TYPE_CHECKING:
    from tui.app import MemworkApp
    from tui.service import MemoryService


class Pane(Vertical):
    """A workbench pane.

    Subclasses set ``PANE_ID``/``TITLE``, implement :meth:`load` (start a
    worker that reads through ``self.service`` and updates widgets from the
    UI thread) and, when records can be searched for, :meth:`jump_to`.
    A pane loads the first time it is shown and again whenever the store
    changes while it is visible; a hidden pane only marks itself stale.
    """

    PANE_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    #: Shown in the help screen under the pane's name.
    HELP: ClassVar[str] = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(id=f"pane-{self.PANE_ID}", **kwargs)
        self.stale = True

    @property
    def workbench(self) -> MemworkApp:
        """The app, typed."""
        return self.app  # type: ignore[return-value]

    @property
    def service(self) -> MemoryService:
        """The store door."""
        return self.workbench.service

    @property
    def active(self) -> bool:
        """Whether this pane is the one on screen."""
        return self.workbench.active_pane == self.PANE_ID

    def activate(self) -> None:
        """Called when the pane comes on screen."""
        if self.stale:
            self.reload()

    def store_changed(self) -> None:
        """Another commit landed: reload now if visible, else on next show."""
        self.stale = True
        if self.active:
            self.reload()

    def reload(self) -> None:
        """Load (or reload) the pane's data."""
        self.stale = False
        self.load()

    def load(self) -> None:
        """Start loading; subclasses override."""

    def jump_to(self, ref: str) -> None:
        """Select the record ``ref`` (after a search hit); subclasses override."""

    def unsaved_work(self) -> str:
        """A short description of edits that quitting would lose ("" when none)."""
        return ""

    def focus_main(self) -> None:
        """Give focus to the pane's main widget (its first focusable one by default)."""
        for widget in self.query("*"):
            if widget.focusable:
                widget.focus()
                return
