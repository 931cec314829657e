"""The workbench: eleven panes over one store, keyboard first.

Built by :func:`make_app` so tests and snapshots construct it the same way
the CLI does. All store I/O runs in worker threads. Writes by agents show up
without losing the user's selection: a Redis store announces every commit on
its pub/sub channel and the app follows it; a folder store is polled (its
commit counter, every second). Every mutation goes through
:meth:`MemworkApp.write`. Only the opening pane is composed at start; after the
first paint the hidden panes are composed, loaded and laid out in idle time, so no
first switch pays for it (and the first paint does not wait for widgets it hides).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from textual import events, on, work
from textual.app import App, ComposeResult, ScreenStackError, SystemCommand
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.geometry import Region
from textual.notifications import Notify, SeverityLevel
from textual.screen import ModalScreen, Screen
from textual.widget import MountError
from textual.widgets import Header, TabbedContent, TabPane, Tabs
from textual.worker import WorkerFailed

from ..core.base.errors import MemworkError
from ..core.services.recall.search_index import SearchIndex
from . import burst, clipboard, hangup
from .commands import ActionsProvider, MemorySearchProvider
from .gc_pause import big_load
from .keys import KeyGate, TypeAhead
from .messages import JumpTo
from .pane_list import PANES, pane_key
from .panes.base import Pane
from .screens.form import FormScreen
from .service import MemoryService, Store
from .title import home_relative, tab_label, tab_labels, title_line
from .undo import Undo
from .widgets.footer import WorkbenchFooter
from .widgets.virtual_table import VirtualTable

__all__ = ["PANES", "MemworkApp", "make_app"]

T = TypeVar("T")
POLL_SECONDS = 1.0
#: Seconds after the first paint before hidden panes are prepared, one per idle moment.
PREPARE_AFTER = 0.3
#: How long preparing waits for a pane's data before laying it out anyway.
PREPARE_PATIENCE = 5.0
#: How often the key gate looks for keys a vanished widget or a stuck hold keeps.
KEY_CHECK_SECONDS = 0.5
#: Header cells the title cannot use (the icon on the left, the same room on the right).
TITLE_MARGIN = 18


class PaneSwitcher(TabbedContent):
    """Tabs that change only when asked (digits, clicks, jumps).

    TabbedContent also follows the focus into a pane; a pane that focuses a
    widget while it loads in the background would then steal the screen.
    """

    def on_mount(self) -> None:
        # Tab cycles through the current pane's lists only: a focused tab bar would
        # silence every pane key (they bind on the pane). Digits and clicks switch panes.
        self.query_one(Tabs).can_focus = False

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.prevent_default()  # skip TabbedContent's own handler, which switches tabs
        event.stop()


class MemworkApp(TypeAhead, App[None]):
    """The memwork workbench."""

    TITLE = "memwork"
    CSS_PATH: ClassVar[list[str | Path]] = [  # type: ignore[assignment]
        "memwork.tcss",
        *(pane.css_file() for pane in PANES),
    ]
    COMMANDS = App.COMMANDS | {ActionsProvider, MemorySearchProvider}
    #: Screen classes by size: an 80x24 terminal gets narrower side columns, shorter
    #: tables and borderless form fields; from 130 columns lists take more of the width
    #: (see the .tcss files and FormScreen).
    HORIZONTAL_BREAKPOINTS = [
        (0, "-narrow"),
        (100, "-wide"),
        (130, "-xwide"),
    ]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        *(
            Binding(
                pane_key(n, pane),
                f"show_pane('{pane.PANE_ID}')",
                pane.TITLE,
                show=False,
                id=pane.PANE_ID,
                tooltip=f"Show the {pane.TITLE} pane",
            )
            for n, pane in enumerate(PANES, start=1)
        ),
        Binding("q", "quit_safely", "Quit", id="quit"),
        Binding("ctrl+q", "quit_safely", "Quit", show=False, priority=True),
        Binding("question_mark,f1", "help", "Help", key_display="?", id="help"),
        Binding(
            "slash",
            "search",
            "Search",
            key_display="/",
            id="search",
            tooltip="on a list: show only its rows that hold the typed words (Esc clears); "
            "elsewhere: search all memory",
        ),
        Binding(
            "ctrl+f",
            "search_all",
            "Search all",
            show=False,
            id="search-all",
            tooltip="search all memory, from anywhere",
        ),
        Binding(
            "L",
            "lint",
            "Lint findings",
            show=False,
            id="lint",
            tooltip="Every lint finding, each record it names; open or fix it",
        ),
        Binding(
            "U",
            "undo",
            "Undo",
            show=False,
            id="undo",
            tooltip="undo the last delete or merge made here, from the restore point taken "
            "before it",
        ),
        Binding("ctrl+r", "reload", "Reload", show=False, id="reload"),
        Binding("ctrl+t", "toggle_theme", "Light/dark", show=False, id="theme"),
    ]

    def __init__(
        self,
        store: Store,
        *,
        title_suffix: str | None = None,
        show_location: bool = False,
        poll: bool = True,
        prepare: bool = True,
    ) -> None:
        super().__init__()
        self.service = MemoryService(store)
        self.prepare_panes = prepare
        self._prepared: set[str] = set()
        #: True once every hidden pane was loaded and laid out in idle time.
        self.all_panes_prepared = False
        #: Where the store is, as an agent's MEMWORK_DB names it; None for a store shown
        #: under another name only (tests, whose temporary paths would differ per run).
        self.store_location = self.service.location() if show_location or not title_suffix else None
        #: Where the store is, as the title names it (the demo says it is a copy, and
        #: where: an agent can write to it while the workbench watches).
        place = home_relative(self.store_location or "")
        self.title_base = " ".join(filter(None, [title_suffix, place]))
        self.sub_title = self.title_base
        #: (pending proposals, lint findings) as the header shows them.
        self.curation_counts: tuple[int, int] | None = None
        self.active_pane = PANES[0].PANE_ID
        self.poll_enabled = poll
        self._pending_jump: tuple[str, str] | None = None  # (pane, record) until shown
        self._generation = -1
        self._stop_following: Callable[[], None] | None = None
        self._hangup_watch: threading.Event | None = None  # set: stop watching the terminal
        self.search_index: SearchIndex | None = None
        self.search_generation = -1
        self._tab_fit = "full"
        #: Whether the user has switched panes (the opening pane is then left alone).
        self._moved = False
        #: Keys one at a time, each to a target that is ready for it (tui/keys.py).
        self.keys = KeyGate(self, self._route_key)
        #: A toast shown once the workbench is up (the demo says where its copy is).
        self.start_note: str | None = None
        #: Restore points taken before destructive changes; U undoes the last one.
        self.undo = Undo(self)
        #: Every pane, built up front (cheap: no widgets yet); a hidden pane's widgets are
        #: composed when it first goes into its tab (:meth:`attached_pane`).
        self._panes: dict[str, Pane] = {cls.PANE_ID: cls() for cls in PANES}
        self._attaching: dict[str, Awaitable[None]] = {}

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, reading Esc and a key typed in one burst as
        those two keys, never as an Alt chord (tui/burst.py)."""
        return burst.install(super().get_driver_class())

    # -- layout -----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with PaneSwitcher(initial=f"tab-{PANES[0].PANE_ID}", id="panes"):
            for n, pane in enumerate(PANES, start=1):
                with TabPane(f"{pane_key(n, pane)} {pane.TITLE}", id=f"tab-{pane.PANE_ID}"):
                    # The other panes' widgets (two thirds of the app's) are composed
                    # later: styling them first would double the time to the first paint.
                    if pane.PANE_ID == self.active_pane:
                        yield self._panes[pane.PANE_ID]
        yield WorkbenchFooter(compact=True)

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
        self.set_interval(KEY_CHECK_SECONDS, self.keys.check)
        if not self.is_headless and (fd := hangup.terminal_fd()) is not None:
            loop = asyncio.get_running_loop()
            self._hangup_watch = hangup.watch(fd, partial(loop.call_soon_threadsafe, self._hung_up))
        self.check_store()
        self.refresh_counts()
        if self.start_note:
            self.notify(self.start_note, title="Demo", timeout=30)
            self.screen_change_signal.subscribe(self, self._dialog_opened)
        self._open_where_records_are()
        # The search index is built after the first paint, in the background; it is
        # rebuilt when the search opens and the store has moved since.
        self.set_timer(1.0, self.refresh_search_index)
        if self.prepare_panes:
            self.set_timer(PREPARE_AFTER, self._prepare_next_pane)

    @work(thread=True, exclusive=True, group="opening", exit_on_error=False)
    def _open_where_records_are(self) -> None:
        """A store with no session but other records (episodes an agent recorded) opens
        on the first pane that shows them, not on an empty Sessions list."""
        if (pane_id := self.service.opening_pane()) is not None:
            self.call_from_thread(self._open_instead, pane_id)

    def _open_instead(self, pane_id: str) -> None:
        untouched = self.active_pane == PANES[0].PANE_ID and len(self.screen_stack) == 1
        if untouched and not self._moved:
            self.action_show_pane(pane_id)

    async def _prepare_next_pane(self) -> None:
        """Compose and load one hidden pane, lay it out once its data is in, then go on
        to the next.

        A pane's first switch used to pay for its first load and Textual's first
        layout and render of its widgets (120–250 ms against ~30 ms for a warm
        switch). Doing it here, one pane per idle moment, spreads that cost over
        the seconds after start-up, while the user reads the first pane.
        """
        for pane_cls in PANES:
            if pane_cls.PANE_ID == self.active_pane or pane_cls.PANE_ID in self._prepared:
                continue
            if self._exit:
                return  # quit while this timer waited: its tabs are being taken down
            self._prepared.add(pane_cls.PANE_ID)
            try:
                pane = await self.attached_pane(pane_cls.PANE_ID)
            except (NoMatches, ScreenStackError, MountError):  # the app is shutting down
                return
            if pane.PANE_ID == self.active_pane:  # shown while it was composed: loaded
                self.call_after_refresh(lambda: self.set_timer(0.05, self._prepare_next_pane))
            else:
                pane.prepare()
                self._lay_out_when_loaded(pane, PREPARE_PATIENCE)
            return
        self.all_panes_prepared = True

    def _lay_out_when_loaded(self, pane: Pane, patience: float) -> None:
        """Lay ``pane`` out once its loaders are done (rendering empty tables would
        only be redone when the rows arrive), then prepare the next pane."""
        if not pane.is_attached or self._exit:
            return  # the app is shutting down
        busy = any(w.node is pane and not w.is_finished for w in self.workers)
        if busy and patience > 0:
            self.set_timer(0.05, partial(self._lay_out_when_loaded, pane, patience - 0.05))
            return
        try:
            self._lay_out(pane)
        except ScreenStackError:  # closing: no screen left to lay out on
            return
        self.call_after_refresh(lambda: self.set_timer(0.05, self._prepare_next_pane))

    def _lay_out(self, pane: Pane) -> None:
        """Lay a hidden pane out and render it once, off screen, as if it were shown.

        Inside a batch update (nothing reaches the terminal) the pane on screen and
        the hidden one swap places for one synchronous arrangement of the screen;
        the hidden pane's widgets get their size (and their resize handling) and
        render their first lines, then the two swap back. No Show or Hide event is
        sent, so the focus stays where it was and nothing flickers.
        """
        tab = pane.parent
        switcher = tab.parent if tab is not None else None
        screen = self.screen
        if (
            not isinstance(tab, TabPane)
            or switcher is None
            or tab.display
            or screen is not self.screen_stack[0]
            or not screen.size
        ):
            return
        shown = [child for child in switcher.children if child.display]
        compositor = screen._compositor  # noqa: SLF001 - Textual has no public API for this
        size = screen.outer_size
        with self.batch_update():
            for child in shown:
                child.display = False
            tab.display = True
            try:
                _hidden, appeared, resized = compositor.reflow(screen, size)
                for widget, (region, _, clip, virtual, container, _, _) in compositor.layers:
                    if widget not in appeared and widget not in resized:
                        continue
                    if widget._size_updated(region.size, virtual, container):  # noqa: SLF001
                        widget.post_message(events.Resize(region.size, virtual, container))
                    if region.area and clip.contains_region(region):
                        widget.render_lines(Region(0, 0, region.width, region.height))
            finally:
                tab.display = False
                for child in shown:
                    child.display = True
                compositor.reflow(screen, size)

    def _hung_up(self) -> None:
        self.exit(return_code=hangup.HANGUP_STATUS)  # as if the hang-up had reached us

    # -- panes ------------------------------------------------------------------------
    def pane(self, pane_id: str) -> Pane:
        """The pane widget with id ``pane_id`` (its widgets exist once it is attached:
        :meth:`attached_pane`)."""
        return self._panes[pane_id]

    async def attached_pane(self, pane_id: str) -> Pane:
        """The pane ``pane_id``, put into its tab and composed first if it was not yet."""
        pane = self._panes[pane_id]
        if pane.parent is None and pane_id not in self._attaching:
            tab = self.query_one(f"#tab-{pane_id}", TabPane)
            self._attaching[pane_id] = tab.mount(pane)
        if (mounting := self._attaching.get(pane_id)) is not None:
            await mounting
        return pane

    def action_show_pane(self, pane_id: str) -> None:
        """Switch to a pane (digits 1–9)."""
        if pane_id == self.active_pane:
            # Already here: only make sure the pane's keys answer (its list has focus).
            pane = self.pane(pane_id)
            focused = self.screen.focused
            if focused is None or pane not in focused.ancestors:
                pane.focus_main()
            return
        # Keys typed after the digit are for the new pane: they wait until it has the focus.
        self.keys.hold(partial(self._pane_ready, pane_id))
        # Drop the focus first: a focused widget left in the old pane would make
        # TabbedContent switch straight back to the pane that holds it.
        self.screen.set_focus(None)
        self.query_one("#panes", TabbedContent).active = f"tab-{pane_id}"

    def _pane_ready(self, pane_id: str) -> bool:
        switcher = self.query_one("#panes", TabbedContent)
        if switcher.active != f"tab-{pane_id}" or self.screen is not self.screen_stack[0]:
            return True  # another pane was asked for since, or a screen came on top
        focused = self.screen.focused
        return focused is not None and self.pane(pane_id) in focused.ancestors_with_self

    @on(TabbedContent.TabActivated, "#panes")
    async def _pane_switched(self, event: TabbedContent.TabActivated) -> None:
        pane_id = (event.pane.id or "").removeprefix("tab-")
        if pane_id and pane_id != self.active_pane:
            self.active_pane = pane_id
            self._moved = True
            try:
                pane = await self.attached_pane(pane_id)
            except (NoMatches, ScreenStackError):  # the app is shutting down
                return
            if self.active_pane != pane_id:
                return  # another pane was asked for while this one was composed
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
        self,
        operation: str,
        /,
        *,
        done: str | Callable[[Any], str] = "",
        form: bool = False,
        restore_point: str | None = None,
        **params: Any,
    ) -> Any:
        """The single writer path: run an operation, say how it went, refresh the panes.

        The operation named ``operation`` (the name every door uses: ``reinforce_lesson``,
        ``delete_slot``) runs in a thread through the operation runner
        (:meth:`tui.service.MemoryService.write`) with ``params`` under their declared
        names, so its parameters are checked and audit, isolation and review apply as at
        any door. A refusal (a :class:`~core.base.errors.MemworkError`) is shown where the
        user is looking: under the fields of the open form (re-raised for the form, which
        stays open; ``form=True`` says the caller is an inline form, like the slot
        editor), or else as an error toast (then None is returned). On success
        ``done`` (a message, or a function of the result) is toasted and the panes
        reload after the caller's own follow-up (e.g. noting the record to select),
        which runs before the caller next awaits.

        ``restore_point`` (a destructive change, named: "deleting slot persona") takes
        an automatic checkpoint first, which ``U`` restores (:mod:`tui.undo`); the toast
        says so. When it cannot be taken, the change is not made.
        """
        point = None
        try:
            if restore_point:
                point = await self.undo.take(restore_point)
            result = await self.io(self.service.write, operation, **params)
        except MemworkError as exc:
            if form or isinstance(self.screen, FormScreen):
                raise
            self.notify(str(exc), title="Not changed", severity="error", timeout=8)
            return None
        message = done(result) if callable(done) else done
        if point is not None and restore_point:
            await self.undo.remember(point, restore_point)
            message = f"{message} · U undoes it (restore point “before {restore_point}”)"
        if message:
            self.notify(message, timeout=8 if point else 4)
        self.call_later(self.store_changed)
        return result

    def store_changed(self) -> None:
        """Tell panes (and a screen that lists records) the store moved (our own write,
        or another process's)."""
        for pane_cls in PANES:
            self.pane(pane_cls.PANE_ID).store_changed()
        for screen in self.screen_stack[1:]:
            if callable(follow := getattr(screen, "store_changed", None)):
                follow()
        self.refresh_counts()

    @work(thread=True, exclusive=True, group="counts", exit_on_error=False)
    def refresh_counts(self) -> None:
        """Count pending proposals and lint findings for the header (in the background)."""
        pending, findings, _reviewing = self.service.header_counts()
        self.call_from_thread(self._show_counts, pending, findings)

    def _show_counts(self, pending: int, findings: int) -> None:
        self.curation_counts = (pending, findings)
        self._fit_title(self.size.width)

    def _fit_title(self, width: int) -> None:
        """The store's place and the waiting work, shortened to the header's room."""
        pending, findings = self.curation_counts or (0, 0)
        room = max(24, width - TITLE_MARGIN - len(self.title) - 3)
        self.sub_title = title_line(self.title_base, pending, findings, room)

    def on_resize(self, event: events.Resize) -> None:
        self._fit_title(event.size.width)
        self._fit_tabs(event.size.width)

    def _fit_tabs(self, width: int) -> None:
        """Every pane's tab in view: full names where they fit, else short ones, else
        short ones with the digit set against the name (an 80-column terminal)."""
        try:
            switcher = self.query_one("#panes", PaneSwitcher)
        except NoMatches:
            return
        fit = tab_labels(PANES, width)
        if fit == self._tab_fit:
            return
        self._tab_fit = fit
        switcher.set_class(fit in ("tight", "mini"), "-tight-tabs")
        for n, pane in enumerate(PANES, start=1):
            switcher.get_tab(f"tab-{pane.PANE_ID}").label = tab_label(n, pane, fit)

    def _commit_heard(self) -> None:
        """A commit was announced (called from the store's listening thread)."""
        try:
            self.call_from_thread(self.check_store)
        except RuntimeError:
            pass  # the app is not running (yet, or any more)

    def on_unmount(self) -> None:
        if self._stop_following is not None:
            self._stop_following()
        if self._hangup_watch is not None:
            self._hangup_watch.set()

    @work(thread=True, exclusive=True, group="poll", exit_on_error=False)
    def check_store(self) -> None:
        """Notice commits by other processes (polled, or pushed by the store)."""
        generation = self.service.generation()
        if generation != self._generation:
            first = self._generation == -1
            self._generation = generation
            if not first:
                self.call_from_thread(self.store_changed)

    # -- clipboard --------------------------------------------------------------------
    async def copy_out(
        self, text: str, what: str, *, severity: SeverityLevel = "information"
    ) -> None:
        """Copy ``text`` to the terminal's clipboard (OSC 52) and, when there is one, the
        local clipboard tool; then say what was done with it (``what``: "3,985 characters")."""
        self.copy_to_clipboard(text)
        tool = clipboard.local_tool()
        error = None
        if tool is not None:
            error = await self.io(clipboard.copy_locally, text, tool)
        title, message = clipboard.report(
            what,
            clipboard.tool_name(tool) if tool else None,
            error,
            in_tmux=bool(os.environ.get("TMUX")),
        )
        self.notify(message, title=title, severity=severity, timeout=8)

    # -- search -----------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="search-index", exit_on_error=False)
    def refresh_search_index(self, only_if_stale: bool = False) -> None:
        """Rebuild the fuzzy-search index in the background (``only_if_stale``: only when
        the store has moved since it was built)."""
        if only_if_stale and self.search_index is not None:
            if self.service.generation() == self.search_generation:
                return
        with big_load():  # no full collection pass while the index grows
            generation, index = self.service.search_index()
        # One assignment each: the search screen reads them from the UI thread.
        self.search_index = index
        self.search_generation = generation

    def action_search(self) -> None:
        """Filter the list that has the focus (its rows that hold the typed words); with
        no list focused, search all memory."""
        focused = self.screen.focused
        if isinstance(focused, VirtualTable):
            from .screens.list_filter import ListFilterScreen

            self.push_screen(ListFilterScreen(focused))
            return
        self.action_search_all()

    def action_search_all(self) -> None:
        """Fuzzy search over all memory."""
        from .screens.search import SearchScreen

        if self.search_generation != self._generation:
            self.refresh_search_index()
        self.push_screen(SearchScreen())

    # -- misc -------------------------------------------------------------------------
    def action_lint(self) -> None:
        """The lint findings, each record they name: open it, or fix it from there."""
        from .screens.findings import FindingsScreen

        self.push_screen(FindingsScreen())

    def action_help(self) -> None:
        """Every key, per pane."""
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen(PANES, current=self.active_pane))

    def action_quit_safely(self) -> None:
        """Quit, asking first when a pane holds unsaved edits."""
        unsaved = [w for cls in PANES if (w := self.pane(cls.PANE_ID).unsaved_work())]
        if not unsaved:
            self.exit()
            return
        from .screens.confirm import ConfirmScreen

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit()

        self.push_screen(
            ConfirmScreen("Quit and lose unsaved edits?", "; ".join(unsaved), confirm="Quit"),
            answered,
        )

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        """A toast. Unlike Textual's, its text is shown as typed by default: toasts
        carry record text (a rule's ``[AVOID]``), which must never be read as markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_notify(self, event: Notify) -> None:
        """A new toast replaces the ones on screen (three stacked covered half a list at
        80x24); an error stays beside it until it times out, as it may still be read."""
        # Runs before App's own handler, which adds the new toast and redraws the rack.
        errors = [n for n in self._notifications if n.severity == "error"]
        kept = errors[-1:] if event.notification.severity != "error" else []
        for old in list(self._notifications):
            if old not in kept:
                self._unnotify(old, refresh=False)

    def _dialog_opened(self, screen: Screen[Any]) -> None:
        """Take the start note down once a dialog opens: for its 30 s it would cover the
        dialog's buttons at 80x24 (``?`` shows the note again)."""
        if not isinstance(screen, ModalScreen):
            return
        for shown in list(self._notifications):
            if shown.message == self.start_note:
                self._unnotify(shown)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Textual's palette commands but its Quit: ours (q) asks about unsaved edits and
        is listed already."""
        for command in super().get_system_commands(screen):
            if command.title != "Quit":
                yield command

    def action_help_quit(self) -> None:
        """ctrl+c copies in a text field; elsewhere it tells how to quit."""
        self.notify("Press q or ctrl+q to quit", title="Do you want to quit?")

    def action_undo(self) -> None:
        """Undo the last destructive change made here (tui/undo.py)."""
        self.undo.action_undo()

    def action_reload(self) -> None:
        """Reload everything from the store."""
        self.store_changed()
        self.notify("Reloaded from the store", timeout=2)

    def action_toggle_theme(self) -> None:
        """Switch between the dark and the light theme."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"


def make_app(
    store: Store | str | Path,
    *,
    title_suffix: str | None = None,
    show_location: bool = False,
    poll: bool = True,
    prepare: bool = True,
) -> MemworkApp:
    """Build the workbench for a store (a Store, or a path to open).

    ``title_suffix`` names the store in the title instead of its place, unless
    ``show_location`` (then both, and the help names its ``MEMWORK_DB``).
    ``poll=False`` stops the store polling and ``prepare=False`` the loading of
    hidden panes in idle time (tests that must see a pane load on first show).
    """
    from .launch import open_store

    if not isinstance(store, Store):  # a location to open
        store = open_store(store)
    return MemworkApp(
        store, title_suffix=title_suffix, show_location=show_location, poll=poll, prepare=prepare
    )
