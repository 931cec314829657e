"""The workbench: eight panes over one store, keyboard first.

Built by :func:`make_app` so tests and snapshots construct it the same way
the CLI does. All store I/O runs in worker threads. Writes by agents show up
without losing the user's selection: a Redis store announces every commit on
its pub/sub channel and the app follows it; a folder store is polled (its
commit counter, every second).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, TabbedContent, TabPane
from textual.worker import WorkerFailed

from core.errors import MemworkError
from core.search_docs import build_index
from core.search_index import SearchIndex
from core.storage.store import Store
from tui import hangup
from tui.commands import ActionsProvider, MemorySearchProvider
from tui.messages import JumpTo
from tui.panes.base import Pane
from tui.panes.cards import CardsPane
from tui.panes.checkpoints import CheckpointsPane
from tui.panes.context import ContextPane
from tui.panes.episodes import EpisodesPane
from tui.panes.history import HistoryPane
from tui.panes.lessons import LessonsPane
from tui.panes.sessions import SessionsPane
from tui.panes.slots import SlotsPane
from tui.service import MemoryService

T = TypeVar("T")

#: The panes in the order the digits 1–8 select them (SPEC §9).
PANES: tuple[type[Pane], ...] = (
    SessionsPane,
    EpisodesPane,
    CardsPane,
    LessonsPane,
    SlotsPane,
    CheckpointsPane,
    ContextPane,
    HistoryPane,
)
POLL_SECONDS = 1.0


class PaneSwitcher(TabbedContent):
    """Tabs that change only when asked (digits, clicks, jumps).

    TabbedContent also follows the focus into a pane; a pane that focuses a
    widget while it loads in the background would then steal the screen.
    """

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.prevent_default()  # skip TabbedContent's own handler, which switches tabs
        event.stop()


class MemworkApp(App[None]):
    """The memwork workbench."""

    TITLE = "memwork"
    CSS_PATH: ClassVar[list[str | Path]] = [  # type: ignore[assignment]
        "memwork.tcss",
        *(
            f"panes/{name}.tcss"
            for name in (
                "sessions",
                "episodes",
                "cards",
                "lessons",
                "slots",
                "checkpoints",
                "context",
                "history",
            )
        ),
    ]
    COMMANDS = App.COMMANDS | {ActionsProvider, MemorySearchProvider}
    BINDINGS: ClassVar[list[Binding]] = [
        *(
            Binding(str(n), f"show_pane('{pane.PANE_ID}')", pane.TITLE, show=False, id=pane.PANE_ID)
            for n, pane in enumerate(PANES, start=1)
        ),
        Binding("q", "quit_safely", "Quit", id="quit"),
        Binding("ctrl+q", "quit_safely", "Quit", show=False, priority=True),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="help"),
        Binding("slash", "search", "Search", key_display="/", id="search"),
        Binding("ctrl+r", "reload", "Reload", show=False, id="reload"),
        Binding("ctrl+t", "toggle_theme", "Light/dark", show=False, id="theme"),
    ]

    def __init__(self, store: Store, *, title_suffix: str | None = None, poll: bool = True) -> None:
        super().__init__()
        self.service = MemoryService(store)
        self.sub_title = title_suffix or store.label
        self.active_pane = PANES[0].PANE_ID
        self.poll_enabled = poll
        self._pending_jump: tuple[str, str] | None = None  # (pane, record) until shown
        self._generation = -1
        self._stop_following: Callable[[], None] | None = None
        self.search_index: SearchIndex | None = None
        self.search_generation = -1

    # -- layout -----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with PaneSwitcher(initial=f"tab-{PANES[0].PANE_ID}", id="panes"):
            for n, pane in enumerate(PANES, start=1):
                with TabPane(f"{n} {pane.TITLE}", id=f"tab-{pane.PANE_ID}"):
                    yield pane()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.theme = "textual-dark"
        first = self.pane(self.active_pane)
        first.activate()
        self.call_after_refresh(first.focus_main)
        if self.poll_enabled:
            # A store that pushes its commits (Redis pub/sub) is followed, not polled.
            self._stop_following = self.service.follow(self._commit_heard)
            if self._stop_following is None:
                self.set_interval(POLL_SECONDS, self.check_store)
        if not self.is_headless and (fd := hangup.terminal_fd()) is not None:
            self.set_interval(hangup.CHECK_SECONDS, partial(self._quit_if_hung_up, fd))
        self.check_store()
        # The search index is built after the first paint, in the background; it is
        # rebuilt when the search opens and the store has moved since.
        self.set_timer(1.0, self.refresh_search_index)

    def _quit_if_hung_up(self, fd: int) -> None:
        if hangup.terminal_gone(fd):
            self.exit(return_code=129)  # 128 + SIGHUP, as if the hang-up had reached us

    # -- panes ------------------------------------------------------------------------
    def pane(self, pane_id: str) -> Pane:
        """The pane widget with id ``pane_id``."""
        return self.query_one(f"#pane-{pane_id}", Pane)

    def action_show_pane(self, pane_id: str) -> None:
        """Switch to a pane (digits 1–8)."""
        # Drop the focus first: a focused widget left in the old pane would make
        # TabbedContent switch straight back to the pane that holds it.
        self.screen.set_focus(None)
        self.query_one("#panes", TabbedContent).active = f"tab-{pane_id}"

    @on(TabbedContent.TabActivated, "#panes")
    def _pane_switched(self, event: TabbedContent.TabActivated) -> None:
        pane_id = (event.pane.id or "").removeprefix("tab-")
        if pane_id and pane_id != self.active_pane:
            self.active_pane = pane_id
            try:
                pane = self.pane(pane_id)
            except NoMatches:  # the app is shutting down
                return
            pane.activate()
            self.call_after_refresh(pane.focus_main)
            if self._pending_jump is not None and self._pending_jump[0] == pane_id:
                # Queued after the default focus, so the record's own list keeps it.
                self.call_after_refresh(pane.jump_to, self._pending_jump[1])
                self._pending_jump = None

    @on(JumpTo)
    def _jump(self, event: JumpTo) -> None:
        if event.pane == self.active_pane:
            self.call_after_refresh(self.pane(event.pane).jump_to, event.ref)
            return
        self._pending_jump = (event.pane, event.ref)
        self.action_show_pane(event.pane)

    # -- store I/O --------------------------------------------------------------------
    async def io(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run blocking store work in a thread and await its result (errors re-raised)."""
        worker = self.run_worker(
            partial(fn, *args, **kwargs), thread=True, group="io", exit_on_error=False
        )
        try:
            return await worker.wait()
        except WorkerFailed as failed:
            raise failed.error from None

    async def write(
        self, fn: Callable[..., T], *args: Any, done: str = "", **kwargs: Any
    ) -> T | None:
        """The single writer path: run a core mutation, report its outcome, refresh."""
        try:
            result = await self.io(self.service.write, fn, *args, **kwargs)
        except MemworkError as exc:
            self.notify(str(exc), title="Not changed", severity="error", timeout=8)
            return None
        if done:
            self.notify(done, timeout=4)
        self.store_changed()
        return result

    def store_changed(self) -> None:
        """Tell panes the store moved (our own write, or another process's)."""
        for pane_cls in PANES:
            self.pane(pane_cls.PANE_ID).store_changed()

    def _commit_heard(self) -> None:
        """A commit was announced (called from the store's listening thread)."""
        try:
            self.call_from_thread(self.check_store)
        except RuntimeError:
            pass  # the app is not running (yet, or any more)

    def on_unmount(self) -> None:
        if self._stop_following is not None:
            self._stop_following()

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def check_store(self) -> None:
        """Notice commits by other processes (polled, or pushed by the store)."""
        generation = self.service.generation()
        if generation != self._generation:
            first = self._generation == -1
            self._generation = generation
            if not first:
                self.call_from_thread(self.store_changed)

    # -- search -----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="search-index", exit_on_error=False)
    def refresh_search_index(self) -> None:
        """Rebuild the fuzzy-search index in the background."""
        generation = self.service.generation()
        index = build_index(self.service.store)
        self.search_index = index
        self.search_generation = generation

    def action_search(self) -> None:
        """Fuzzy search over all memory."""
        from tui.screens.search import SearchScreen

        if self.search_generation != self._generation:
            self.refresh_search_index()
        self.push_screen(SearchScreen())

    # -- misc -------------------------------------------------------------------------
    def action_help(self) -> None:
        """Every key, per pane."""
        from tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(PANES))

    def action_quit_safely(self) -> None:
        """Quit, asking first when a pane holds unsaved edits."""
        unsaved = [w for cls in PANES if (w := self.pane(cls.PANE_ID).unsaved_work())]
        if not unsaved:
            self.exit()
            return
        from tui.screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(
            ConfirmScreen("Quit and lose unsaved edits?", "; ".join(unsaved), confirm="Quit"),
            answered,
        )

    def action_reload(self) -> None:
        """Reload everything from the store."""
        self.store_changed()
        self.notify("Reloaded from the store", timeout=2)

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"


def make_app(
    store: Store | str | Path, *, title_suffix: str | None = None, poll: bool = True
) -> MemworkApp:
    """Build the workbench for a store (a Store, or a path to open)."""
    if not isinstance(store, Store):
        store = Store(store)
    return MemworkApp(store, title_suffix=title_suffix, poll=poll)
