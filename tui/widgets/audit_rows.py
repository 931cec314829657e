"""The audit log as rows: a loaded log, a lazy RowSource over it, and its colours.

The History pane loads the log page by page into a :class:`Log` (entries newest
first, their filter haystacks, id → position); :class:`AuditRows` shows it,
through a filter's matching positions, formatting only the rows on screen.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from .virtual_table import Column, Row

#: The audit action of "injected into context" entries (``core.services.context.log``).
INJECT = "inject"
#: How those entries' summaries begin (the list shows what follows it).
INJECT_PREFIX = "injected into context: "

COLUMNS = [
    Column("ts", "Time (UTC)", width=16),
    Column("actor", "Actor", width=12, min_width=9),
    Column("action", "Action", width=13, min_width=10),
    Column("table", "Table", width=14, drop_order=2),
    Column("record", "Record", width=12, drop_order=1),
    Column("summary", "Summary", min_width=24),
]

_DESTRUCTIVE = ("delete", "forget", "drop", "end", "restore", "wm-delete", "wm-restore")
_CREATIVE = ("add", "create", "start", "record", "observe", "import", "checkpoint", "set")


def action_style(action: str) -> str:
    """Colour of an audit action: removals red, additions green, the rest plain."""
    if action.startswith(_DESTRUCTIVE) or "delete" in action or "restore" in action:
        return "red"
    if action.startswith(_CREATIVE) or action in ("wm-set", "wm-checkpoint", "wm-scratch"):
        return "green"
    if action in ("reinforce", "pin", "unpin", "weaken", "consolidate", "merge"):
        return "cyan"
    return ""


def short_id(record_id: str) -> str:
    """A record id that fits a narrow column: ``ep_…H4GMR`` or a uuid's first 8 digits."""
    prefix, sep, rest = record_id.partition("_")
    if sep and rest:
        return f"{prefix}_…{rest[-6:]}" if len(rest) > 7 else record_id
    return record_id[:8] if len(record_id) > 12 else record_id


@dataclass(frozen=True, repr=False, eq=False)
class Log:
    """The loaded audit log: entries newest first, their haystacks and id → position."""

    entries: Sequence[dict[str, Any]]
    hay: Sequence[str]
    positions: dict[str, int]
    tables: tuple[str, ...]
    complete: bool
    expected: int
    injections: int = 0
    """Entries that only say a record was injected into a context (action ``inject``)."""

    def __repr__(self) -> str:
        # Short on purpose: @work describes a worker by the repr of its arguments.
        return f"Log({len(self.entries)} entries, complete={self.complete})"

    @property
    def top_seq(self) -> int:
        """The sequence number of the newest loaded entry (0 when empty)."""
        return int(self.entries[0]["seq"]) if self.entries else 0


EMPTY_LOG = Log((), (), {}, (), False, 0)


def build_log(
    entries: list[dict[str, Any]], hay: list[str], *, complete: bool, expected: int
) -> Log:
    """A Log over entries already sorted newest first (runs in a worker)."""
    positions = {e["id"]: i for i, e in enumerate(entries)}
    tables = tuple(sorted({e["table"] for e in entries}))
    injections = sum(1 for e in entries if e["action"] == INJECT)
    return Log(entries, hay, positions, tables, complete, expected, injections)


class AuditRows:
    """A lazy `RowSource` over the log, through a filter's matching positions."""

    def __init__(self, log: Log, order: list[int] | None = None) -> None:
        self.audit_log = log
        self.order = order

    def __len__(self) -> int:
        return len(self.audit_log.entries) if self.order is None else len(self.order)

    def entry(self, index: int) -> dict[str, Any]:
        """The audit entry shown at row ``index``."""
        return self.audit_log.entries[index if self.order is None else self.order[index]]

    def row(self, index: int) -> Row:
        e = self.entry(index)
        actor = e["actor"]
        return Row(
            [
                Text(e["ts"][:16].replace("T", " "), style="bright_black"),
                Text(actor, style="bold" if actor == "tui" else ""),
                Text(e["action"], style=action_style(e["action"])),
                e["table"],
                Text(short_id(e["record_id"]), style="bright_black"),
                # The Action column says inject: the summary leads with what it was.
                e["summary"].removeprefix(INJECT_PREFIX) if e["action"] == INJECT else e["summary"],
            ],
            key=e["id"],
        )

    def index_of(self, key: str) -> int | None:
        position = self.audit_log.positions.get(key)
        if position is None or self.order is None:
            return position
        i = bisect_left(self.order, position)
        return i if i < len(self.order) and self.order[i] == position else None
