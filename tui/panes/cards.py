"""Mistake cards: ranked by how often they recur, edited and merged from the keyboard.

The list is ranked as everywhere else (seen count, then the latest episode);
the selected card's decisions, evidence and lesson show below it. ``e`` edits
the lesson and the evidence, ``space`` marks a card and ``m`` merges the
marked card into the selected one after a confirmation that names both.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...core.base.text import clip
from ...core.models.card import DEFAULT_LESSON, TEXT_CAP
from ..messages import JumpTo
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen
from ..widgets.bars import ago, plural
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from .base import Pane

MARK = "●"


class CardsPane(Pane):
    """Ranked mistake cards above, the selected card below."""

    PANE_ID = "cards"
    TITLE = "Mistake cards"
    SHORT_TITLE = "Cards"
    HELP = (
        "Ranked by seen count, then by the latest episode. e edits the lesson and evidence; "
        "to merge duplicates, mark one with space, select the card to keep and press m "
        "(the counts add up). v shows the card's latest episode."
    )
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Edit"),
        Binding("space", "toggle_mark", "Mark"),
        Binding("m", "merge", "Merge"),
        Binding("v", "view_episode", "Episode"),
        Binding("escape", "clear_mark", "Unmark", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.cards: dict[str, dict[str, Any]] = {}
        self.ranked: list[str] = []
        #: The card marked for merging (space), if any.
        self.marked: str | None = None
        self._pending_jump: str | None = None
        self._loaded = False

    def compose(self) -> ComposeResult:
        yield Static("", id="cards-status", classes="pane-toolbar")
        yield VirtualTable(
            [
                Column("mark", "", width=1),
                Column("seen", "Seen", width=5, justify="right"),
                Column("type", "Type", width=22, min_width=14),
                Column("task", "Task", width=18, min_width=12, drop_order=4),
                Column("worker", "Worker", width=10, drop_order=3),
                Column("first", "First", width=6, justify="right", drop_order=1),
                Column("last", "Last", width=6, justify="right", drop_order=2),
                Column("lesson", "Lesson", min_width=24),
            ],
            id="cards-table",
            empty_text="Loading mistake cards…",
        )
        with VerticalScroll(id="cards-detail-scroll"):
            yield Static("", id="cards-detail")

    def focus_main(self) -> None:
        self.query_one("#cards-table", VirtualTable).focus()

    @property
    def table(self) -> VirtualTable:
        """The ranked list."""
        return self.query_one("#cards-table", VirtualTable)

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="cards-load", exit_on_error=False)
    def _load(self) -> None:
        self.deliver(self._show, self.service.all_cards())

    def _show(self, ranked: list[dict[str, Any]]) -> None:
        self._loaded = True
        self.cards = {c["id"]: c for c in ranked}
        self.ranked = [c["id"] for c in ranked]
        if self.marked not in self.cards:
            self.marked = None
        table = self.table
        table.empty_text = "No mistake cards yet: episodes report them (mistake_cards)"
        table.set_source(ListRowSource(self._rows()), keep_key=table.cursor_key)
        self._show_status()
        self._show_detail()
        if self._pending_jump is not None:
            self.jump_to(self._pending_jump)

    def _rows(self) -> list[Row]:
        rows = []
        for card_id in self.ranked:
            card = self.cards[card_id]
            lesson = card.get("lesson", "")
            rows.append(
                Row(
                    [
                        Text(MARK, style="bold yellow") if card_id == self.marked else "",
                        f"{card['seen_count']}×",
                        Text(card["mistake_type"], style="magenta"),
                        card["task_id"],
                        card.get("worker_id") or Text("—", style="dim"),
                        f"#{card['first_seen_episode']}",
                        f"#{card['last_seen_episode']}",
                        Text(lesson, style="dim") if lesson == DEFAULT_LESSON else lesson,
                    ],
                    key=card_id,
                )
            )
        return rows

    def _refresh_rows(self) -> None:
        """Redraw after a mark change (the data is unchanged)."""
        table = self.table
        table.set_source(ListRowSource(self._rows()), keep_key=table.cursor_key)
        self._show_status()

    def _show_status(self) -> None:
        total = sum(int(c["seen_count"]) for c in self.cards.values())
        parts: list[Any] = [
            (plural(len(self.cards), "card"), "bold"),
            f" · {plural(total, 'sighting')}",
        ]
        marked = self.cards.get(self.marked or "")
        if marked is not None:
            parts += [
                ("  ● ", "bold yellow"),
                f"[{marked['mistake_type']}] {marked['task_id']}",
                (" marked: select the card to keep, press m", "italic"),
            ]
        elif self.cards:
            parts.append(("  · space marks a card to merge", "dim"))
        self.query_one("#cards-status", Static).update(Text.assemble(*parts))

    # -- selection and detail ---------------------------------------------------------
    def selected(self) -> dict[str, Any] | None:
        """The card under the cursor."""
        key = self.table.cursor_key
        return self.cards.get(key) if key else None

    @on(VirtualTable.CursorMoved, "#cards-table")
    def _cursor_moved(self) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#cards-detail", Static)
        card = self.selected()
        if card is None:
            detail.update(Text("No card selected", style="italic"))
            return
        detail.update(self._render_card(card))

    def _render_card(self, card: dict[str, Any]) -> Group:
        now = self.service.now
        head = Text.assemble(
            (f"[{card['mistake_type']}]", "bold magenta"),
            (f"  seen {card['seen_count']}×", "bold"),
            f"  · task {card['task_id']}",
            f" · worker {card['worker_id']}" if card.get("worker_id") else "",
            f" · episodes #{card['first_seen_episode']} → #{card['last_seen_episode']}",
        )
        left = Text.assemble(
            ("Bad decision\n", "bold"),
            card.get("bad_decision") or Text("not recorded", style="dim italic"),
            ("\n\nCorrect decision\n", "bold"),
            card.get("correct_decision") or Text("not recorded", style="dim italic"),
            ("\n\nEvidence\n", "bold"),
            card.get("evidence") or Text("none", style="dim italic"),
        )
        lesson = card.get("lesson", "")
        right = Text.assemble(
            ("Lesson\n", "bold"),
            lesson,
            ("  (the default: e writes a better one)" if lesson == DEFAULT_LESSON else "", "dim"),
        )
        merged = card.get("merged_from") or []
        if merged:
            right.append(f"\n\nMerged from ({len(merged)})\n", style="bold")
            right.append("\n".join(merged), style="dim")
        right.append(f"\n\n{card['id']}", style="dim")
        right.append(f"\nupdated {ago(card.get('updated_at'), now)}", style="dim")
        grid = Table.grid(expand=True, padding=(0, 2))
        grid.add_column(ratio=1)
        grid.add_column(ratio=1)
        grid.add_row(left, right)
        return Group(head, Text(""), grid)

    def jump_to(self, ref: str) -> None:
        """Select card ``ref``; a card merged away selects the card that absorbed it."""
        if not self._loaded:
            self._pending_jump = ref
            return
        self._pending_jump = None
        target = ref if ref in self.cards else None
        if target is None:
            target = next(
                (k for k, c in self.cards.items() if ref in c.get("merged_from", [])), None
            )
            if target is not None:
                self.app.notify("That card was merged into this one", timeout=4)
        if target is None:
            self.warn(f"Mistake card {ref} is not in the store")
            return
        self.table.move_cursor(self.ranked.index(target))
        self.table.focus()

    # -- actions ----------------------------------------------------------------------
    def _need_card(self) -> dict[str, Any] | None:
        card = self.selected()
        if card is None:
            self.warn("Select a mistake card first")
        return card

    def action_toggle_mark(self) -> None:
        """Mark (or unmark) the selected card as the one to merge away."""
        card = self._need_card()
        if card is None:
            return
        self.marked = None if self.marked == card["id"] else card["id"]
        self._refresh_rows()

    def action_clear_mark(self) -> None:
        """Forget the mark."""
        if self.marked is not None:
            self.marked = None
            self._refresh_rows()

    def action_merge(self) -> None:
        """Merge the marked card into the selected one (asks first)."""
        keep = self.selected()
        absorb = self.cards.get(self.marked or "")
        if keep is None or absorb is None:
            self.warn("Mark the duplicate card with space, select the card to keep, then press m")
            return
        if keep["id"] == absorb["id"]:
            self.app.notify("Select a different card to merge the marked one into")
            return
        total = int(keep["seen_count"]) + int(absorb["seen_count"])
        first = min(keep["first_seen_episode"], absorb["first_seen_episode"])
        last = max(keep["last_seen_episode"], absorb["last_seen_episode"])

        async def answered(yes: bool | None) -> None:
            if yes:
                done = await self.workbench.write(
                    "merge_cards",
                    keep=keep["id"],
                    absorb=absorb["id"],
                    done=f"Merged: the card is now seen {total}×",
                    restore_point="merging two mistake cards",
                )
                if done is not None:
                    self.marked = None

        detail = (
            f"Keep   {_name(keep)}\n       {_describe(keep)}\n"
            f"Absorb {_name(absorb)}\n       {_describe(absorb)}\n\n"
            f"The counts add up: the kept card will be seen {total}× "
            f"({keep['seen_count']} + {absorb['seen_count']}), episodes #{first} → #{last}. "
            "The absorbed card leaves the list; its id stays in merged_from and the audit log."
        )
        self.app.push_screen(
            ConfirmScreen("Merge these mistake cards?", detail, confirm="Merge"),
            answered,
        )

    def action_edit(self) -> None:
        """Edit the selected card's lesson and evidence."""
        card = self._need_card()
        if card is None:
            return

        async def submit(values: dict[str, str]) -> Any:
            cut = max(len(values["lesson"].strip()), len(values["evidence"].strip())) > TEXT_CAP
            return await self.workbench.write(
                "edit_card",
                card=card["id"],
                lesson=values["lesson"],
                evidence=values["evidence"],
                done=f"Card saved{f' (cut to {TEXT_CAP} characters)' if cut else ''}",
            )

        self.app.push_screen(
            FormScreen(
                f"Edit mistake card [{card['mistake_type']}] {card['task_id']}",
                [
                    Field(
                        "lesson",
                        "Lesson",
                        card.get("lesson", ""),
                        multiline=True,
                        help=f"What to do next time; at most {TEXT_CAP} characters are kept",
                    ),
                    Field(
                        "evidence",
                        "Evidence",
                        card.get("evidence", ""),
                        multiline=True,
                        help=f"What showed the mistake; at most {TEXT_CAP} characters are kept",
                    ),
                ],
                submit,
            )
        )

    def action_view_episode(self) -> None:
        """Show the card's latest episode in the Episodes pane."""
        card = self._need_card()
        if card is not None:
            self.workbench.post_message(JumpTo("episodes", f"#{card['last_seen_episode']}"))


def _name(card: dict[str, Any]) -> str:
    # The worker is part of what makes a card itself: two cards of one type and task
    # often differ only by it, so the dialog names it.
    worker = card.get("worker_id") or "no worker"
    return f"[{card['mistake_type']}] {card['task_id']} · {worker} — seen {card['seen_count']}×"


def _describe(card: dict[str, Any]) -> str:
    """The card's own words: its lesson, or (while that is the default) its correct decision."""
    lesson = card.get("lesson", "")
    if lesson and lesson != DEFAULT_LESSON:
        return f"“{_clip(lesson)}”"
    if card.get("correct_decision"):
        return f"do: {_clip(card['correct_decision'])}"
    return f"“{_clip(lesson)}”"


def _clip(text: str) -> str:
    return clip(text, 52)
