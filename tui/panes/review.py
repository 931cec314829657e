"""Review: what agents proposed while the review queue is on, beside what it would
change, with keys to approve, edit then approve, reject and merge.

Proposals come from agents (CLI, MCP, the Python API) while the store setting
``review`` is on; the workbench is a person, so its own edits go live. Decisions
run as the core's ``review.approve`` / ``reject`` / ``merge`` through the app's
one write path, so each is audited as the workbench's.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from ...core.base.text import clip
from ..screens.form import Field, FormScreen
from ..screens.lesson_picker import LessonPicker
from ..widgets.proposal_detail import (
    STATUS_STYLE,
    kind_label,
    proposed_text,
    render_proposal,
    row_change,
)
from ..widgets.virtual_table import Column, ListRowSource, Row, VirtualTable
from .base import Pane


class ReviewPane(Pane):
    """Proposals on the left (oldest first), the selected one and its change on the right."""

    PANE_ID = "review"
    TITLE = "Review"
    HELP = (
        "While review is on (memwork config set review on, or o here), lesson adds and slot "
        "edits from agents wait here instead of going live, and never reach the context. "
        "a approves, e edits the text then approves, r rejects (with a reason), m merges a "
        "proposed lesson into a live one (reinforcing it). x shows decided proposals."
    )
    PALETTE_ANYWHERE = frozenset({"toggle_decided", "toggle_review"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve", tooltip="Make the proposal live as it is"),
        Binding("e", "edit", "Edit+approve", tooltip="Approve with your own text"),
        Binding("r", "reject", "Reject", tooltip="Turn it down, with a reason"),
        Binding("m", "merge", "Merge", tooltip="Reinforce a live lesson instead"),
        Binding("x", "toggle_decided", "Decided", tooltip="Show or hide decided proposals"),
        Binding("o", "toggle_review", "Review on/off", tooltip="The store's review setting"),
    ]
    #: Keys that decide: they need a pending proposal under the cursor.
    DECIDING: ClassVar[set[str]] = {"approve", "edit", "reject", "merge"}

    def __init__(self) -> None:
        super().__init__()
        self.proposals: dict[str, dict[str, Any]] = {}
        self.show_decided = False
        self.reviewing = False
        self._pending_jump: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="review-status", classes="pane-toolbar")
        with Horizontal(classes="split"):
            with Vertical(classes="list-column"):
                yield VirtualTable(
                    [
                        Column("what", "Proposal", width=13, min_width=11),
                        Column("by", "By", width=11, drop_order=1),  # the detail says it too
                        Column("change", "What it changes", min_width=24),
                    ],
                    id="proposals",
                    empty_text="Loading proposals…",
                )
            with VerticalScroll(classes="detail-column", id="review-detail-scroll"):
                yield Static("", id="review-detail")

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load(self.show_decided)

    @work(thread=True, exclusive=True, group="review-load", exit_on_error=False)
    def _load(self, include_decided: bool) -> None:
        self.deliver(self._show, *self.service.review_queue(include_decided))

    def _show(self, proposals: list[dict[str, Any]], reviewing: bool) -> None:
        self.proposals = {p["id"]: p for p in proposals}
        self.reviewing = reviewing
        rows = []
        # Pending first (oldest first: a queue), then decided ones, newest decision first.
        pending = [p for p in proposals if p["status"] == "pending"]
        decided = sorted(
            (p for p in proposals if p["status"] != "pending"),
            key=lambda p: p.get("decided_at") or "",
            reverse=True,
        )
        for p in [*pending, *decided]:
            flagged = bool(p.get("flags")) and p["status"] == "pending"
            what = Text(kind_label(p), style=STATUS_STYLE.get(p["status"], ""))
            if flagged:
                what.append(" ⚑", style=self._warning())
            rows.append(
                Row(
                    [
                        what,
                        p["proposed_by"],
                        Text(row_change(p))
                        if p["status"] == "pending"
                        else Text.assemble(
                            (f"{p['status']} ", STATUS_STYLE.get(p["status"], "")),
                            (row_change(p), "bright_black"),
                        ),
                    ],
                    key=p["id"],
                )
            )
        table = self.query_one("#proposals", VirtualTable)
        table.empty_text = (
            "Nothing waits for review"
            if reviewing
            else "Review is off: agents' writes go live (o turns it on)"
        )
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        self._show_status(len(pending), len(decided))
        self._show_detail()
        if self._pending_jump is not None:
            ref, self._pending_jump = self._pending_jump, None
            self.jump_to(ref)

    def _show_status(self, pending: int, decided: int) -> None:
        state = (
            Text("Review on", style="bold green")
            if self.reviewing
            else Text("Review off", style="bold bright_black")
        )
        waiting = f"{pending} waiting" if pending else "nothing waiting"
        parts: list[Any] = [state, " · ", (waiting, f"bold {self._warning()}" if pending else "")]
        if self.show_decided:
            parts.append(f" · {decided} decided (x hides them)")
        else:
            parts.append(" · x shows decided ones")
        if not self.reviewing:
            parts.append((" · agents' writes go live; o turns review on", "bright_black"))
        self.query_one("#review-status", Static).update(Text.assemble(*parts))

    # -- selection --------------------------------------------------------------------
    def selected(self) -> dict[str, Any] | None:
        """The proposal under the cursor."""
        key = self.query_one("#proposals", VirtualTable).cursor_key
        return self.proposals.get(key) if key else None

    @on(VirtualTable.CursorMoved, "#proposals")
    def _cursor(self) -> None:
        self._show_detail()
        self.refresh_bindings()

    def _show_detail(self) -> None:
        self.query_one("#review-detail", Static).update(
            render_proposal(self.selected(), self.service.now, self._warning())
        )

    def _warning(self) -> str:
        """The theme's colour for flags (a plain yellow is unreadable on the light one)."""
        return self.app.theme_variables.get("text-warning", "yellow")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())

    def _redraw(self) -> None:
        if self.proposals:
            self._show(list(self.proposals.values()), self.reviewing)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.DECIDING:
            proposal = self.selected()
            if proposal is None or proposal["status"] != "pending":
                return None  # shown dimmed: nothing to decide here
            if action == "merge" and (proposal["kind"], proposal["op"]) != ("lesson", "add"):
                return None
            if action == "edit" and proposal["kind"] in ("config", "checkpoint"):
                return None  # nothing to edit: approve or reject it
        return True

    def jump_to(self, ref: str) -> None:
        if ref not in self.proposals:
            if not self.show_decided:
                self.show_decided = True  # a decided one (from History): show them
            self._pending_jump = ref
            self.reload()
            return
        table = self.query_one("#proposals", VirtualTable)
        for index in range(table.row_count):
            if table.row_key_at(index) == ref:
                table.move_cursor(index)
                break
        table.focus()
        self._show_detail()

    # -- actions ----------------------------------------------------------------------
    def _need_pending(self) -> dict[str, Any] | None:
        proposal = self.selected()
        if proposal is None:
            self.warn("Select a proposal first")
        elif proposal["status"] != "pending":
            self.warn(f"This proposal was already {proposal['status']}")
            return None
        return proposal

    async def action_approve(self) -> None:
        if proposal := self._need_pending():
            await self.workbench.write(
                "approve_proposal",
                proposal=proposal["id"],
                done=lambda decided: f"Approved: {decided['result']}",
            )

    def action_edit(self) -> None:
        proposal = self._need_pending()
        if proposal is None:
            return
        # A slot edit that no longer applies (its text is gone) is approved as the slot's
        # whole text, written from what the slot holds now: an edit of the piece alone
        # would be refused the same way.
        whole = proposal["kind"] == "slot" and bool(proposal.get("stale"))

        async def submit(values: dict[str, str]) -> Any:
            return await self.workbench.write(
                "approve_proposal",
                proposal=proposal["id"],
                edit=values["text"],
                whole_slot=whole,
                done=lambda decided: f"Approved with your text: {decided['result']}",
            )

        if proposal["kind"] in ("config", "checkpoint"):
            self.warn("This proposal has no text to edit: approve (a) or reject (r) it")
            return
        label = (
            "Rule"
            if proposal["kind"] == "rule"
            else {
                "add": "Lesson",
                "set": "Slot text",
                "append": "Text to append",
                "replace": f"Replace {proposal['args'].get('old', '')!r} with",
                "edit": "Lesson" if proposal["kind"] == "lesson" else "Card's lesson",
            }[proposal["op"]]
        )
        text, help_text = (
            proposed_text(proposal),
            (f"Proposed by {proposal['proposed_by']}; your text goes live."),
        )
        if whole:
            label = f"The whole of slot {proposal['target']}"
            text = str(proposal.get("before", ""))
            help_text = (
                f"The proposed {proposal['op']} no longer applies ({proposal['stale']}). "
                f"This is the slot as it is now: write what it should say; it replaces it all."
            )
        self.app.push_screen(
            FormScreen(
                f"{'Edit the whole slot' if whole else 'Edit'}, then approve: "
                f"{kind_label(proposal)} {proposal['target']}",
                [Field("text", label, text, multiline=True, help=help_text)],
                submit,
                save_label="Approve",
            )
        )

    def action_reject(self) -> None:
        proposal = self._need_pending()
        if proposal is None:
            return

        async def submit(values: dict[str, str]) -> Any:
            return await self.workbench.write(
                "reject_proposal", proposal=proposal["id"], why=values["why"], done="Rejected"
            )

        self.app.push_screen(
            FormScreen(
                f"Reject: {proposal['change']}",
                [
                    Field(
                        "why",
                        "Why (optional, kept with the proposal)",
                        placeholder="e.g. contradicts the canary rule",
                    )
                ],
                submit,
                save_label="Reject",
            )
        )

    async def action_merge(self) -> None:
        proposal = self._need_pending()
        if proposal is None:
            return
        if (proposal["kind"], proposal["op"]) != ("lesson", "add"):
            self.warn("Only a proposed lesson can be merged into a lesson")
            return
        live = await self.workbench.io(self.service.live_lessons)
        if not live:
            self.warn("No live lesson to merge into: a (approve) adds it as a new one")
            return
        suggested = proposal.get("duplicate_of") or (proposal.get("nearest") or {}).get("id")

        async def chosen(lesson: dict[str, Any] | None) -> None:
            if lesson is not None:
                await self.workbench.write(
                    "merge_proposal",
                    proposal=proposal["id"],
                    lesson=lesson["id"],
                    done=lambda decided: f"Merged: {decided['result']}",
                )

        self.app.push_screen(
            LessonPicker(
                f"Merge “{clip(proposal['args'].get('content', ''), 60)}” into a live lesson "
                "(it is reinforced; the wording joins its history)",
                live,
                suggested,
            ),
            chosen,
        )

    def action_toggle_decided(self) -> None:
        self.show_decided = not self.show_decided
        self.reload()

    async def action_toggle_review(self) -> None:
        turn = "off" if self.reviewing else "on"
        await self.workbench.write(
            "set_config",
            key="review",
            value=turn,
            done=f"Review {turn}: agents' writes "
            + ("wait here" if turn == "on" else "go live again"),
        )
