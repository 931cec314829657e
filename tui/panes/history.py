"""History: the audit log, newest first, filterable, virtual and fast at 100k+ entries.

The log is append-only and sharded (1,000 entries a shard), so the pane loads it
in a worker one shard at a time: the newest shard reaches the screen first and
the rest follow. Old shards never change, so when the store moves only the
entries newer than the last one loaded are read. Filtering runs in a worker over
precomputed lower-case haystacks and hands the table a list of matching
positions; the table renders only the rows on screen.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from ...core.models.kinds import of_table, pane_of
from ...core.services import history
from ..gc_pause import big_load
from ..messages import JumpTo
from ..widgets.audit_rows import (
    COLUMNS,
    EMPTY_LOG,
    INJECT,
    AuditRows,
    Log,
    action_style,
    build_log,
)
from ..widgets.bars import ago, plural
from ..widgets.virtual_table import VirtualTable
from .base import Pane

#: Entries handed to the screen before the rest of the log is read.
FIRST_PAGE = 200
#: Pages (shards) read between two updates of the screen during a full load.
SHARDS_PER_UPDATE = 16


class HistoryPane(Pane):
    """The audit log with a filter line, the selected entry's details below."""

    PANE_ID = "history"
    TITLE = "History"
    HELP = (
        "Every change, newest first. f filters (words match actor, action, table, record id "
        "and summary; actor:, action:, table:, record: narrow one field); t cycles a table "
        "filter; Enter opens the record in its pane. i shows the entries that say a lesson "
        "or slot was injected into an agent's context (recorded while context_log is on; "
        "hidden unless asked)."
    )
    PALETTE_ANYWHERE = frozenset(
        {
            "focus_filter",
            "cycle_table",
            "clear_filter",
            "toggle_injections",
            "leave_filter",
        }
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "focus_filter", "Filter"),
        Binding("t", "cycle_table(1)", "Table"),
        Binding("T", "cycle_table(-1)", "Table back", show=False),
        Binding("x", "clear_filter", "Clear filter"),
        Binding(
            "i",
            "toggle_injections",
            "Injections",
            tooltip="Show or hide 'injected into context' entries (config context_log on)",
        ),
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
        #: "injected into context" entries can outnumber everything else: hidden unless asked.
        self.show_injections = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="history-toolbar", classes="pane-toolbar"):
            yield Input(
                placeholder="Filter: words, or actor: action: table: record: (f)",
                id="history-filter",
            )
            yield Static("", id="history-status")
        yield VirtualTable(COLUMNS, id="history", empty_text="Loading the audit log…")
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
        pages, last = self.service.audit_pages()
        if current.complete and current.entries and last >= current.top_seq:
            newer = self.service.audit_after(current.top_seq, current.entries[0]["id"])
            if newer is not None:
                if newer:
                    entries: list[dict[str, Any]] = [*newer, *current.entries]
                    hay: list[str] = [*map(history.haystack, newer), *current.hay]
                    log = build_log(entries, hay, complete=True, expected=len(entries))
                    self.deliver(self._show_log, log)
                return
        with big_load():  # no full collection pass while the log piles up
            # A full load, newest page first, handing the screen a first page at once.
            entries = []
            hay = []
            shown = 0
            for n, number in enumerate(range(pages, 0, -1), start=1):
                if worker.is_cancelled:
                    return
                docs = self.service.audit_page(number)
                entries.extend(docs)
                hay.extend(map(history.haystack, docs))
                first = not shown and len(entries) >= FIRST_PAGE
                if first or (shown and n % SHARDS_PER_UPDATE == 0):
                    shown = len(entries)
                    log = build_log(list(entries), list(hay), complete=False, expected=last)
                    self.deliver(self._show_log, log)
            self.deliver(
                self._show_log, build_log(entries, hay, complete=True, expected=len(entries))
            )

    def _show_log(self, log: Log) -> None:
        self.audit_log = log
        if self.table_filter is not None and self.table_filter not in log.tables and log.complete:
            self.table_filter = None
        if self._filtered or self._hiding():
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

    def _hiding(self) -> bool:
        return bool(self.audit_log.injections) and not self.show_injections

    def _apply_filter(self) -> None:
        self._filtered = (
            bool(self.filter_text.strip()) or self.table_filter is not None or self._hiding()
        )
        if not self._filtered:
            self._set_rows(AuditRows(self.audit_log))
            self._show_status()
            return
        self._filter(self.audit_log, self.filter_text, self.table_filter, self._hiding())

    @work(thread=True, exclusive=True, group="history-filter", exit_on_error=False)
    def _filter(self, log: Log, text: str, table: str | None, hide: bool = False) -> None:
        worker = get_current_worker()
        words = history.parse_filter(text)
        order: list[int] = []
        entries, hay = log.entries, log.hay
        for i in range(len(entries)):
            if i % 5000 == 0 and worker.is_cancelled:
                return
            if hide and entries[i]["action"] == INJECT:
                continue
            if history.matches(entries[i], hay[i], words, table):
                order.append(i)
        self.deliver(self._show_filtered, log, text, table, order)

    def _show_filtered(self, log: Log, text: str, table: str | None, order: list[int]) -> None:
        if log is not self.audit_log or text != self.filter_text or table != self.table_filter:
            return  # a newer load or filter is on its way
        self._set_rows(AuditRows(log, order))
        self._show_status()

    def _set_rows(self, rows: AuditRows) -> None:
        table = self.query_one("#history", VirtualTable)
        keep = table.cursor_key
        table.empty_text = (
            "Nothing matches the filter (x clears it)"
            if self._filtered
            else (
                "No changes recorded yet" if rows.audit_log.complete else "Loading the audit log…"
            )
        )
        # Watching the top, new entries come into view; scrolled down, the table
        # counts them ("N new ↑").
        table.set_source(rows, keep_key=keep)
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
        # Hidden injections are not a filter the user set: they leave the total.
        visible = total - (log.injections if self._hiding() else 0)
        if bool(self.filter_text.strip()) or self.table_filter is not None:
            parts.append((f"{rows:,}", "bold"))
            parts.append(f" of {plural(visible, 'entry', 'entries')}")
        else:
            parts.append((f"{visible:,}", "bold"))
            parts.append(" entry" if visible == 1 else " entries")
        if self.table_filter is not None:
            parts += [" · table ", (self.table_filter, "bold"), " (t)"]
        if log.injections:
            shown = "shown" if self.show_injections else "hidden"
            parts.append((f" · {log.injections:,} context injections {shown} (i)", "italic"))
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

    def action_toggle_injections(self) -> None:
        """Show or hide the entries that say a record was injected into a context."""
        self.show_injections = not self.show_injections
        if not self.audit_log.injections:
            self.app.notify(
                "No context injections recorded (memwork config set context_log on records them)",
                timeout=5,
            )
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

    def applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
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
        kind = of_table(entry["table"])
        hint = (
            f"Enter opens it in {kind.pane.capitalize()}"
            if kind
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
        if of_table(entry["table"]) is None:
            self.warn(f"No pane shows {entry['table']} records")
            return
        target = await self.workbench.io(self.service.locate, entry["table"], entry["record_id"])
        if target is None:
            gone = of_table(entry["table"])
            noun = gone.name if gone is not None else "record"
            self.warn(f"The {noun} this entry names no longer exists (it was deleted since)")
            return
        kind, ref = target
        self.post_message(JumpTo(pane_of(kind), ref))

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
            self.show_injections = True
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
                self.warn(f"No audit entry {ref}")
            return
        self._pending_jump = None
        table.move_cursor(index)
        table.focus()
        self._show_detail()
