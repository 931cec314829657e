"""One session's working memory: the task with its progress, keys with a live TTL
countdown, the scratchpad and the working-memory checkpoints.

Attributes down: the Sessions pane hands it :func:`core.domain.working_memory.overview.overview`
with :meth:`WorkingMemoryPanel.show` and calls :meth:`WorkingMemoryPanel.tick`
once a second; the countdown is recomputed from ``expires_at`` without a store
read, so an expired key leaves on its own.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, ProgressBar, Static

from ...core.base.clock import parse_instant
from ...core.base.errors import InvalidInput
from ...core.domain.working_memory import state as core_wm
from .bars import duration, plural, short_stamp
from .virtual_table import Column, ListRowSource, Row, VirtualTable

_TTL_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def ttl_text(expires_at: str | None, now: datetime) -> Text:
    """A key's remaining time, coloured as it runs out (``no TTL`` without one)."""
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


class WorkingMemoryPanel(Vertical):
    """Task, keys, scratchpad and checkpoints of the selected session's working memory."""

    DEFAULT_CSS = """
    WorkingMemoryPanel {
        height: auto;
    }
    WorkingMemoryPanel > #wm-title {
        margin-top: 1;
        padding: 0 1;
        width: 1fr;
        background: $boost;
    }
    WorkingMemoryPanel > #wm-task {
        height: 1;
        padding: 0 1;
    }
    WorkingMemoryPanel #task-line {
        width: 1fr;
        height: 1;
    }
    WorkingMemoryPanel #task-progress {
        width: auto;
        height: 1;
    }
    WorkingMemoryPanel #task-progress Bar {
        width: 16;
    }
    WorkingMemoryPanel > #task-description {
        height: 1;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    WorkingMemoryPanel > #wm-keys {
        height: 6;
    }
    WorkingMemoryPanel > #wm-scratch {
        height: 6;
        margin-top: 1;
    }
    WorkingMemoryPanel > #wm-checkpoints {
        height: 4;
        margin-top: 1;
    }
    """

    #: Table → what it says when empty (with a session selected).
    EMPTY_TEXT: ClassVar[dict[str, str]] = {
        "wm-keys": "No keys (s sets one)",
        "wm-scratch": "Scratchpad empty (a adds a note)",
        "wm-checkpoints": "No checkpoints (c creates one)",
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: ``working_memory.overview.overview`` of the session shown (None: no session).
        self.wm: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
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
            empty_text=self.EMPTY_TEXT["wm-keys"],
        )
        yield VirtualTable(
            [Column("time", "Time", width=5), Column("text", "Scratchpad", min_width=12)],
            id="wm-scratch",
            empty_text=self.EMPTY_TEXT["wm-scratch"],
        )
        yield VirtualTable(
            [
                Column("created", "Checkpoint", width=11),
                Column("description", "Description", min_width=12),
                Column("holds", "Holds", width=15, drop_order=1),
            ],
            id="wm-checkpoints",
            empty_text=self.EMPTY_TEXT["wm-checkpoints"],
        )

    def on_mount(self) -> None:
        self.query_one("#task-progress", ProgressBar).display = False

    # -- what the pane asks -------------------------------------------------------------
    def selected_key(self) -> str | None:
        """The key under the keys table's cursor."""
        return self.query_one("#wm-keys", VirtualTable).cursor_key

    def selected_checkpoint(self) -> dict[str, Any] | None:
        """The working-memory checkpoint under its table's cursor."""
        key = self.query_one("#wm-checkpoints", VirtualTable).cursor_key
        if self.wm is None or key is None:
            return None
        return next((c for c in self.wm["checkpoints"] if c["id"] == key), None)

    def live_keys(self, now: datetime) -> list[dict[str, Any]]:
        """The session's keys that have not expired at ``now``."""
        if self.wm is None:
            return []
        return [
            k
            for k in self.wm["keys"]
            if not k["expires_at"] or parse_instant(k["expires_at"]) > now
        ]

    def scope_of(self, key: str | None) -> str:
        """Where key ``key`` comes from: ``session``, or the scope the session inherits it
        from (``project:web``)."""
        found = next((k for k in (self.wm or {}).get("keys", []) if k["key"] == key), None)
        return str(found.get("scope") or "session") if found else "session"

    # -- showing ------------------------------------------------------------------------
    def show(self, wm: dict[str, Any] | None, now: datetime, *, same_session: bool) -> None:
        """Show a session's working memory (None: no session selected)."""
        self.wm = wm
        for table_id, text in self.EMPTY_TEXT.items():
            self.query_one(f"#{table_id}", VirtualTable).empty_text = text if wm else ""
        self.tick(now)
        self._show_task()
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
            holds = f"{plural(cp['keys'], 'key')}, {plural(cp['scratch_entries'], 'note')}"
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

    def tick(self, now: datetime) -> None:
        """Redraw the keys: TTLs count down and expired keys leave (no store read)."""
        table = self.query_one("#wm-keys", VirtualTable)
        rows = [
            Row(
                [
                    key_text(k),
                    value_text(k["value"]),
                    ttl_text(k["expires_at"], now),
                ],
                key=k["key"],
            )
            for k in self.live_keys(now)
        ]
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)

    def _show_task(self) -> None:
        line = self.query_one("#task-line", Static)
        description = self.query_one("#task-description", Static)
        bar = self.query_one("#task-progress", ProgressBar)
        task = self.wm["task"] if self.wm else None
        if not task:
            line.update(
                Text("No task (t sets one)" if self.wm else "", style="italic bright_black")
            )
            description.update("")
            bar.display = False
            return
        step, total = task.get("current_step"), task.get("total_steps")
        steps: Any = ()
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
                *steps,
            )
        )
        description.update(Text(task.get("description") or "", style="bright_black"))
        bar.display = True
        bar.update(total=100, progress=task["progress_percent"])


def key_text(entry: dict[str, Any]) -> Text:
    """A key's name, and ``(project)`` or ``(agent)`` when the session inherits it (from
    its own project or agent: the name would only repeat the session's)."""
    scope = entry.get("scope") or "session"
    if scope == "session":
        return Text(entry["key"], style="bold")
    return Text.assemble((entry["key"], "bold"), (f" ({scope.partition(':')[0]})", "bright_black"))
