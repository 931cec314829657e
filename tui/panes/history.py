"""History: the audit log, newest first, filterable, virtual and fast at 100k+ entries.

The log is append-only and sharded (1,000 entries a shard), so the pane loads it
in a worker one shard at a time: the newest shard reaches the screen first and
the rest follow. Old shards never change, so when the store moves only the
entries newer than the last one loaded are read. Filtering runs in a worker over
precomputed lower-case haystacks and hands the table a list of matching
positions; the table renders only the rows on screen.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from core import audit, shards
from core import cards as core_cards
from core import checkpoints as core_checkpoints
from core import episodes as core_episodes
from core import lessons as core_lessons
from core import rules as core_rules
from core import sessions as core_sessions
from core.errors import MemworkError
from core.storage.store import Store
from core.tables import physical_tables
from tui.messages import JumpTo
from tui.panes.base import Pane
from tui.widgets.bars import ago
from tui.widgets.virtual_table import Column, Row, VirtualTable

#: Audit table → the pane that shows its records.
PANE_OF_TABLE = {
    "episodes": "episodes",
    "mistake_cards": "cards",
    "lessons": "lessons",
    "rules": "lessons",
    "slots": "slots",
    "sessions": "sessions",
    "observations": "sessions",
    "working_memory": "sessions",
    "checkpoints": "checkpoints",
}

#: Fields a ``field:value`` filter word can name (``record`` and ``id`` mean the record id).
FILTER_FIELDS = {
    "actor": "actor",
    "action": "action",
    "table": "table",
    "record": "record_id",
    "id": "record_id",
    "summary": "summary",
}

#: Entries handed to the screen before the rest of the log is read.
FIRST_PAGE = 200
#: Shards read between two updates of the screen during a full load.
SHARDS_PER_UPDATE = 16

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


def haystack(entry: dict[str, Any]) -> str:
    """What the free-text filter searches in, lower-cased once."""
    return (
        f"{entry['actor']}\n{entry['action']}\n{entry['table']}\n"
        f"{entry['record_id']}\n{entry['summary']}"
    ).lower()


def parse_filter(text: str) -> list[tuple[str | None, str]]:
    """``actor:tui wm key`` → ``[("actor", "tui"), (None, "wm"), (None, "key")]``."""
    words: list[tuple[str | None, str]] = []
    for word in text.lower().split():
        name, sep, value = word.partition(":")
        if sep and name in FILTER_FIELDS and value:
            words.append((FILTER_FIELDS[name], value))
        else:
            words.append((None, word))
    return words


def matches(
    entry: dict[str, Any], hay: str, words: list[tuple[str | None, str]], table: str | None
) -> bool:
    """Whether an entry passes the table quick filter and every filter word."""
    if table is not None and entry["table"] != table:
        return False
    for field, value in words:
        if field is None:
            if value not in hay:
                return False
        elif value not in str(entry[field]).lower():
            return False
    return True


def locate(store: Store, table: str, record_id: str) -> tuple[str, str] | None:
    """``(pane, ref)`` showing an audit entry's record, or None when it is gone.

    Call inside ``store.reading()`` (``service.read`` does).
    """
    pane = PANE_OF_TABLE.get(table)
    if pane is None:
        return None
    try:
        if table == "episodes":
            return pane, core_episodes.get_episode(store, record_id)["id"]
        if table == "mistake_cards":
            return pane, core_cards.resolve(store, record_id)["id"]
        if table == "lessons":
            return pane, core_lessons.resolve(store, record_id)["id"]
        if table == "checkpoints":
            return pane, core_checkpoints.resolve(store, record_id)["id"]
        if table == "sessions":
            return pane, core_sessions.resolve(store, record_id)["id"]
    except MemworkError:
        return None
    if table == "rules":
        if not record_id.startswith("rule_"):
            return pane, record_id  # consolidation names a scope, not one rule
        found = any(r["id"] == record_id for r in core_rules.all_rules(store))
        return (pane, record_id) if found else None
    if table == "slots":
        return (pane, record_id) if store.get("slots", record_id) else None
    if table == "observations":
        for name in physical_tables(store.table_names("observations"), "observations"):
            doc = store.docs(name).get(record_id)
            if doc is not None:
                return pane, f"{doc['session_id']}/{record_id}"
        return None
    if table == "working_memory":
        # A working-memory entry names its session, or (checkpoints) the checkpoint.
        if record_id in store.docs("sessions"):
            return pane, record_id
        for name in physical_tables(store.table_names("working_memory"), "working_memory"):
            doc = store.docs(name).get(record_id)
            if doc is not None and doc.get("session_id") in store.docs("sessions"):
                return pane, doc["session_id"]
        return None
    return None


@dataclass(frozen=True, repr=False, eq=False)
class Log:
    """The loaded audit log: entries newest first, their haystacks and id → position."""

    entries: Sequence[dict[str, Any]]
    hay: Sequence[str]
    positions: dict[str, int]
    tables: tuple[str, ...]
    complete: bool
    expected: int

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
    return Log(entries, hay, positions, tables, complete, expected)


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
                e["summary"],
            ],
            key=e["id"],
        )

    def index_of(self, key: str) -> int | None:
        position = self.audit_log.positions.get(key)
        if position is None or self.order is None:
            return position
        i = bisect_left(self.order, position)
        return i if i < len(self.order) and self.order[i] == position else None


class HistoryPane(Pane):
    """The audit log with a filter line, the selected entry's details below."""

    PANE_ID = "history"
    TITLE = "History"
    HELP = (
        "Every change, newest first. f filters (words match actor, action, table, record id "
        "and summary; actor:, action:, table:, record: narrow one field); t cycles a table "
        "filter; Enter opens the record in its pane."
    )
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("f", "focus_filter", "Filter"),
        Binding("t", "cycle_table(1)", "Table"),
        Binding("T", "cycle_table(-1)", "Table back", show=False),
        Binding("x", "clear_filter", "Clear filter"),
        Binding("o", "open_record", "Open record", key_display="o/⏎"),
        Binding("escape", "leave_filter", "Back to the list", key_display="esc/⏎"),
        Binding("down", "leave_filter", "Back to the list", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.audit_log: Log = EMPTY_LOG
        self.table_filter: str | None = None
        self.filter_text = ""
        self._pending_jump: str | None = None
        self._filtered = False
        self._loader: Worker[None] | None = None
        self._load_again = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-toolbar", classes="pane-toolbar"):
            yield Input(
                placeholder="Filter: words, or actor: action: table: record: (f)",
                id="history-filter",
            )
            yield Static("", id="history-status")
        yield VirtualTable(
            [
                Column("ts", "Time (UTC)", width=16),
                Column("actor", "Actor", width=12),
                Column("action", "Action", width=13),
                Column("table", "Table", width=14),
                Column("record", "Record", width=12),
                Column("summary", "Summary"),
            ],
            id="history",
            empty_text="Loading the audit log…",
        )
        yield Static("", id="history-detail")

    def focus_main(self) -> None:
        self.query_one("#history", VirtualTable).focus()

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        # A full load of a big log is never cancelled by the next commit (an agent
        # writing every second would restart it forever): it finishes, then the
        # commits that landed meanwhile are read incrementally.
        if self._loader is not None:
            self._load_again = True
            return
        self._loader = self._load(self.audit_log)

    @on(Worker.StateChanged)
    def _loader_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is not self._loader or event.state not in (
            WorkerState.SUCCESS,
            WorkerState.ERROR,
            WorkerState.CANCELLED,
        ):
            return
        self._loader = None
        if self._load_again:
            self._load_again = False
            self.load()

    @work(thread=True, exclusive=True, group="history-load", exit_on_error=False)
    def _load(self, current: Log) -> None:
        worker = get_current_worker()

        def head(store: Store) -> tuple[list[str], int]:
            return shards.shard_names(store, audit.BASE), audit.last_seq(store)

        names, last = self.service.read(head)
        if current.complete and current.entries and last >= current.top_seq:
            newer = self.service.read(_entries_after, current)
            if newer is not None:
                if newer:
                    entries = [*newer, *current.entries]
                    hay = [*map(haystack, newer), *current.hay]
                    log = build_log(entries, hay, complete=True, expected=len(entries))
                    self.app.call_from_thread(self._show_log, log)
                return
        # A full load, newest shard first, handing the screen a first page at once.
        entries: list[dict[str, Any]] = []
        hay: list[str] = []
        shown = 0
        for n, name in enumerate(reversed(names), start=1):
            if worker.is_cancelled:
                return
            docs = self.service.read(lambda store, name=name: list(store.docs(name).values()))
            docs.sort(key=lambda d: d["seq"], reverse=True)
            entries.extend(docs)
            hay.extend(map(haystack, docs))
            first = not shown and len(entries) >= FIRST_PAGE
            if first or (shown and n % SHARDS_PER_UPDATE == 0):
                shown = len(entries)
                log = build_log(list(entries), list(hay), complete=False, expected=last)
                self.app.call_from_thread(self._show_log, log)
        if not worker.is_cancelled:
            log = build_log(entries, hay, complete=True, expected=len(entries))
            self.app.call_from_thread(self._show_log, log)

    def _show_log(self, log: Log) -> None:
        self.audit_log = log
        if self.table_filter is not None and self.table_filter not in log.tables and log.complete:
            self.table_filter = None
        if self._filtered:
            self._apply_filter()  # the filter's worker shows the result
        else:
            self._set_rows(AuditRows(log))
        self._show_status()

    # -- filtering --------------------------------------------------------------------
    @on(Input.Changed, "#history-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter_text = event.value
        self._apply_filter()

    @on(Input.Submitted, "#history-filter")
    def _filter_submitted(self) -> None:
        self.focus_main()

    def _apply_filter(self) -> None:
        self._filtered = bool(self.filter_text.strip()) or self.table_filter is not None
        if not self._filtered:
            self._set_rows(AuditRows(self.audit_log))
            self._show_status()
            return
        self._filter(self.audit_log, self.filter_text, self.table_filter)

    @work(thread=True, exclusive=True, group="history-filter", exit_on_error=False)
    def _filter(self, log: Log, text: str, table: str | None) -> None:
        worker = get_current_worker()
        words = parse_filter(text)
        order: list[int] = []
        entries, hay = log.entries, log.hay
        for i in range(len(entries)):
            if i % 5000 == 0 and worker.is_cancelled:
                return
            if matches(entries[i], hay[i], words, table):
                order.append(i)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_filtered, log, text, table, order)

    def _show_filtered(self, log: Log, text: str, table: str | None, order: list[int]) -> None:
        if log is not self.audit_log or text != self.filter_text or table != self.table_filter:
            return  # a newer load or filter is on its way
        self._set_rows(AuditRows(log, order))
        self._show_status()

    def _set_rows(self, rows: AuditRows) -> None:
        table = self.query_one("#history", VirtualTable)
        at_top = round(table.scroll_y) == 0
        keep = table.cursor_key
        table.empty_text = (
            "Nothing matches the filter (x clears it)"
            if self._filtered
            else (
                "No changes recorded yet" if rows.audit_log.complete else "Loading the audit log…"
            )
        )
        table.set_source(rows, keep_key=keep)
        if at_top and table.cursor_row < table.scrollable_content_region.height - 1:
            # Watching the top: new entries appear above the selection, in view.
            table.scroll_to(y=0, animate=False, force=True)
        if self._pending_jump is not None:
            self._try_jump(self._pending_jump)
        self._show_detail()

    def _show_status(self) -> None:
        log = self.audit_log
        total = len(log.entries)
        rows = self.query_one("#history", VirtualTable).row_count
        parts: list[Any] = []
        if not log.complete and total:
            parts.append((f"loading {total:,} of {log.expected:,}… ", "italic"))
        if self._filtered:
            parts.append((f"{rows:,}", "bold"))
            parts.append(f" of {total:,} entries")
        else:
            parts.append((f"{total:,}", "bold"))
            parts.append(" entries")
        if self.table_filter is not None:
            parts += [" · table ", (self.table_filter, "bold"), " (t)"]
        self.query_one("#history-status", Static).update(Text.assemble(*parts))

    def action_focus_filter(self) -> None:
        self.query_one("#history-filter", Input).focus()

    def action_cycle_table(self, step: int) -> None:
        choices: list[str | None] = [None, *self.audit_log.tables]
        if len(choices) == 1:
            loading = not self.audit_log.complete
            self.app.notify("The log is still loading" if loading else "The log is empty")
            return
        try:
            at = choices.index(self.table_filter)
        except ValueError:
            at = 0
        self.table_filter = choices[(at + step) % len(choices)]
        self._apply_filter()
        self._show_status()

    def action_clear_filter(self) -> None:
        self.table_filter = None
        box = self.query_one("#history-filter", Input)
        if box.value:
            box.value = ""  # posts Changed, which re-filters
        self.filter_text = ""
        self._apply_filter()

    def _in_filter(self) -> bool:
        return self.screen.focused is self.query_one("#history-filter", Input)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_filter":
            return self._in_filter()
        return True

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def action_leave_filter(self) -> None:
        """Escape, Enter or Down leave the filter line for the list (the filter stays)."""
        self.focus_main()

    # -- selection and detail ---------------------------------------------------------
    def selected_entry(self) -> dict[str, Any] | None:
        """The audit entry under the cursor."""
        table = self.query_one("#history", VirtualTable)
        if not table.row_count or not isinstance(table.source, AuditRows):
            return None
        return table.source.entry(table.cursor_row)

    @on(VirtualTable.CursorMoved, "#history")
    def _cursor(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#history-detail", Static)
        entry = self.selected_entry()
        if entry is None:
            detail.update(Text("No entry selected", style="bright_black"))
            return
        pane = PANE_OF_TABLE.get(entry["table"])
        hint = (
            f"Enter opens it in {pane.capitalize()}"
            if pane
            else f"no pane shows {entry['table']} records"
        )
        detail.update(
            Text.assemble(
                (f"#{entry['seq']}  ", "bright_black"),
                (entry["ts"][:19].replace("T", " ") + " UTC", ""),
                (f"  ({ago(entry['ts'], self.service.now)})", "bright_black"),
                "  by ",
                (entry["actor"], "bold"),
                "\n",
                (entry["action"], f"bold {action_style(entry['action'])}".strip()),
                " ",
                entry["table"],
                " ",
                (entry["record_id"], "bold"),
                (f"   {hint}", "italic bright_black"),
                "\n",
                entry["summary"],
            )
        )

    @on(VirtualTable.RowSelected, "#history")
    async def _selected(self) -> None:
        await self.action_open_record()

    async def action_open_record(self) -> None:
        """Jump to the record the selected entry names (if it still exists)."""
        entry = self.selected_entry()
        if entry is None:
            return
        if entry["table"] not in PANE_OF_TABLE:
            self.app.notify(f"No pane shows {entry['table']} records", severity="warning")
            return
        target = await self.workbench.io(
            self.service.read, locate, entry["table"], entry["record_id"]
        )
        if target is None:
            self.app.notify(
                f"{entry['record_id']} no longer exists in {entry['table']}", severity="warning"
            )
            return
        self.post_message(JumpTo(*target))

    def jump_to(self, ref: str) -> None:
        self._pending_jump = ref
        if self.audit_log.entries:
            self._try_jump(ref)

    def _try_jump(self, ref: str) -> None:
        table = self.query_one("#history", VirtualTable)
        rows = table.source
        index = rows.index_of(ref) if isinstance(rows, AuditRows) else None
        if index is None and ref in self.audit_log.positions and self._filtered:
            # The filter hides it: show everything again, then select it.
            self.table_filter = None
            self.query_one("#history-filter", Input).value = ""
            self.filter_text = ""
            self._filtered = False
            table.set_source(AuditRows(self.audit_log))
            index = self.audit_log.positions[ref]
            self._show_status()
        if index is None:
            if self.audit_log.complete:
                self._pending_jump = None
                self.app.notify(f"No audit entry {ref}", severity="warning")
            return
        self._pending_jump = None
        table.move_cursor(index)
        table.focus()
        self._show_detail()


def _entries_after(store: Store, current: Log) -> list[dict[str, Any]] | None:
    """Entries newer than ``current``'s newest, newest first; None when the log was
    replaced under us (then the caller reloads it whole)."""
    top = current.top_seq
    last = audit.last_seq(store)
    newest_known = store.docs(shards.shard_of(audit.BASE, top)).get(current.entries[0]["id"])
    if newest_known is None or newest_known["seq"] != top:
        return None
    out: list[dict[str, Any]] = []
    if last == top:
        return out
    first, final = shards.shard_of(audit.BASE, top + 1), shards.shard_of(audit.BASE, last)
    for name in shards.shard_names(store, audit.BASE):
        if first <= name <= final:
            out.extend(d for d in store.docs(name).values() if d["seq"] > top)
    out.sort(key=lambda d: d["seq"], reverse=True)
    return out
