"""One session's header and its observation timeline (newest last), with the
observation under the cursor in full below it.

The view follows new observations while the cursor is on the last row; a
session that runs past midnight dates the first observation of each new day.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, Static

from ...core.base.clock import parse_instant
from .bars import clip_to_lines, duration, short_stamp
from .virtual_table import Column, ListRowSource, Row, VirtualTable

#: Observation kind → colour (readable on the dark and the light theme).
#: Lines the session's header may take (its CSS max-height): a longer summary is cut
#: with an ellipsis.
HEADER_LINES = 7

KIND_STYLE = {
    "error": "bold red",
    "decision": "blue",
    "tool": "cyan",
    "note": "",
    "warning": "yellow",
    "result": "green",
}


def untitled(session: dict[str, Any], *, long: bool = False) -> Text:
    """What stands for a missing title: the id of a session an agent named by first use
    (``run-42``) says which run it is; ``long`` adds that it was made that way."""
    if session.get("implicit"):
        note = " (implicit: created by its first use)" if long else ""
        return Text(f"{session['id']}{note}", "italic bright_black")
    return Text("untitled", "italic bright_black")


def observation_text(o: dict[str, Any]) -> Text:
    """An observation's content with its tags, as the timeline shows it."""
    text = Text(o["content"])
    for tag in o.get("tags") or []:
        text.append(f" #{tag}", style="bright_black")
    if o.get("after_end"):
        text.append(" (after end)", style="italic yellow")
    return text


class SessionTimeline(Vertical):
    """The selected session: who, when, how long, its summary, and what it observed."""

    DEFAULT_CSS = """
    SessionTimeline {
        width: 1fr;
        padding: 0 0 0 1;
        border-left: vkey $panel-lighten-2;
    }
    SessionTimeline > #session-header {
        height: auto;
        max-height: 7;
    }
    SessionTimeline > #timeline-title {
        margin-top: 1;
    }
    SessionTimeline > #timeline {
        height: 1fr;
        min-height: 5;
    }
    SessionTimeline > #observation-detail {
        height: auto;
        max-height: 5;
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.session: dict[str, Any] | None = None
        self.observations: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="session-header")
        yield Label("Observations", classes="section-title", id="timeline-title")
        yield VirtualTable(
            [
                Column("time", "Time", width=5, drop_order=1),
                Column("kind", "Kind", width=8),
                Column("content", "Content", min_width=16),
            ],
            id="timeline",
            empty_text="No observations yet (o adds one)",
        )
        yield Static("", id="observation-detail")

    @property
    def table(self) -> VirtualTable:
        """The timeline itself."""
        return self.query_one("#timeline", VirtualTable)

    def show(
        self,
        session: dict[str, Any] | None,
        observations: list[dict[str, Any]],
        *,
        same_session: bool,
        select: str | None = None,
        follow: bool = False,
    ) -> None:
        """Show a session (None: nothing selected). ``select`` puts the cursor on an
        observation; ``follow`` moves it to the newest one."""
        self.session = session
        self.observations = observations
        self.render_header()
        table = self.table
        table.empty_text = "No observations yet (o adds one)" if session else "No session selected"
        rows = []
        day = observations[0]["created_at"][:10] if observations else ""
        for o in observations:
            content = observation_text(o)
            if o["created_at"][:10] != day:
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
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key if same_session else None)
        target = None
        if select is not None:
            target = next((i for i, o in enumerate(observations) if o["id"] == select), None)
        if target is not None:
            table.move_cursor(target)
            table.focus()
        elif select is None and (not same_session or at_end or follow):
            table.move_cursor(len(rows) - 1)
        self._render_observation()
        title = self.query_one("#timeline-title", Label)
        total = session["total_observed"] if session else 0
        kept = len(observations)
        if session is None:
            title.update("Observations")
        elif kept == total:
            title.update(f"Observations ({kept})")
        else:
            title.update(f"Observations ({kept} of {total}; the oldest were dropped)")

    def tick(self, now: datetime) -> None:
        """An active session's running time moves on (no store read)."""
        s = self.session
        if s is not None and s["status"] == "active":
            s["duration_seconds"] = max(0.0, (now - parse_instant(s["started_at"])).total_seconds())
            self.render_header()

    def render_header(self) -> None:
        """Title, state, agent, project, times and summary of the session."""
        header = self.query_one("#session-header", Static)
        s = self.session
        if s is None:
            header.update(Text("No session selected", style="bright_black"))
            return
        active = s["status"] == "active"
        dropped = s["dropped_observations"]
        parts: list[Any] = [
            (s["title"] or untitled(s, long=True).plain, "bold"),
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
        ]
        head = Text.assemble(*parts)
        times: list[Any] = [("started ", "bright_black"), short_stamp(s["started_at"])]
        if active:
            times += [("  running for ", "bright_black"), duration(s["duration_seconds"])]
        else:
            times += [
                ("  ended ", "bright_black"),
                short_stamp(s.get("ended_at")),
                ("  ran ", "bright_black"),
                duration(s["duration_seconds"]),
            ]
        times += [("  ", ""), (s["id"], "bright_black")]
        tail = Text.assemble(*times)
        if s.get("summary"):
            summary = Text.assemble(("summary ", "bright_black"), s["summary"])
        else:
            summary = Text(
                "no summary yet (e ends the session with one)" if active else "no summary",
                style="italic bright_black",
            )
        # HEADER_LINES lines in all: the summary gets what the rest leaves, and a long
        # one ends in an ellipsis there (it used to stop mid-sentence without a sign).
        width = header.content_size.width
        console = self.app.console
        if width > 1:
            used = len(head.wrap(console, width)) - 1 + len(tail.wrap(console, width))
            summary = clip_to_lines(console, summary, width, max(1, HEADER_LINES - used))
        text = Text.assemble(head, summary, "\n", tail)
        header.update(clip_to_lines(console, text, width, HEADER_LINES))

    def on_resize(self) -> None:
        self.render_header()  # the summary's cut depends on the width

    @on(VirtualTable.CursorMoved, "#timeline")
    def _observation_moved(self) -> None:
        self._render_observation()

    def _render_observation(self) -> None:
        """The observation under the timeline's cursor, in full."""
        detail = self.query_one("#observation-detail", Static)
        key = self.table.cursor_key
        found = next((o for o in self.observations if o["id"] == key), None) if key else None
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
