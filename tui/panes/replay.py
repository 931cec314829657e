"""Replay: a session's timeline, played back one step at a time.

The left list holds the sessions, newest first. The right side replays the
selected one: its start, each observation, each episode it recorded, each work
item it opened, noted or closed, and its end, in time order. Only the steps up
to the current one are shown, the current one in full below them: ``n`` (or
``→``) steps forward, ``p`` (``←``) back, ``shift+←``/``shift+→`` jump to the first
or last step, ``space`` plays the rest one step a second.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.timer import Timer
from textual.widgets import Static

from ...core.base.clock import parse_instant
from ...core.services.replay import Replay
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from .base import Pane

#: Seconds between steps while playing.
PLAY_SECONDS = 1.0
LABEL_STYLE = {
    "error": "bold red",
    "decision": "blue",
    "tool": "cyan",
    "episode": "magenta",
    "start": "bold green",
    "end": "bold green",
    "action": "yellow",
    "note": "yellow",
    "done": "green",
    "cancelled": "dim",
}


def clock_time(at: str) -> str:
    """``11:13`` of an ISO instant."""
    return parse_instant(at).strftime("%H:%M")


def elapsed(start: str, at: str) -> str:
    """``+3m``, ``+1h05m``: how long after ``start``."""
    minutes = int((parse_instant(at) - parse_instant(start)).total_seconds() // 60)
    if minutes < 60:
        return f"+{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"+{hours}h{minutes:02d}m" if hours < 48 else f"+{hours // 24}d"


class ReplayPane(Pane):
    """Sessions on the left; the selected session's steps so far on the right."""

    PANE_ID = "replay"
    TITLE = "Replay"
    KEY = "R"
    HELP = (
        "Pick a session on the left (enter moves to its replay); its observations, episodes "
        "and work items appear one step at a time: n or → steps forward, p or ← back, "
        "shift+← and shift+→ jump to the first and last step, space plays (a step a second) and "
        "pauses."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,right", "step(1)", "Step", key_display="n"),
        Binding("p,left", "step(-1)", "Back", key_display="p"),
        Binding("space", "play", "Play/pause"),
        # Not home/end: the focused list takes those (its first and last row).
        Binding("shift+left", "jump(0)", "First", key_display="⇧←", show=False),
        Binding("shift+right", "jump(-1)", "Last", key_display="⇧→", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.session_id: str | None = None
        self.replay: Replay | None = None
        #: How many steps are shown (1 = the first step only).
        self.step = 0
        self._player: Timer | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="replay-columns"):
            yield VirtualTable(
                [
                    Column("started", "Started", width=11, drop_order=1),
                    Column("title", "Session", min_width=14),
                ],
                id="replay-sessions",
                empty_text="Loading sessions…",
            )
            with Vertical(id="replay-side"):
                yield Static("", id="replay-status", classes="pane-toolbar")
                yield VirtualTable(
                    [
                        Column("n", "#", width=3, justify="right"),
                        Column("time", "Time", width=5),
                        Column("since", "Since", width=6, drop_order=1),
                        Column("what", "What", width=9),
                        Column("text", "", min_width=16),
                    ],
                    id="replay-steps",
                    empty_text="Select a session to replay it",
                )
                with VerticalScroll(id="replay-detail-scroll"):
                    yield Static("", id="replay-detail")

    def focus_main(self) -> None:
        self.query_one("#replay-sessions", VirtualTable).focus()

    @property
    def total(self) -> int:
        """Steps in the replay."""
        return len(self.replay.events) if self.replay else 0

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load_sessions()

    @work(thread=True, exclusive=True, group="replay-sessions", exit_on_error=False)
    def _load_sessions(self) -> None:
        self.deliver(self._show_sessions, self.service.sessions_for_replay())

    def _show_sessions(self, found: list[dict[str, Any]]) -> None:
        table = self.query_one("#replay-sessions", VirtualTable)
        table.empty_text = "No sessions yet: agents start them (memwork session start)"
        rows = [
            Row(
                [
                    parse_instant(s["started_at"]).strftime("%m-%d %H:%M"),
                    Text.assemble(
                        ("● " if s["status"] == "active" else "○ ", "green"), s["title"] or s["id"]
                    ),
                ],
                key=s["id"],
            )
            for s in found
        ]
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        wanted = self.session_id if self.session_id in {s["id"] for s in found} else None
        self._choose(wanted or table.cursor_key, keep_step=wanted is not None)

    def _choose(self, session_id: str | None, *, keep_step: bool = False) -> None:
        if session_id is None:
            self._show_replay(None, False)
            return
        if session_id != self.session_id:
            self._stop_playing()
        self.session_id = session_id
        self._read_replay(session_id, keep_step)

    @work(thread=True, exclusive=True, group="replay-read", exit_on_error=False)
    def _read_replay(self, session_id: str, keep_step: bool) -> None:
        try:
            found: Replay | None = self.service.session_replay(session_id)
        except Exception:  # noqa: BLE001 - deleted between the two reads
            found = None
        self.deliver(self._show_replay, found, keep_step)

    def _show_replay(self, found: Replay | None, keep_step: bool) -> None:
        if self.replay is not None and found is not None:
            # A reload of the session on screen (a commit, or a second read racing the
            # first) keeps the step the user is at.
            keep_step = keep_step or found.session["id"] == self.replay.session["id"]
        self.replay = found
        # A new session starts at its first step; the one on screen keeps its place.
        self.step = min(self.step, self.total) if keep_step else min(1, self.total)
        self._show_steps()

    # -- showing ------------------------------------------------------------------------
    def _show_steps(self) -> None:
        steps = self.query_one("#replay-steps", VirtualTable)
        status = self.query_one("#replay-status", Static)
        detail = self.query_one("#replay-detail", Static)
        if self.replay is None or not self.total:
            steps.set_source(ListRowSource([]))
            status.update("")
            detail.update("")
            return
        events = self.replay.events
        start = events[0].at
        rows = [
            Row(
                [
                    str(n),
                    clock_time(e.at),
                    elapsed(start, e.at),
                    Text(e.label, style=LABEL_STYLE.get(e.label, "")),
                    e.text,
                ],
                key=str(n),
            )
            for n, e in enumerate(events[: self.step], start=1)
        ]
        steps.set_source(ListRowSource(rows))
        steps.move_cursor(len(rows) - 1)
        current = events[self.step - 1]
        playing = " · playing (space pauses)" if self._player is not None else ""
        dropped = (
            f" · {self.replay.dropped} observations no longer kept" if self.replay.dropped else ""
        )
        status.update(
            Text.assemble(
                ("step ", "dim"),
                (f"{self.step}", "bold"),
                (f" of {self.total}", "dim"),
                f" · {self.replay.session.get('title') or self.session_id}{dropped}{playing}",
            )
        )
        detail.update(
            Text.assemble(
                (f"{current.label} ", LABEL_STYLE.get(current.label, "bold")),
                (f"{current.at[:19].replace('T', ' ')}  {current.ref}\n", "dim"),
                current.text,
            )
        )

    # -- keys ---------------------------------------------------------------------------
    @on(VirtualTable.CursorMoved, "#replay-sessions")
    def _session_moved(self, event: VirtualTable.CursorMoved) -> None:
        if event.key is not None and event.key != self.session_id:
            self._choose(event.key)

    @on(VirtualTable.RowSelected, "#replay-sessions")
    def _session_chosen(self, event: VirtualTable.RowSelected) -> None:
        self.query_one("#replay-steps", VirtualTable).focus()

    def action_step(self, by: int) -> None:
        """One step forward (1) or back (-1)."""
        if not self.total:
            self.warn("Nothing to replay: select a session with observations")
            return
        self.step = max(1, min(self.total, self.step + by))
        if self.step == self.total:
            self._stop_playing()
        self._show_steps()

    def action_jump(self, to: int) -> None:
        """The first step (0) or the last (-1)."""
        if self.total:
            self.step = self.total if to < 0 else 1
            self._stop_playing()
            self._show_steps()

    def action_play(self) -> None:
        """Play the rest of the session, one step a second; again to pause."""
        if self._player is not None:
            self._stop_playing()
            self._show_steps()
            return
        if not self.total:
            self.warn("Nothing to replay: select a session with observations")
            return
        if self.step >= self.total:
            self.step = 0  # played to the end: play it again from the start
        self._player = self.set_interval(PLAY_SECONDS, lambda: self.action_step(1))
        self.action_step(1)

    def _stop_playing(self) -> None:
        if self._player is not None:
            self._player.stop()
            self._player = None

    def jump_to(self, ref: str) -> None:
        table = self.query_one("#replay-sessions", VirtualTable)
        source = table.source
        if isinstance(source, ListRowSource) and (index := source.index_of(ref)) is not None:
            table.move_cursor(index)
        self._choose(ref)
