"""What every pane shares: lazy loading off the UI thread, refresh on store changes.

A pane is a thin orchestrator: it composes one-file widgets (``tui/widgets``),
loads what they show through the service's named reads in a worker, and runs
its actions through the app's single write path (:meth:`MemworkApp.write`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from textual.actions import SkipAction
from textual.binding import Binding
from textual.containers import Vertical
from textual.worker import get_current_worker

if TYPE_CHECKING:
    from ..app import MemworkApp
    from ..service import MemoryService


class Pane(Vertical):
    """A workbench pane.

    Subclasses set ``PANE_ID``/``TITLE``/``HELP``, implement :meth:`load` (start
    an exclusive worker that reads through ``self.service`` and hands its result
    to the UI with :meth:`deliver`) and, when records can be searched for,
    :meth:`jump_to`. A pane loads the first time it is shown (or, ahead of need,
    when the app prepares it in idle time) and again whenever the store changes
    while it is visible; a hidden pane only marks itself stale.
    """

    PANE_ID: ClassVar[str] = ""
    TITLE: ClassVar[str] = ""
    #: The tab's name where the terminal is too narrow for every TITLE ("" = TITLE).
    SHORT_TITLE: ClassVar[str] = ""
    #: The key that shows the pane, for a pane past the ninth ("" = its digit).
    KEY: ClassVar[str] = ""
    #: Shown in the help screen under the pane's name.
    HELP: ClassVar[str] = ""
    #: Actions that act on no selected record (a new one, a filter, a view): the
    #: command palette runs them from any pane. The others act on the selection, so
    #: from another pane the palette shows this pane and asks to pick the record first.
    PALETTE_ANYWHERE: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Every key of a pane gets a hidden second binding, tried when the first one's
        # action does not apply where the focus is (``applies`` said False): instead of
        # doing nothing, the key says why, or where it works (``why_not``).
        own = [b for b in cls.__dict__.get("BINDINGS", []) if isinstance(b, Binding)]
        if own:
            cls.BINDINGS = [
                *own,
                *(Binding(b.key, f"explain({b.action!r})", show=False) for b in own),
            ]
        super().__init_subclass__(**kwargs)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(id=f"pane-{self.PANE_ID}", **kwargs)
        self.stale = True
        #: Whether the pane's widgets exist: a hidden pane is composed when the app first
        #: puts it into its tab (on its first show, or while preparing it in idle time).
        self.composed = False

    def on_mount(self) -> None:
        self.composed = True

    @classmethod
    def css_file(cls) -> str:
        """The pane's stylesheet, relative to the ``tui`` package."""
        return f"panes/{cls.PANE_ID}.tcss"

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

    def prepare(self) -> None:
        """Load ahead of need (the app calls this in idle time after the first paint)."""
        if self.stale:
            self.reload()

    def store_changed(self) -> None:
        """Another commit landed: reload now if visible, else on next show."""
        self.stale = True
        if self.active and self.composed:
            self.reload()

    @property
    def rebuild_pending(self) -> bool:
        """Whether a change is waiting to be shown (a debounced rebuild not yet run)."""
        return False

    def reload(self) -> None:
        """Load (or reload) the pane's data."""
        self.stale = False
        self.load()

    def load(self) -> None:
        """Start loading; subclasses override."""

    def deliver(self, callback: Callable[..., None], *args: Any) -> None:
        """From a worker thread: run ``callback(*args)`` on the UI thread, unless a newer
        worker of the same exclusive group replaced this one in the meantime.

        The check runs on the UI thread, where workers are cancelled, so a stale
        result can never land after a fresh one (Textual's worker guide checks
        ``is_cancelled`` in the thread, which leaves a small window open).
        """
        worker = get_current_worker()

        def run() -> None:
            if not worker.is_cancelled:
                callback(*args)

        self.app.call_from_thread(run)

    # -- keys that apply here, and what the others say -----------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "explain":
            return True
        return self.applies(action, parameters)

    def applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Whether ``action`` applies now: False hides its key from the footer (and the
        key then gets :meth:`why_not`'s answer), None shows it dimmed."""
        return True

    def why_not(self, action: str) -> str | None:
        """What a key whose action does not apply here says (where it works, or why it
        cannot); None lets the key fall through silently."""
        return None

    @classmethod
    def key_name(cls, action: str) -> str:
        """``r (Reinforce)``: the key and name of one of the pane's actions, for messages."""
        for binding in cls.BINDINGS:
            if isinstance(binding, Binding) and binding.action == action and binding.description:
                return f"{binding.key_display or binding.key} ({binding.description})"
        return action

    def action_explain(self, action: str) -> None:
        """A pane key pressed where its action does not apply: say why, or where it works."""
        name = action.partition("(")[0]
        reason = self.why_not(name)
        if reason is None:
            raise SkipAction()
        self.app.notify(reason, severity="warning", timeout=4)

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

    def warn(self, message: str) -> None:
        """A short warning toast (nothing selected, nothing to do); shown as typed."""
        self.app.notify(message, severity="warning")
