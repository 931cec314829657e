"""Sessions: each agent run with its observation timeline and its working memory.

The list of sessions sits top left with the selected session's working memory
under it — keys with a live TTL countdown, the task's progress, the scratchpad
and the working-memory checkpoints — so the right side can give the session's
header and its observation timeline the full height (newest last; the view
follows new ones while the cursor is on the last row). The countdown is
recomputed from ``expires_at`` once a second without touching the store, so an
expired key disappears on its own.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar, Static

from core import sessions as core_sessions
from core import working_memory as core_wm
from core.clock import parse_instant
from core.errors import InvalidInput
from core.storage.store import Store
from tui.panes.base import Pane
from tui.screens.confirm import ConfirmScreen
from tui.screens.form import Field, FormScreen
from tui.widgets.virtual_table import Column, ListRowSource, Row, VirtualTable

#: Observation kind → colour (readable on the dark and the light theme).
KIND_STYLE = {
    "error": "bold red",
    "decision": "blue",
    "tool": "cyan",
    "note": "",
    "warning": "yellow",
    "result": "green",
}
TICK_SECONDS = 1.0
_TTL_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def short_stamp(stamp: str | None) -> str:
    """``11-20 11:10`` from a stored timestamp."""
    return f"{stamp[5:10]} {stamp[11:16]}" if stamp else ""


def _untitled(session: dict[str, Any], *, long: bool = False) -> Text:
    """What stands for a missing title: the id of a session an agent named by first use
    (``run-42``) says which run it is; ``long`` adds that it was made that way."""
    if session.get("implicit"):
        note = " (implicit: created by its first use)" if long else ""
        return Text(f"{session['id']}{note}", "italic bright_black")
    return Text("untitled", "italic bright_black")


def duration(seconds: float | None) -> str:
    """``2h 05m`` / ``4m 10s`` / ``12s``."""
    if seconds is None:
        return ""
    seconds = int(seconds)
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def ttl_text(expires_at: str | None, now: datetime) -> Text:
    """A key's remaining time, coloured as it runs out (``—`` without a TTL)."""
    if not expires_at:
        return Text("no TTL", style="bright_black")
    left = core_wm.remaining_ttl({"expires_at": expires_at}, now) or 0.0
    style = "bold red" if left < 60 else ("yellow" if left < 300 else "green")
    return Text(duration(left), style=style)


def parse_ttl(text: str) -> float | None:
    """``90``, ``90s``, ``5m``, ``2h``, ``1d`` → seconds; empty → no TTL."""
    text = text.strip().lower()
    if not text:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text)
    if not match:
        raise InvalidInput("ttl", f"must be seconds, or a number with s, m, h or d (got {text!r})")
    return core_wm.check_ttl(float(match.group(1)) * _TTL_UNITS[match.group(2)])


def value_text(value: Any) -> str:
    """A stored value as typed (strings verbatim, anything else as compact JSON)."""
    if isinstance(value, str):
        return value
    import orjson

    return orjson.dumps(value).decode()


def read_detail(store: Store, session_id: str, now: datetime) -> dict[str, Any]:
    """Everything the right-hand side shows for one session (one consistent read)."""
    return {
        "session": core_sessions.get_session(store, session_id, now),
        "observations": core_sessions.observations(store, session_id),
        "wm": core_wm.snapshot(store, session_id, now=now),
    }


def _optional_int(text: str, field: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(field, f"must be a whole number (got {text!r})") from None


def _optional_float(text: str, field: str) -> float | None:
    text = text.strip().rstrip("%")
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise InvalidInput(field, f"must be a number from 0 to 100 (got {text!r})") from None


class SessionsPane(Pane):
    """Sessions and the selected one's working memory on the left, its timeline on the right."""

    PANE_ID = "sessions"
    TITLE = "Sessions"
    HELP = (
        "Tab moves between the sessions, the timeline, the keys, the scratchpad and the "
        "checkpoints. TTLs count down live; the timeline follows new observations while its "
        "cursor is on the last row."
    )
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("o", "observe", "Observe"),
        Binding("s", "set_key", "Set key"),
        Binding("d", "delete_key", "Delete key"),
        Binding("t", "task", "Task"),
        Binding("a", "scratch", "Scratch"),
        Binding("c", "checkpoint", "Checkpoint"),
        Binding("r", "restore", "Restore"),
        Binding("e", "end_session", "End"),
        Binding("n", "new_session", "New"),
    ]

    #: Shown (and active) only while their table has the focus, so the footer stays short.
    FOCUSED_ACTIONS: ClassVar[dict[str, str]] = {
        "delete_key": "wm-keys",
        "restore": "wm-checkpoints",
    }
    #: Table → what it says when empty (with a session selected).
    EMPTY_TEXT: ClassVar[dict[str, str]] = {
        "timeline": "No observations yet (o adds one)",
        "wm-keys": "No keys (s sets one)",
        "wm-scratch": "Scratchpad empty (a adds a note)",
        "wm-checkpoints": "No checkpoints (c creates one)",
    }

    def __init__(self) -> None:
        super().__init__()
        self.sessions: dict[str, dict[str, Any]] = {}
        self.detail: dict[str, Any] | None = None
        self._pending_session: str | None = None
        self._pending_observation: str | None = None
        self._follow_once = False

    def compose(self) -> ComposeResult:
        with Horizontal(classes="split"):
            with Vertical(classes="list-column", id="sessions-left"):
                yield Static("", id="sessions-status", classes="pane-toolbar")
                yield VirtualTable(
                    [
                        Column("status", "", width=1),
                        Column("agent", "Agent", width=7),
                        Column("project", "Project", width=8),
                        Column("title", "Title", min_width=8),
                        Column("started", "Started", width=11),
                        Column("obs", "Obs", width=4, justify="right"),
                    ],
                    id="sessions",
                    empty_text="No sessions yet: agents start one, or press n",
                )
                yield Label("Working memory", classes="section-title", id="wm-title")
                with Horizontal(id="wm-task"):
                    yield Static("", id="task-line")
                    yield ProgressBar(total=100, show_eta=False, id="task-progress")
                yield Static("", id="task-description")
                yield VirtualTable(
                    [
                        Column("key", "Key", min_width=6),
                        Column("value", "Value", min_width=6),
                        Column("ttl", "TTL", width=7, justify="right"),
                    ],
                    id="wm-keys",
                    empty_text="No keys (s sets one)",
                )
                yield VirtualTable(
                    [Column("time", "Time", width=5), Column("text", "Scratchpad")],
                    id="wm-scratch",
                    empty_text="Scratchpad empty (a adds a note)",
                )
                yield VirtualTable(
                    [
                        Column("created", "Checkpoint", width=11),
                        Column("description", "Description"),
                        Column("holds", "Holds", width=15),
                    ],
                    id="wm-checkpoints",
                    empty_text="No checkpoints (c creates one)",
                )
            with Vertical(id="session-detail"):
                yield Static("", id="session-header")
                yield Label("Observations", classes="section-title", id="timeline-title")
                yield VirtualTable(
                    [
                        Column("time", "Time", width=5),
                        Column("kind", "Kind", width=8),
                        Column("content", "Content"),
                    ],
                    id="timeline",
                    empty_text="No observations yet (o adds one)",
                )
                yield Static("", id="observation-detail")

    def on_mount(self) -> None:
        self.set_interval(TICK_SECONDS, self._tick)
        self.query_one("#task-progress", ProgressBar).display = False

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
        now = self.service.now

        def read(store: Store) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
            rows = core_sessions.list_sessions(store, now)
            ids = [r["id"] for r in rows]
            sid = wanted if wanted in ids else (ids[0] if ids else None)
            return rows, (read_detail(store, sid, now) if sid else None)

        rows, detail = self.service.read(read)
        self.app.call_from_thread(self._show_sessions, rows, detail)

    @work(thread=True, exclusive=True, group="sessions-detail", exit_on_error=False)
    def _load_detail(self, session_id: str) -> None:
        detail = self.service.read(read_detail, session_id, self.service.now)
        self.app.call_from_thread(self._show_detail, detail)

    def _show_sessions(self, rows: list[dict[str, Any]], detail: dict[str, Any] | None) -> None:
        self.sessions = {r["id"]: r for r in rows}
        table = self.query_one("#sessions", VirtualTable)
        keep = self._pending_session if self._pending_session in self.sessions else None
        table.set_source(
            ListRowSource([self._session_row(r) for r in rows]), keep_key=keep or table.cursor_key
        )
        if keep:
            self._pending_session = None
        active = sum(1 for r in rows if r["status"] == "active")
        self.query_one("#sessions-status", Static).update(
            Text.assemble(
                (f"{len(rows)} sessions", "bold"),
                " · ",
                (f"{active} active", "green" if active else "bright_black"),
            )
        )
        selected = table.cursor_key
        if detail is not None and detail["session"]["id"] == selected:
            self._show_detail(detail)
        elif selected is not None:
            self._load_detail(selected)
        else:
            self._show_detail(None)

    def _session_row(self, s: dict[str, Any]) -> Row:
        active = s["status"] == "active"
        count = Text(str(s["total_observed"]))
        if s["dropped_observations"]:
            count.stylize("yellow")
        return Row(
            [
                Text("●", style="bold green") if active else Text("○", "bright_black"),
                s["agent_id"] or Text("—", "bright_black"),
                s["project"] or Text("—", "bright_black"),
                s["title"] or _untitled(s),
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
        if event.key and (self.detail is None or self.detail["session"]["id"] != event.key):
            self._load_detail(event.key)

    def _show_detail(self, detail: dict[str, Any] | None) -> None:
        if (
            detail is not None
            and detail["session"]["id"] != self.query_one("#sessions", VirtualTable).cursor_key
        ):
            return  # the user moved on; their session's detail is on its way
        previous = self.detail
        self.detail = detail
        same = (
            previous is not None
            and detail is not None
            and previous["session"]["id"] == detail["session"]["id"]
        )
        self._render_header()
        self._render_timeline(same)
        self._render_wm(same)
        self.refresh_bindings()

    def _render_header(self) -> None:
        header = self.query_one("#session-header", Static)
        if self.detail is None:
            header.update(Text("No session selected", style="bright_black"))
            return
        s = self.detail["session"]
        active = s["status"] == "active"
        dropped = s["dropped_observations"]
        parts: list[Any] = [
            (s["title"] or _untitled(s, long=True).plain, "bold"),
            "\n",
            ("● active" if active else "○ ended", "bold green" if active else "bright_black"),
            ("  agent ", "bright_black"),
            s["agent_id"] or "—",
            ("  project ", "bright_black"),
            s["project"] or "—",
            ("  observed ", "bright_black"),
            str(s["total_observed"]),
            (f" ({dropped} oldest dropped)", "yellow") if dropped else "",
            "\n",
            ("started ", "bright_black"),
            short_stamp(s["started_at"]),
        ]
        if active:
            parts += [("  running for ", "bright_black"), duration(s["duration_seconds"])]
        else:
            parts += [
                ("  ended ", "bright_black"),
                short_stamp(s.get("ended_at")),
                ("  ran ", "bright_black"),
                duration(s["duration_seconds"]),
            ]
        parts += [("  ", ""), (s["id"], "bright_black"), "\n"]
        if s.get("summary"):
            parts += [("summary ", "bright_black"), s["summary"]]
        else:
            parts.append(
                ("no summary yet (e ends the session with one)", "italic bright_black")
                if active
                else ("no summary", "italic bright_black")
            )
        header.update(Text.assemble(*parts))

    def _render_timeline(self, same_session: bool) -> None:
        table = self.query_one("#timeline", VirtualTable)
        observations = self.detail["observations"] if self.detail else []
        rows = []
        day = observations[0]["created_at"][:10] if observations else ""
        for o in observations:
            content = self._content(o)
            if o["created_at"][:10] != day:
                # A session that runs past midnight: the first observation of each new
                # day carries the date, so the HH:MM column stays narrow.
                day = o["created_at"][:10]
                content = Text.assemble((f"{day[5:]} ▸ ", "bold bright_black"), content)
            rows.append(
                Row(
                    [
                        Text(o["created_at"][11:16]),
                        Text(o["kind"], style=KIND_STYLE.get(o["kind"], "blue")),
                        content,
                    ],
                    key=o["id"],
                )
            )
        at_end = table.row_count == 0 or table.cursor_row >= table.row_count - 1
        keep = table.cursor_key if same_session else None
        table.set_source(ListRowSource(rows), keep_key=keep)
        if self._pending_observation is not None:
            target = next(
                (i for i, o in enumerate(observations) if o["id"] == self._pending_observation),
                None,
            )
            self._pending_observation = None
            if target is not None:
                table.move_cursor(target)
                table.focus()
        elif not same_session or at_end or self._follow_once:
            table.move_cursor(len(rows) - 1)
        self._follow_once = False
        self._render_observation()
        title = self.query_one("#timeline-title", Label)
        total = self.detail["session"]["total_observed"] if self.detail else 0
        kept = len(observations)
        if self.detail is None:
            title.update("Observations")
        elif kept == total:
            title.update(f"Observations ({kept})")
        else:
            title.update(f"Observations ({kept} of {total}; the oldest were dropped)")

    @on(VirtualTable.CursorMoved, "#timeline")
    def _observation_moved(self) -> None:
        self._render_observation()

    def _render_observation(self) -> None:
        """The observation under the timeline's cursor, in full."""
        detail = self.query_one("#observation-detail", Static)
        key = self.query_one("#timeline", VirtualTable).cursor_key
        found = None
        if self.detail is not None and key is not None:
            found = next((o for o in self.detail["observations"] if o["id"] == key), None)
        if found is None:
            detail.update("")
            detail.display = False
            return
        detail.display = True
        detail.update(
            Text.assemble(
                (f"#{found['seq']} ", "bright_black"),
                (found["kind"], KIND_STYLE.get(found["kind"], "blue") or "bold"),
                (f"  {found['created_at'][:19].replace('T', ' ')}", "bright_black"),
                ("  " + "  ".join(f"#{t}" for t in found.get("tags") or []), "bright_black"),
                ("  logged after the session ended", "italic yellow")
                if found.get("after_end")
                else "",
                "\n",
                found["content"],
            )
        )

    @staticmethod
    def _content(o: dict[str, Any]) -> Text:
        text = Text(o["content"])
        for tag in o.get("tags") or []:
            text.append(f" #{tag}", style="bright_black")
        if o.get("after_end"):
            text.append(" (after end)", style="italic yellow")
        return text

    def _render_wm(self, same_session: bool) -> None:
        wm = self.detail["wm"] if self.detail else None
        for table_id, text in self.EMPTY_TEXT.items():
            table = self.query_one(f"#{table_id}", VirtualTable)
            table.empty_text = (
                text if wm else ("No session selected" if table_id == "timeline" else "")
            )
        self._render_keys()
        self._render_task()
        scratch = self.query_one("#wm-scratch", VirtualTable)
        entries = wm["scratchpad"] if wm else []
        at_end = scratch.row_count == 0 or scratch.cursor_row >= scratch.row_count - 1
        scratch.set_source(
            ListRowSource(
                [
                    Row([Text(e["ts"][11:16], style="bright_black"), e["text"]], key=str(i))
                    for i, e in enumerate(entries)
                ]
            ),
        )
        if not same_session or at_end:
            scratch.move_cursor(len(entries) - 1)
        checkpoints = self.query_one("#wm-checkpoints", VirtualTable)
        rows = []
        for cp in wm["checkpoints"] if wm else []:
            holds = f"{cp['keys']} keys, {cp['scratch_entries']} notes"
            rows.append(
                Row(
                    [
                        short_stamp(cp["created_at"]),
                        cp["description"] or Text("no description", "italic bright_black"),
                        Text(holds, style="bright_black"),
                    ],
                    key=cp["id"],
                )
            )
        checkpoints.set_source(
            ListRowSource(rows), keep_key=checkpoints.cursor_key if same_session else None
        )

    def live_keys(self, now: datetime) -> list[dict[str, Any]]:
        """The selected session's keys that have not expired at ``now``."""
        if self.detail is None:
            return []
        return [
            k
            for k in self.detail["wm"]["keys"]
            if not k["expires_at"] or parse_instant(k["expires_at"]) > now
        ]

    def _render_keys(self) -> None:
        now = self.service.now
        table = self.query_one("#wm-keys", VirtualTable)
        rows = [
            Row(
                [
                    Text(k["key"], style="bold"),
                    value_text(k["value"]),
                    ttl_text(k["expires_at"], now),
                ],
                key=k["key"],
            )
            for k in self.live_keys(now)
        ]
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)

    def _render_task(self) -> None:
        line = self.query_one("#task-line", Static)
        description = self.query_one("#task-description", Static)
        bar = self.query_one("#task-progress", ProgressBar)
        task = self.detail["wm"]["task"] if self.detail else None
        if not task:
            line.update(
                Text("No task (t sets one)" if self.detail else "", style="italic bright_black")
            )
            description.update("")
            bar.display = False
            return
        step, total = task.get("current_step"), task.get("total_steps")
        steps: Any = ""
        if step is not None or total is not None:
            steps = (
                ("  step ", "bright_black"),
                f"{'-' if step is None else step}/{'?' if total is None else total}",
            )
        done = task["status"] in ("done", "completed", "finished", "success")
        line.update(
            Text.assemble(
                (task["task_id"], "bold"),
                "  ",
                (task["status"], "green" if done else "yellow"),
                *(steps or ()),
            )
        )
        description.update(Text(task.get("description") or "", style="bright_black"))
        bar.display = True
        bar.update(total=100, progress=task["progress_percent"])

    def _tick(self) -> None:
        """Once a second: TTLs count down and expired keys leave, without a store read."""
        if self.detail is None or not self.active:
            return
        self._render_keys()
        if self.detail["session"]["status"] == "active":
            now = self.service.now
            s = self.detail["session"]
            s["duration_seconds"] = max(0.0, (now - parse_instant(s["started_at"])).total_seconds())
            self._render_header()

    # -- focus-dependent bindings -----------------------------------------------------
    def _focused_id(self) -> str | None:
        focused = self.screen.focused
        return focused.id if focused is not None else None

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.FOCUSED_ACTIONS:
            return self._focused_id() == self.FOCUSED_ACTIONS[action]
        session = self.detail["session"] if self.detail else None
        if session is None and action != "new_session":
            return False  # nothing to act on: only "New" applies
        if action == "end_session" and session["status"] == "ended":
            return None  # shown, dimmed: an ended session cannot end again
        return True

    def jump_to(self, ref: str) -> None:
        session_id, _, observation_id = ref.partition("/")
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
        elif self.detail is not None and self.detail["session"]["id"] == session_id:
            self._render_timeline(True)
        if not observation_id:
            table.focus()

    # -- actions ----------------------------------------------------------------------
    def _need_session(self) -> dict[str, Any] | None:
        session = self.detail["session"] if self.detail else None
        if session is None:
            self.app.notify("Select a session first", severity="warning")
        return session

    def action_new_session(self) -> None:
        async def submit(values: dict[str, str]) -> Any:
            session = await self.workbench.io(
                self.service.write,
                core_sessions.start_session,
                agent_id=values["agent"],
                project=values["project"],
                title=values["title"],
            )
            self._pending_session = session["id"]
            self.workbench.store_changed()
            self.app.notify("Session started")
            return session

        self.app.push_screen(
            FormScreen(
                "Start a session",
                [
                    Field("title", "Title", placeholder="what this run is about"),
                    Field("agent", "Agent", "tui"),
                    Field("project", "Project", ""),
                ],
                submit,
                save_label="Start",
            )
        )

    def action_end_session(self) -> None:
        session = self._need_session()
        if session is None:
            return
        if session["status"] == "ended":
            self.app.notify("This session has already ended", severity="warning")
            return

        async def submit(values: dict[str, str]) -> Any:
            result = await self.workbench.io(
                self.service.write,
                core_sessions.end_session,
                session["id"],
                summary=values["summary"],
            )
            self.workbench.store_changed()
            self.app.notify("Session ended")
            return result

        self.app.push_screen(
            FormScreen(
                f"End “{session['title'] or session['id']}”?",
                [
                    Field(
                        "summary",
                        "Summary",
                        multiline=True,
                        help="It is marked ended; agents can still log late observations.",
                    )
                ],
                submit,
                save_label="End session",
            )
        )

    def action_observe(self) -> None:
        session = self._need_session()
        if session is None:
            return

        async def submit(values: dict[str, str]) -> Any:
            result = await self.workbench.io(
                self.service.write,
                core_sessions.observe,
                session["id"],
                values["content"],
                kind=values["kind"].strip() or "note",
                tags=[t.strip() for t in values["tags"].split(",") if t.strip()],
            )
            self._follow_once = True
            self.workbench.store_changed()
            self.app.notify("Observation added")
            return result

        self.app.push_screen(
            FormScreen(
                f"Observe in “{session['title'] or session['id']}”",
                [
                    Field("content", "What happened", multiline=True),
                    Field("kind", "Kind", "note", help="note, tool, decision, error, …"),
                    Field("tags", "Tags", "", placeholder="comma separated"),
                ],
                submit,
                save_label="Add",
            )
        )

    def action_set_key(self) -> None:
        session = self._need_session()
        if session is None:
            return
        current: dict[str, Any] | None = None
        if self._focused_id() == "wm-keys":
            key = self.query_one("#wm-keys", VirtualTable).cursor_key
            current = next((k for k in self.live_keys(self.service.now) if k["key"] == key), None)

        async def submit(values: dict[str, str]) -> Any:
            ttl = parse_ttl(values["ttl"])
            result = await self.workbench.io(
                self.service.write,
                core_wm.set_key,
                session["id"],
                values["key"],
                values["value"],
                ttl=ttl,
            )
            self.workbench.store_changed()
            self.app.notify(f"Key {values['key']!r} set")
            return result

        self.app.push_screen(
            FormScreen(
                "Set a working-memory key",
                [
                    Field("key", "Key", current["key"] if current else ""),
                    Field("value", "Value", value_text(current["value"]) if current else ""),
                    Field(
                        "ttl",
                        "TTL",
                        "",
                        placeholder="empty: never expires",
                        help="seconds, or 90s, 5m, 2h, 1d",
                    ),
                ],
                submit,
                save_label="Set",
            )
        )

    def action_delete_key(self) -> None:
        session = self._need_session()
        key = self.query_one("#wm-keys", VirtualTable).cursor_key
        if session is None or key is None:
            if session is not None:
                self.app.notify("No key selected", severity="warning")
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.workbench.write(
                    core_wm.delete_key, session["id"], key, done=f"Key {key!r} deleted"
                )

        self.app.push_screen(
            ConfirmScreen(
                f"Delete key {key!r}?",
                "It leaves this session's working memory (a checkpoint that holds it keeps it).",
            ),
            answered,
        )

    def action_task(self) -> None:
        session = self._need_session()
        if session is None:
            return
        task = self.detail["wm"]["task"] if self.detail else None
        task = task or {}

        def shown(name: str) -> str:
            value = task.get(name)
            return (
                "" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))
            )

        before = {
            n: shown(n) for n in ("task_id", "description", "status", "current_step", "total_steps")
        }
        before["progress"] = shown("progress_percent") if task else ""

        async def submit(values: dict[str, str]) -> Any:
            changed = {k: v for k, v in values.items() if v.strip() != before[k].strip()}
            if not changed:
                return True
            kwargs: dict[str, Any] = {}
            for name in ("task_id", "description", "status"):
                if name in changed:
                    kwargs[name] = changed[name]
            for name in ("current_step", "total_steps"):
                if name in changed:
                    kwargs[name] = _optional_int(changed[name], name)
            if "progress" in changed:
                kwargs["progress_percent"] = _optional_float(changed["progress"], "progress")
            result = await self.workbench.io(
                self.service.write, core_wm.update_task, session["id"], **kwargs
            )
            self.workbench.store_changed()
            self.app.notify("Task updated")
            return result

        self.app.push_screen(
            FormScreen(
                "Task state",
                [
                    Field("task_id", "Task id", before["task_id"]),
                    Field("description", "Description", before["description"]),
                    Field("status", "Status", before["status"] or "in_progress"),
                    Field("current_step", "Step", before["current_step"]),
                    Field("total_steps", "Total steps", before["total_steps"]),
                    Field(
                        "progress",
                        "Progress %",
                        before["progress"],
                        help="0–100; left alone it follows step / total",
                    ),
                ],
                submit,
            )
        )

    def action_scratch(self) -> None:
        session = self._need_session()
        if session is None:
            return

        async def submit(values: dict[str, str]) -> Any:
            result = await self.workbench.io(
                self.service.write, core_wm.scratch_add, session["id"], values["text"]
            )
            self.workbench.store_changed()
            self.app.notify("Scratchpad note added")
            return result

        self.app.push_screen(
            FormScreen(
                "Scratchpad note", [Field("text", "Note", multiline=True)], submit, save_label="Add"
            )
        )

    def action_checkpoint(self) -> None:
        session = self._need_session()
        if session is None:
            return

        async def submit(values: dict[str, str]) -> Any:
            result = await self.workbench.io(
                self.service.write,
                core_wm.create_checkpoint,
                session["id"],
                description=values["description"],
            )
            self.workbench.store_changed()
            self.app.notify("Working-memory checkpoint created")
            return result

        self.app.push_screen(
            FormScreen(
                "Checkpoint this session's working memory",
                [
                    Field(
                        "description",
                        "Description",
                        placeholder="e.g. before the risky step",
                        help="Keys, task and scratchpad are kept; r restores them later.",
                    )
                ],
                submit,
                save_label="Create",
            )
        )

    def action_restore(self) -> None:
        session = self._need_session()
        checkpoint_id = self.query_one("#wm-checkpoints", VirtualTable).cursor_key
        if session is None or checkpoint_id is None:
            if session is not None:
                self.app.notify("No checkpoint selected", severity="warning")
            return
        checkpoint = (
            next((c for c in self.detail["wm"]["checkpoints"] if c["id"] == checkpoint_id), None)
            if self.detail
            else None
        )
        if checkpoint is None:
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.workbench.write(
                    core_wm.restore_checkpoint,
                    session["id"],
                    checkpoint_id,
                    done="Working memory restored",
                )

        what = checkpoint["description"] or checkpoint_id[:8]
        self.app.push_screen(
            ConfirmScreen(
                f"Restore “{what}”?",
                f"This replaces the session's whole working memory (keys, task and "
                f"scratchpad) with the snapshot from {short_stamp(checkpoint['created_at'])}: "
                f"{checkpoint['keys']} keys, {checkpoint['scratch_entries']} notes"
                f"{', a task' if checkpoint['has_task'] else ''}. Keys whose TTL has run out "
                "since stay gone.",
                confirm="Restore",
            ),
            answered,
        )
