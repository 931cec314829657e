"""Work items: every action, the frontier first, with a key to change a status.

``w`` in the Sessions pane (or "Work items" in the palette) opens it. The rows are
the store's actions as ``memwork action list`` orders them (open ones first, by
priority then age); a ``▶`` marks what can be worked on now (the frontier), and an
action waiting for others names them. ``a`` makes the selected action active,
``d`` done, ``b`` blocked, ``p`` pending again, ``x`` cancelled; ``n`` adds a work
item and ``e`` edits the selected one (title, priority, a note, more dependencies:
:mod:`tui.screens.work_forms`); the list follows the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, Static

from ...core.base.text import clip
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from . import work_forms
from .dialog import Dialog

if TYPE_CHECKING:
    from ..app import MemworkApp

STATUS_STYLE = {
    "pending": "",
    "active": "bold green",
    "blocked": "yellow",
    "done": "bright_black",
    "cancelled": "bright_black strike",
}


#: The keys, under the selected item.
KEYS = (
    "n new · e edit · a active · d done · b blocked · p pending · x cancel · / filter · Esc close"
)


class WorkScreen(Dialog[None]):
    """The store's actions; a key changes the selected one's status."""

    BINDINGS = [
        Binding("escape,q", "dismiss(None)", "Close"),
        Binding("a", "status('active')", "Active"),
        Binding("d", "status('done')", "Done"),
        Binding("b", "status('blocked')", "Blocked"),
        Binding("p", "status('pending')", "Pending"),
        Binding("x", "status('cancelled')", "Cancel item"),
        Binding("n", "add", "New"),
        Binding("e", "edit", "Edit"),
        # A modal screen hears none of the app's keys: its list's filter is bound here.
        Binding("slash", "app.search", "Filter", key_display="/"),
    ]
    DEFAULT_CSS = """
    WorkScreen { align: center middle; }
    WorkScreen > Vertical {
        width: 110; max-width: 100%; height: 90%; padding: 0 1;
        border: thick $accent 60%; background: $surface;
    }
    WorkScreen #work-title { text-style: bold; width: 1fr; }
    WorkScreen #work-detail { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, Any]] = []
        self._select: str | None = None  # a new item's id, selected once it is listed

    @property
    def workbench(self) -> MemworkApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Work items", id="work-title")
            yield VirtualTable(
                [
                    Column("now", "", width=1),
                    Column("status", "Status", width=9),
                    Column("priority", "Pri", width=3),
                    Column("title", "Action", min_width=24),
                    Column("project", "Project", width=12, drop_order=1),
                ],
                id="work",
                empty_text="Reading the store…",
            )
            yield Static(KEYS, id="work-detail")

    def on_mount(self) -> None:
        self.query_one("#work", VirtualTable).focus()
        self.load()

    def store_changed(self) -> None:
        """The store moved (a change here, or an agent): read the actions again."""
        self.load()

    @work(thread=True, exclusive=True, group="work-load", exit_on_error=False)
    def load(self) -> None:
        """Read every action (in a thread)."""
        rows = self.workbench.service.work_items()
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        table = self.query_one("#work", VirtualTable)
        table.empty_text = "No work items yet (memwork action add TITLE)"
        table.set_source(
            ListRowSource(
                [
                    Row(
                        [
                            Text("▶" if r["workable"] else "", style="bold green"),
                            Text(r["status"], style=STATUS_STYLE.get(r["status"], "")),
                            Text(str(r.get("priority") or 0)),
                            Text(clip(r["title"], 200)),
                            Text(r.get("project") or "", style="bright_black"),
                        ],
                        key=r["id"],
                    )
                    for r in rows
                ]
            ),
            keep_key=self._select or table.cursor_key,
        )
        if self._select and any(r["id"] == self._select for r in rows):
            self._select = None
        frontier = sum(1 for r in rows if r["workable"])
        self.query_one("#work-title", Label).update(
            f"Work items · {len(rows)} · {frontier} to do now (▶)"
        )
        self._detail()

    def select_after_load(self, action_id: str) -> None:
        """Select ``action_id`` once the list holds it (after a write's reload)."""
        self._select = action_id

    def selected(self) -> dict[str, Any] | None:
        key = self.query_one("#work", VirtualTable).cursor_key
        return next((r for r in self.rows if r["id"] == key), None)

    @on(VirtualTable.CursorMoved)
    def _detail(self) -> None:
        row = self.selected()
        detail = self.query_one("#work-detail", Static)
        if row is None:
            return
        waiting = ", ".join(
            next((x["title"] for x in self.rows if x["id"] == w), w) for w in row["waiting_for"]
        )
        lines = [f"{row['id']} · {row['title']}"]
        if waiting:
            lines.append(f"waits for: {clip(waiting, 160)}")
        if row.get("notes"):
            lines.append(f"note: {clip(row['notes'][-1]['text'], 160)}")
        lines.append(KEYS)
        detail.update("\n".join(lines))

    def action_add(self) -> None:
        """Add a work item (a form)."""
        work_forms.add_item(self)

    def action_edit(self) -> None:
        """Edit the selected work item (a form)."""
        row = self.selected()
        if row is None:
            self.app.notify("No work item selected", severity="warning")
            return
        work_forms.edit_item(self, row)

    async def action_status(self, status: str) -> None:
        row = self.selected()
        if row is None:
            self.app.notify("No work item selected", severity="warning")
            return
        if await self.workbench.write(
            "action_update",
            action=row["id"],
            status=status,
            done=f"“{clip(row['title'], 40)}” is {status}",
        ):
            self.load()
