"""Graph: the links between records, as a tree from any linked record.

The left list holds every record a link touches, most linked first. The tree
on the right starts at the selected one: what it links to (``→``), then what
links to it (``←``), and so on for each record reached, three levels deep; a
record already shown higher up is marked ``↺`` and not opened again. ``enter``
on a tree row makes that record the root (``backspace`` goes back), ``o`` opens
it in its own pane where it has one (a lesson, a card, an episode, a session).
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from ...core.ledger.links import MEANING
from ...core.services.link_graph import GraphRow, LinkedRecord
from ..messages import JumpTo
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from .base import Pane

#: The pane that shows each kind of record (for ``o``).
PANE_OF_KIND = {
    "lesson": "lessons",
    "rule": "lessons",
    "card": "cards",
    "episode": "episodes",
    "session": "sessions",
    "slot": "slots",
    "proposal": "review",
}
KIND_STYLE = {
    "lesson": "green",
    "rule": "green",
    "card": "magenta",
    "episode": "cyan",
    "session": "yellow",
    "action": "blue",
}
ARROW = {"root": "◆", "out": "→", "in": "←"}


def tree_cell(row: GraphRow) -> Text:
    """The tree column: indentation, the direction and the link's kind."""
    text = Text("  " * max(0, row.depth - 1))
    if row.depth:
        text.append(f"{ARROW[row.direction]} ", style="bold")
        text.append(MEANING.get(row.via, row.via.replace("_", " ")), style="dim")
    else:
        text.append("◆ root", style="bold")
    return text


def title_cell(row: GraphRow) -> Text:
    """The record: its kind, its title; gone or repeated ones say so."""
    text = Text(f"{row.kind} ", style=KIND_STYLE.get(row.kind, "bold"))
    text.append(row.title, style="dim strike" if not row.exists else "")
    if row.repeat:
        text.append("  ↺", style="bold yellow")
    return text


class GraphPane(Pane):
    """Linked records on the left; the tree of links from the selected one on the right."""

    PANE_ID = "graph"
    TITLE = "Graph"
    KEY = "W"
    HELP = (
        "Every record that has links, most linked first; the tree shows what the selected "
        "record links to (→) and what links to it (←), three levels deep (↺: shown above, "
        "not opened again). enter on a tree row re-roots the tree there, backspace goes "
        "back; o opens the record in its own pane; tab moves between the list and the tree."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "open_record", "Open"),
        Binding("backspace", "back", "Back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.records: list[LinkedRecord] = []
        self.rows: list[GraphRow] = []
        #: The roots walked through with enter, newest last (backspace pops).
        self.trail: list[str] = []
        self.root: str | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="graph-columns"):
            yield VirtualTable(
                [
                    Column("links", "Links", width=5, justify="right"),
                    Column("record", "Linked record", min_width=16),
                ],
                id="graph-records",
                empty_text="Loading links…",
            )
            with Vertical(id="graph-side"):
                yield Static("", id="graph-status", classes="pane-toolbar")
                yield VirtualTable(
                    [
                        Column("via", "Link", width=20, min_width=12),
                        Column("record", "Record", min_width=20),
                    ],
                    id="graph-tree",
                    empty_text="Select a record to see its links",
                )

    def focus_main(self) -> None:
        self.query_one("#graph-records", VirtualTable).focus()

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load_records()

    @work(thread=True, exclusive=True, group="graph-records", exit_on_error=False)
    def _load_records(self) -> None:
        self.deliver(self._show_records, self.service.linked_records())

    def _show_records(self, records: list[LinkedRecord]) -> None:
        self.records = records
        table = self.query_one("#graph-records", VirtualTable)
        table.empty_text = "No links yet: episodes, merges and `memwork link` make them"
        rows = [
            Row(
                [str(r.links), Text.assemble((f"{r.kind} ", KIND_STYLE.get(r.kind, "")), r.title)],
                key=r.id,
            )
            for r in records
        ]
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        known = {r.id for r in records}
        if self.root is None or (self.root not in known and not self.trail):
            self.root = table.cursor_key
        self._load_tree()

    def _load_tree(self) -> None:
        if self.root is None:
            self._show_tree([])
            return
        self._read_tree(self.root)

    @work(thread=True, exclusive=True, group="graph-tree", exit_on_error=False)
    def _read_tree(self, root: str) -> None:
        try:
            rows = self.service.link_tree(root)
        except Exception:  # noqa: BLE001 - the record went away between the reads
            rows = []
        self.deliver(self._show_tree, rows)

    def _show_tree(self, rows: list[GraphRow]) -> None:
        self.rows = rows
        tree = self.query_one("#graph-tree", VirtualTable)
        tree.set_source(
            ListRowSource(
                [Row([tree_cell(r), title_cell(r)], key=str(n)) for n, r in enumerate(rows)]
            )
        )
        status = self.query_one("#graph-status", Static)
        if not rows:
            status.update("")
            return
        head = rows[0]
        back = f" · backspace: back ({len(self.trail)})" if self.trail else ""
        status.update(
            Text.assemble(
                (f"{head.kind} ", KIND_STYLE.get(head.kind, "bold")),
                f"· {head.links} links · {len(rows) - 1} shown{back}",
            )
        )

    # -- moving -------------------------------------------------------------------------
    @on(VirtualTable.CursorMoved, "#graph-records")
    def _record_moved(self, event: VirtualTable.CursorMoved) -> None:
        if event.key is not None and event.key != self.root:
            self.trail.clear()
            self.root = event.key
            self._load_tree()

    @on(VirtualTable.RowSelected, "#graph-records")
    def _record_chosen(self, event: VirtualTable.RowSelected) -> None:
        self.query_one("#graph-tree", VirtualTable).focus()

    @on(VirtualTable.RowSelected, "#graph-tree")
    def _tree_chosen(self, event: VirtualTable.RowSelected) -> None:
        row = self._tree_row(event.key)
        if row is None or row.depth == 0 or not self.root:
            return
        self.trail.append(self.root)
        self.root = row.id
        self._load_tree()

    def _tree_row(self, key: str | None) -> GraphRow | None:
        if key is None or not key.isdigit() or int(key) >= len(self.rows):
            return None
        return self.rows[int(key)]

    def _selected(self) -> GraphRow | None:
        """The record under the cursor: in the tree when it has the focus, else the root."""
        tree = self.query_one("#graph-tree", VirtualTable)
        if tree.has_focus:
            return self._tree_row(tree.cursor_key)
        return self.rows[0] if self.rows else None

    def action_back(self) -> None:
        """Back to the root before the last enter."""
        if not self.trail:
            self.warn("Nothing to go back to: enter on a tree row re-roots the tree")
            return
        self.root = self.trail.pop()
        self._load_tree()

    def action_open_record(self) -> None:
        """Open the record under the cursor in its own pane."""
        row = self._selected()
        if row is None:
            return
        pane = PANE_OF_KIND.get(row.kind)
        if pane is None or not row.exists:
            self.warn(f"A {row.kind} has no pane of its own" if row.exists else "It is gone")
            return
        self.post_message(JumpTo(pane, row.id))

    def jump_to(self, ref: str) -> None:
        self.trail.clear()
        self.root = ref
        table = self.query_one("#graph-records", VirtualTable)
        source = table.source
        if isinstance(source, ListRowSource) and (index := source.index_of(ref)) is not None:
            table.move_cursor(index)
        self._load_tree()
