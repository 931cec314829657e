"""Slots: the pinned blocks that lead every context, edited with a live count against
the limit. Create, delete, reorder, lock; over-limit (imported) slots are flagged.

Unsaved edits are never lost silently: moving to another slot keeps the text as a
draft (flagged in the list, restored when the slot is selected again) until it is
saved (ctrl+s) or discarded (x, after a confirmation).
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static, TextArea

from ...core.base.errors import MemworkError
from ...core.services.interop.letta_agents import owner_of
from ..external_editor import TOOLTIP as EDITOR_TIP
from ..screens.letta_agent import LettaAgentScreen
from ..widgets.slot_editor import SlotEditor
from ..widgets.slot_rows import slot_row, slots_status
from ..widgets.virtual_table import Column, ListRowSource, VirtualTable
from . import slot_forms as forms
from .base import Pane


class SlotsPane(Pane):
    """The slot list above, the selected slot's text below in an editor."""

    PANE_ID = "slots"
    TITLE = "Slots"
    HELP = (
        "Slots lead every context, in list order. The editor follows the list: Enter or e "
        "edits, ctrl+s saves, Esc goes back to the list and keeps unsaved text as a draft "
        "(x discards it). An edit past the limit is refused and your text is kept. "
        "Shift+↑/↓ (or K/J) move the selected slot; i edits its limit and description; a "
        "shows the Letta agent an imported slot came from (its system prompt)."
    )
    PALETTE_ANYWHERE = frozenset({"new"})
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "edit", "Edit"),
        Binding("n", "new", "New"),
        Binding("d", "delete", "Delete"),
        Binding("shift+up,K", "move(-1)", "Move", key_display="⇧↑↓"),
        Binding("shift+down,J", "move(1)", "Move down", key_display="⇧↓ J", show=False),
        Binding("i", "details", "Limit/desc."),
        Binding("a", "agent", "Letta agent", show=False),
        Binding("l", "toggle_lock", "Lock"),
        Binding("x", "discard", "Discard"),
        Binding("ctrl+s", "save", "Save"),
        Binding("escape", "leave_editor", "Back to list"),
        Binding("E", "external_edit", "In $EDITOR", show=False, tooltip=EDITOR_TIP),
    ]

    #: Shown (and active) only while the list has the focus.
    LIST_ACTIONS: ClassVar[set[str]] = {
        "edit",
        "new",
        "delete",
        "move",
        "details",
        "agent",
        "toggle_lock",
        "discard",
        "external_edit",
    }

    def __init__(self) -> None:
        super().__init__()
        self.slots: dict[str, dict[str, Any]] = {}
        #: Unsaved text per slot id (the slot in the editor is compared live instead).
        self.drafts: dict[str, str] = {}
        #: The slot whose text the editor holds, and its stored content when loaded.
        self.editor_id: str | None = None
        self.editor_base = ""
        #: The core's refusal of the last save, shown until the text changes.
        self.save_error = ""
        self.save_error_text = ""
        self.save_error_limit = 0
        self._flags_shown: dict[str, bool] = {}
        self._status_shown: Text | None = None
        self._pending_jump: str | None = None
        self._pending_edit = False
        self._loaded = False  # until then an empty list means "not read yet"
        #: The slot being deleted from here (its draft goes with it, as confirmed).
        self._deleting: str | None = None
        #: Slot id -> its lint findings (core.services.lint), loaded beside the slots.
        self.findings: dict[str, list[dict[str, Any]]] = {}
        #: The Letta agents imports brought (their memory blocks became slots).
        self.agents: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="slots-status", classes="pane-toolbar")
        yield VirtualTable(
            [
                Column("position", "#", width=2, justify="right"),
                Column("label", "Label", width=32, min_width=16),
                Column("chars", "Chars", width=11, justify="right"),
                Column("flags", "Flags", width=20, min_width=11, drop_order=2),
                Column("description", "Description", min_width=12, drop_order=1),
            ],
            id="slots",
            empty_text="Loading slots…",
        )
        yield SlotEditor()

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._redraw())

    # -- loading ----------------------------------------------------------------------
    def load(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="slots-load", exit_on_error=False)
    def _load(self) -> None:
        self.deliver(self._show, self.service.all_slots(), self.service.letta_agents())
        self._load_lint()

    @work(thread=True, exclusive=True, group="slots-lint", exit_on_error=False)
    def _load_lint(self) -> None:
        self.deliver(self._show_lint, self.service.lint_findings())

    def _show_lint(self, findings: list[dict[str, Any]]) -> None:
        from ...core.services.lint import by_record

        index = by_record(findings)
        self.findings = {k: v for k, v in index.items() if k in self.slots}
        self._render_rows()
        self._render_editor_info()

    def _show(
        self, slots: list[dict[str, Any]], agents: list[dict[str, Any]] | None = None
    ) -> None:
        self.agents = agents or []
        self._loaded = True
        previous = self.slots
        self.slots = {s["id"]: s for s in slots}
        # Unsaved text of a slot deleted elsewhere (an agent, another workbench) is
        # not dropped silently: it goes to the clipboard and a toast says so.
        lost = {k: self.drafts.pop(k) for k in list(self.drafts) if k not in self.slots}
        editor_text = self.query_one("#slot-editor", TextArea).text
        gone = previous.get(self.editor_id or "")
        if gone is not None and gone["id"] not in self.slots and editor_text != gone["content"]:
            lost[gone["id"]] = editor_text
        lost.pop(self._deleting or "", None)  # deleted here, after a confirmation
        self._deleting = None
        if lost:
            labels = ", ".join(previous.get(k, {}).get("label", k) for k in lost)
            self.run_worker(
                self.workbench.copy_out(
                    "\n\n".join(lost.values()),
                    f"Slot {labels} was deleted elsewhere: your unsaved text was",
                    severity="warning",
                ),
                group="slots-lost-draft",
            )
        self._redraw()
        if self._pending_jump in self.slots:
            target, self._pending_jump = self._pending_jump, None
            self.jump_to(target)
            if self._pending_edit:
                self._pending_edit = False
                self.query_one("#slot-editor", TextArea).focus()

    # -- rendering --------------------------------------------------------------------
    def _colour(self, name: str, fallback: str) -> str:
        """A theme colour for Rich text (so dark and light themes both read well)."""
        return self.app.theme_variables.get(name, fallback)

    def ordered(self) -> list[dict[str, Any]]:
        """Slots in context order."""
        return sorted(self.slots.values(), key=lambda s: (s["position"], s["label"]))

    def _redraw(self) -> None:
        self._render_rows()
        self._sync_editor()
        self._refresh_flags()  # the editor may have turned a draft into a flag, or back

    def _render_rows(self) -> None:
        error, warning = self._colour("error", "red"), self._colour("text-warning", "yellow")
        rows = [
            slot_row(
                i,
                slot,
                draft=self._has_draft(slot["id"]),
                findings=self.findings.get(slot["id"], []),
                error=error,
                warning=warning,
            )
            for i, slot in enumerate(self.ordered())
        ]
        table = self.query_one("#slots", VirtualTable)
        if self._loaded:
            table.empty_text = "No slots yet: press n (agents use memwork slot set)"
        # As tall as the list (header + rows), within reason: the editor gets the rest.
        height = max(4, min(len(rows) + 2, 14))
        if table.styles.height is None or table.styles.height.value != height:
            table.styles.height = height
        table.set_source(ListRowSource(rows), keep_key=table.cursor_key)
        self._flags_shown = {k: self._has_draft(k) for k in self.slots}

    def _refresh_flags(self) -> None:
        """Redraw the rows only when a draft flag appeared or went (typing is hot)."""
        if {k: self._has_draft(k) for k in self.slots} != self._flags_shown:
            self._render_rows()
            self.refresh_bindings()  # "Discard" and "Save" depend on drafts
        self._render_status()

    def _render_status(self) -> None:
        drafts = sum(1 for k in self.slots if self._has_draft(k))
        status = slots_status(
            list(self.slots.values()),
            drafts,
            error=self._colour("error", "red"),
            warning=self._colour("text-warning", "yellow"),
        )
        if status != self._status_shown:  # typing redraws this: only when it changed
            self._status_shown = status
            self.query_one("#slots-status", Static).update(status)

    def unsaved_work(self) -> str:
        """Drafts quitting would lose (the app asks before it quits)."""
        drafts = sum(1 for k in self.slots if self._has_draft(k))
        return f"{drafts} unsaved slot draft{'' if drafts == 1 else 's'}" if drafts else ""

    def _has_draft(self, slot_id: str) -> bool:
        if slot_id == self.editor_id and slot_id in self.slots:
            return self._editor_dirty()
        return slot_id in self.drafts

    def _editor_dirty(self) -> bool:
        slot = self.slots.get(self.editor_id or "")
        if slot is None:
            return False
        saved: str = slot["content"]
        return self.query_one("#slot-editor", TextArea).text != saved

    def selected(self) -> dict[str, Any] | None:
        key = self.query_one("#slots", VirtualTable).cursor_key
        return self.slots.get(key) if key else None

    def _sync_editor(self) -> None:
        """Make the editor show the selected slot (its draft if it has one)."""
        editor = self.query_one("#slot-editor", TextArea)
        slot = self.selected()
        new_id = slot["id"] if slot else None
        if new_id != self.editor_id:
            # Leaving a slot: unsaved text becomes its draft (never lost silently).
            if self.editor_id is not None:
                old = self.slots.get(self.editor_id)
                if old is not None and editor.text != old["content"]:
                    self.drafts[self.editor_id] = editor.text
                else:
                    self.drafts.pop(self.editor_id, None)
            self.editor_id = new_id
            self.save_error = ""
            if slot is None:
                self.editor_base = ""
                editor.read_only = True
                editor.load_text("")
            else:
                self.editor_base = slot["content"]
                editor.read_only = bool(slot.get("read_only"))
                editor.load_text(self.drafts.pop(slot["id"], slot["content"]))
        elif slot is not None:
            editor.read_only = bool(slot.get("read_only"))
            if self.save_error and int(slot["limit"]) != self.save_error_limit:
                self.save_error = ""  # refused under another limit: it may fit now
            if slot["content"] != self.editor_base and editor.text == self.editor_base:
                # Changed in the store (an agent, or our own save) and not edited here.
                editor.load_text(slot["content"])
                self.editor_base = slot["content"]
        self._render_editor_info()

    def _render_editor_info(self) -> None:
        slot = self.slots.get(self.editor_id or "")
        owner = owner_of(self.agents, slot["label"]) if slot else None
        self.query_one(SlotEditor).show_info(
            slot,
            agent=str(owner.get("name") or owner.get("id")) if owner else "",
            base=self.editor_base,
            save_error=self.save_error,
            findings=[
                f for f in self.findings.get(self.editor_id or "", []) if f["kind"] != "over_limit"
            ],
        )

    @on(VirtualTable.CursorMoved, "#slots")
    def _cursor(self) -> None:
        self._sync_editor()
        self._refresh_flags()

    @on(TextArea.Changed, "#slot-editor")
    def _edited(self) -> None:
        if (
            self.save_error
            and self.query_one("#slot-editor", TextArea).text != self.save_error_text
        ):
            self.save_error = ""  # the refused text was changed: the refusal no longer applies
        self._render_editor_info()
        self._refresh_flags()

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

    def _editor_focused(self) -> bool:
        focused = self.screen.focused
        return focused is not None and focused.id == "slot-editor"

    def applies(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        in_editor = self._editor_focused()
        if action in self.LIST_ACTIONS and in_editor:
            return False
        if action == "leave_editor":
            return in_editor
        if action == "discard":
            slot = self.selected()
            return slot is not None and self._has_draft(slot["id"])
        if action == "save":
            slot = self.selected()
            return in_editor or (slot is not None and self._has_draft(slot["id"]))
        return True

    def focus_main(self) -> None:
        self.query_one("#slots", VirtualTable).focus()

    def jump_to(self, ref: str) -> None:
        table = self.query_one("#slots", VirtualTable)
        for index in range(table.row_count):
            if table.row_key_at(index) == ref:
                table.move_cursor(index)
                self._sync_editor()  # now, so keys typed next land in this slot
                break
        else:
            self._pending_jump = ref  # not loaded yet: select it when the list arrives
        table.focus()

    # -- actions ----------------------------------------------------------------------
    def _need_slot(self) -> dict[str, Any] | None:
        slot = self.selected()
        if slot is None:
            self.warn("No slot selected: n creates one")
        return slot

    @on(VirtualTable.RowSelected, "#slots")
    def action_edit(self) -> None:
        slot = self._need_slot()
        if slot is None:
            return
        editor = self.query_one("#slot-editor", TextArea)
        editor.focus()
        if slot.get("read_only"):
            self.app.notify(
                f"{slot['label']} is read-only: you can read and copy it; l unlocks it",
                timeout=4,
            )

    async def action_external_edit(self) -> None:
        """Edit the selected slot in $EDITOR; saved as ``memwork slot set`` (its limit and
        read-only flag checked the same way)."""
        slot = self._need_slot()
        if slot is None:
            return
        if self._has_draft(slot["id"]):
            self.warn(f"{slot['label']} has unsaved edits here: ctrl+s saves, x discards")
            return

        await forms.edit_in_editor(self, slot)

    def action_leave_editor(self) -> None:
        if self._editor_dirty():
            self.app.notify("Kept as a draft: ctrl+s saves, x discards")
        self.query_one("#slots", VirtualTable).focus()

    async def action_save(self) -> None:
        slot = self.slots.get(self.editor_id or "")
        if slot is None:
            return
        editor = self.query_one("#slot-editor", TextArea)
        text = editor.text
        if text == slot["content"]:
            self.app.notify("No changes to save", timeout=2)
            return
        try:
            # The editor is an inline form: a refusal is shown in it (and toasted).
            saved = await self.workbench.write(
                "set_slot",
                label=slot["label"],
                text=text,
                form=True,
                done=lambda s: (
                    f"Saved {s['label']} ({s['chars']}/{s['limit']})"
                    if s["content"] == text
                    else ""
                ),
            )
        except MemworkError as exc:
            # The core refused (over the limit, read-only…): say why, keep the text.
            self.save_error = str(exc)
            self.save_error_text = text
            self.save_error_limit = int(slot["limit"])
            self._render_editor_info()
            self.app.notify(str(exc), title="Not saved", severity="error", timeout=8)
            return
        if saved is None:  # write() returns None for a refusal only, which form=True raises
            return
        self.save_error = ""
        self.slots[saved["id"]] = saved
        self.editor_base = saved["content"]
        if saved["content"] != text:
            editor.load_text(saved["content"])
            self.warn("Saved; private data in it was redacted")
        self._render_editor_info()
        self._refresh_flags()

    def action_discard(self) -> None:
        slot = self.selected()
        if slot is None or not self._has_draft(slot["id"]):
            self.app.notify("No unsaved draft here")
            return
        forms.discard_draft(self, slot)

    def action_new(self) -> None:
        forms.new_slot(self)

    def select_after_load(self, slot_id: str, *, edit: bool = False) -> None:
        """Select ``slot_id`` when the reload that follows a write lands (and edit it)."""
        self._pending_jump = slot_id
        self._pending_edit = edit
        if edit:  # what is typed next is the slot's text: it waits for the editor
            self.workbench.hold_keys_for(self.query_one("#slot-editor", TextArea))

    def action_delete(self) -> None:
        if (slot := self._need_slot()) is not None:
            forms.delete_slot(self, slot)

    async def action_move(self, step: int) -> None:
        slot = self._need_slot()
        if slot is None:
            return
        # Positions can have gaps after an import; move_slot takes an index in the order.
        order = [s["id"] for s in self.ordered()]
        target = order.index(slot["id"]) + step
        if not 0 <= target < len(order):
            self.app.notify("Already " + ("first" if step < 0 else "last"), timeout=2)
            return
        await self.workbench.write("move_slot", label=slot["label"], position=target)

    def action_agent(self) -> None:
        slot = self._need_slot()
        if slot is None:
            return
        owner = owner_of(self.agents, slot["label"])
        if owner is None:
            self.warn("This slot did not come from an imported Letta agent")
            return
        self.app.push_screen(LettaAgentScreen(owner))

    def action_details(self) -> None:
        if (slot := self._need_slot()) is not None:
            forms.edit_details(self, slot)

    async def action_toggle_lock(self) -> None:
        if (slot := self._need_slot()) is not None:
            await forms.toggle_lock(self, slot)
