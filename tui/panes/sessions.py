"""Sessions: each agent run with its observation timeline and its working memory.

The list of sessions sits top left with the selected session's working memory
under it (:class:`~tui.widgets.working_memory.WorkingMemoryPanel`), so the
right side can give the session's header and its observation timeline
(:class:`~tui.widgets.session_timeline.SessionTimeline`) the full height. Once a
second the TTL countdown and an active session's running time move on without
a store read. The actions' forms live in :mod:`tui.panes.session_forms`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from ..service import SessionDetail
from ..widgets.bars import plural, short_stamp
from ..widgets.session_timeline import SessionTimeline, untitled
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from ..widgets.welcome import Welcome
from ..widgets.working_memory import WorkingMemoryPanel
from . import session_forms as forms
from .base import Pane

TICK_SECONDS = 1.0


class SessionsPane(Pane):
    """Sessions and the selected one's working memory on the left, its timeline on the right."""

    PANE_ID = "sessions"
    TITLE = "Sessions"
    HELP = (
        "Tab moves from the sessions list to the working memory's keys, scratchpad and "
        "checkpoints, then to the observation timeline. d and r act on the focused keys and "
        "checkpoints lists. Delete forgets the selected session for good (in the timeline, "
        "the observation under the cursor), after a confirmation. w opens the work items "
        "(▶ marks what can be done now). f shows one agent's sessions at a time (all, "
        "each agent, then sessions of no agent): the workbench sees every agent's memory "
        "even while the store isolates agents. TTLs count down live; the "
        "timeline follows new observations while its cursor is on the last row."
    )
    PALETTE_ANYWHERE = frozenset({"new_session", "work", "agent_filter"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "observe", "Observe", tooltip="Add an observation to the session"),
        Binding("s", "set_key", "Set key", tooltip="Set a working-memory key (with a TTL)"),
        Binding("d", "delete_key", "Delete key", tooltip="Delete the selected key"),
        Binding("t", "task", "Task", tooltip="Edit the session's task state"),
        Binding("a", "scratch", "Scratch", tooltip="Add a scratchpad note"),
        Binding("c", "checkpoint", "Checkpoint", tooltip="Checkpoint the working memory"),
        Binding("r", "restore", "Restore", tooltip="Restore the selected wm checkpoint"),
        Binding("e", "end_session", "End", tooltip="End the session with a summary"),
        Binding("n", "new_session", "New", tooltip="Start a new session"),
        Binding("w", "work", "Work", tooltip="The work items and what can be done now"),
        # Out of the footer (it is full at 120 columns): in the help, the palette, and
        # the list's status line while a filter is on.
        Binding(
            "f",
            "agent_filter",
            "Agent",
            tooltip="Show one agent's sessions (cycles)",
            show=False,
        ),
        Binding(
            "delete",
            "forget",
            "Forget",
            tooltip="Delete the session (in the timeline: the observation) for good",
        ),
    ]

    #: Shown (and active) only while their table has the focus, so the footer stays short.
    FOCUSED_ACTIONS: ClassVar[dict[str, str]] = {
        "delete_key": "wm-keys",
        "restore": "wm-checkpoints",
    }

    def __init__(self) -> None:
        super().__init__()
        self.sessions: dict[str, dict[str, Any]] = {}
        self.detail: SessionDetail | None = None
        #: Set by a form: the timeline follows the next reload to its newest row.
        self.follow_once = False
        self._pending_session: str | None = None
        self._pending_observation: str | None = None
        #: Every session loaded, before the agent filter.
        self.all_rows: list[dict[str, Any]] = []
        #: The agent whose sessions show (None: every agent; "": sessions of no agent).
        self.agent_filter: str | None = None

    def compose(self) -> ComposeResult:
        yield Welcome()  # an empty store: where it is and how agents reach it
        with Horizontal(classes="split"):
            with Vertical(classes="list-column", id="sessions-left"):
                yield Static("", id="sessions-status", classes="pane-toolbar")
                yield VirtualTable(
                    [
                        Column("status", "", width=1),
                        Column("agent", "Agent", width=7, drop_order=2),
                        Column("project", "Project", width=8, drop_order=1),
                        Column("title", "Title", min_width=14),
                        Column("started", "Started", width=11, drop_order=3),
                        Column("obs", "Obs", width=4, justify="right"),
                    ],
                    id="sessions",
                    empty_text="Loading sessions…",
                )
                yield WorkingMemoryPanel()
            yield SessionTimeline(id="session-detail")

    @property
    def wm_panel(self) -> WorkingMemoryPanel:
        """The selected session's working memory."""
        return self.query_one(WorkingMemoryPanel)

    @property
    def timeline(self) -> SessionTimeline:
        """The selected session's header and observations."""
        return self.query_one(SessionTimeline)

    def on_mount(self) -> None:
        self.set_interval(TICK_SECONDS, self._tick)

    def focus_main(self) -> None:
        self.query_one("#sessions", VirtualTable).focus()

    def activate(self) -> None:
        super().activate()
        # The first pane is on screen before anyone switches to it: take the focus so
        # its keys show in the footer (unless the user already focused something here).
        self.call_after_refresh(self._claim_focus)

    def _claim_focus(self) -> None:
        focused = self.screen.focused
        if self.active and (focused is None or self not in focused.ancestors):
            self.focus_main()

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        wanted = self._pending_session or self.query_one("#sessions", VirtualTable).cursor_key
        self._load(wanted)

    @work(thread=True, exclusive=True, group="sessions-load", exit_on_error=False)
    def _load(self, wanted: str | None) -> None:
        rows, detail = self.service.sessions_and_detail(wanted)
        empty = not rows and self.service.is_empty()
        self.deliver(self._show_sessions, rows, detail)
        self.deliver(self._show_welcome, self.service.location() if empty else None)

    @work(thread=True, exclusive=True, group="sessions-detail", exit_on_error=False)
    def _load_detail(self, session_id: str) -> None:
        self.deliver(self._show_detail, self.service.session_detail(session_id))

    def _show_welcome(self, location: str | None) -> None:
        """An empty store: where it is and how to point an agent at it (None hides it)."""
        self.query_one(Welcome).show_for(location)

    def select_after_load(self, session_id: str | None) -> None:
        """Select ``session_id`` when the reload that follows a write lands."""
        self._pending_session = session_id

    def _show_sessions(self, rows: list[dict[str, Any]], detail: SessionDetail | None) -> None:
        self.all_rows = rows
        if self.agent_filter is not None:
            rows = [r for r in rows if (r.get("agent_id") or "") == self.agent_filter]
            if detail is not None and detail.session["id"] not in {r["id"] for r in rows}:
                detail = None
        self.sessions = {r["id"]: r for r in rows}
        table = self.query_one("#sessions", VirtualTable)
        table.empty_text = "No sessions yet: agents start one, or press n"
        keep = self._pending_session if self._pending_session in self.sessions else None
        table.set_source(
            ListRowSource([self._session_row(r) for r in rows]), keep_key=keep or table.cursor_key
        )
        if keep:
            self._pending_session = None
        active = sum(1 for r in rows if r["status"] == "active")
        status = Text.assemble(
            (plural(len(rows), "session"), "bold"),
            " · ",
            (f"{active} active", "green" if active else "bright_black"),
        )
        if self.agent_filter is not None:
            status.append(" · agent ")
            status.append(self.agent_filter or "(none)", "bold magenta")
        self.query_one("#sessions-status", Static).update(status)
        selected = table.cursor_key
        if detail is not None and detail.session["id"] == selected:
            self._show_detail(detail)
        elif selected is not None:
            self._load_detail(selected)
        else:
            self._show_detail(None)

    @staticmethod
    def _session_row(s: dict[str, Any]) -> Row:
        active = s["status"] == "active"
        count = Text(str(s["total_observed"]))
        if s["dropped_observations"]:
            count.stylize("yellow")
        return Row(
            [
                Text("●", style="bold green") if active else Text("○", "bright_black"),
                s["agent_id"] or Text("—", "bright_black"),
                s["project"] or Text("—", "bright_black"),
                s["title"] or untitled(s),
                short_stamp(s["started_at"]),
                count,
            ],
            key=s["id"],
        )

    # -- the selected session ---------------------------------------------------------
    def selected_session(self) -> dict[str, Any] | None:
        """The session under the list's cursor."""
        key = self.query_one("#sessions", VirtualTable).cursor_key
        return self.sessions.get(key) if key else None

    @on(VirtualTable.CursorMoved, "#sessions")
    def _session_moved(self, event: VirtualTable.CursorMoved) -> None:
        if event.key and (self.detail is None or self.detail.session["id"] != event.key):
            self._load_detail(event.key)

    def _show_detail(self, detail: SessionDetail | None) -> None:
        if (
            detail is not None
            and detail.session["id"] != self.query_one("#sessions", VirtualTable).cursor_key
        ):
            return  # the user moved on; their session's detail is on its way
        previous = self.detail
        self.detail = detail
        same = (
            previous is not None
            and detail is not None
            and previous.session["id"] == detail.session["id"]
        )
        self.timeline.show(
            detail.session if detail else None,
            detail.observations if detail else [],
            same_session=same,
            select=self._pending_observation,
            follow=self.follow_once,
        )
        self._pending_observation = None
        self.follow_once = False
        self.wm_panel.show(detail.wm if detail else None, self.service.now, same_session=same)
        self.refresh_bindings()

    def _tick(self) -> None:
        """Once a second: TTLs count down and expired keys leave, without a store read."""
        if self.detail is None or not self.active:
            return
        now = self.service.now
        self.wm_panel.tick(now)
        self.timeline.tick(now)

    # -- focus-dependent bindings -----------------------------------------------------
    def _focused_id(self) -> str | None:
        focused = self.screen.focused
        return focused.id if focused is not None else None

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.FOCUSED_ACTIONS:
            return self._focused_id() == self.FOCUSED_ACTIONS[action]
        session = self.detail.session if self.detail else None
        if session is None:
            # Nothing to act on: New and Work, and the agent filter while it hides some.
            return action in ("new_session", "work") or (
                action == "agent_filter" and bool(self.all_rows)
            )
        if action == "end_session" and session["status"] == "ended":
            return False  # an ended session cannot end again: not in the footer
        return True

    #: Where the focus-dependent keys work, for a key pressed elsewhere.
    WORKS_IN: ClassVar[dict[str, str]] = {
        "wm-keys": "the working-memory keys list",
        "wm-checkpoints": "the working-memory checkpoint list",
    }

    def why_not(self, action: str) -> str | None:
        if action in self.FOCUSED_ACTIONS:
            where = self.WORKS_IN[self.FOCUSED_ACTIONS[action]]
            return f"{self.key_name(action)} works in {where}: Tab to it first"
        session = self.detail.session if self.detail else None
        if session is None:
            return "No session selected: n starts one"
        if action == "end_session" and session["status"] == "ended":
            return "This session has already ended"
        return None

    def jump_to(self, ref: str) -> None:
        session_id, _, observation_id = ref.partition("/")
        if self.agent_filter is not None and session_id not in self.sessions:
            self.agent_filter = None  # a jump shows its session, whoever's it is
        self._pending_session = session_id
        self._pending_observation = observation_id or None
        table = self.query_one("#sessions", VirtualTable)
        index = (
            table.source.index_of(session_id) if isinstance(table.source, ListRowSource) else None
        )
        if index is None:
            self.reload()  # not loaded (yet): the load selects it
            return
        self._pending_session = None
        if table.cursor_row != index:
            table.move_cursor(index)  # the detail loads and selects the observation
        elif self.detail is not None and self.detail.session["id"] == session_id:
            self._show_detail(self.detail)
        if not observation_id:
            table.focus()

    # -- actions (their forms: tui/panes/session_forms.py) ----------------------------
    def _need_session(self) -> dict[str, Any] | None:
        session = self.detail.session if self.detail else None
        if session is None:
            self.warn("Select a session first")
        return session

    def action_work(self) -> None:
        from ..screens.work import WorkScreen

        self.app.push_screen(WorkScreen())

    def agents(self) -> list[str]:
        """The agent filter's choices, in cycling order: each agent with a session, then
        "" when some session has no agent."""
        named = sorted({r["agent_id"] for r in self.all_rows if r.get("agent_id")})
        return named + ([""] if any(not r.get("agent_id") for r in self.all_rows) else [])

    def action_agent_filter(self) -> None:
        """Show the next agent's sessions (after the last, every session again)."""
        choices: list[str | None] = [None, *self.agents()]
        at = choices.index(self.agent_filter) if self.agent_filter in choices else 0
        self.agent_filter = choices[(at + 1) % len(choices)]
        # The list's status line says whose; no toast (it would hide the rows).
        self._show_sessions(self.all_rows, self.detail)

    def action_new_session(self) -> None:
        forms.new_session(self)

    def action_end_session(self) -> None:
        if (session := self._need_session()) is None:
            return
        if session["status"] == "ended":
            self.warn("This session has already ended")
            return
        forms.end_session(self, session)

    def action_observe(self) -> None:
        if (session := self._need_session()) is not None:
            forms.observe(self, session)

    def action_set_key(self) -> None:
        if (session := self._need_session()) is None:
            return
        current = None
        if self._focused_id() == "wm-keys":
            key = self.wm_panel.selected_key()
            live = self.wm_panel.live_keys(self.service.now)
            current = next((k for k in live if k["key"] == key), None)
        forms.set_key(self, session, current)

    def action_delete_key(self) -> None:
        if (session := self._need_session()) is None:
            return
        key = self.wm_panel.selected_key()
        if key is None:
            self.warn("No key selected")
            return
        forms.delete_key(self, session, key, self.wm_panel.scope_of(key))

    def action_task(self) -> None:
        if (session := self._need_session()) is not None:
            forms.task(self, session, self.detail.wm["task"] if self.detail else None)

    def action_scratch(self) -> None:
        if (session := self._need_session()) is not None:
            forms.scratch(self, session)

    def action_checkpoint(self) -> None:
        if (session := self._need_session()) is not None:
            forms.create_wm_checkpoint(self, session)

    def action_forget(self) -> None:
        """Delete for good, after a confirmation: the observation under the timeline's
        cursor when the timeline has the focus, else the whole session."""
        if (session := self._need_session()) is None:
            return
        if self._focused_id() == "timeline":
            key = self.timeline.table.cursor_key
            found = next((o for o in self.timeline.observations if o["id"] == key), None)
            if found is not None:
                forms.forget_observation(self, session, found)
                return
        forms.forget_session(self, session)

    def action_restore(self) -> None:
        if (session := self._need_session()) is None:
            return
        checkpoint = self.wm_panel.selected_checkpoint()
        if checkpoint is None:
            self.warn("No checkpoint selected")
            return
        forms.restore_wm_checkpoint(self, session, checkpoint)
