"""The Slots pane's forms: a new slot, and a slot's limit and description.

Both run through the app's single write path, so a refusal (a label taken, a
limit the text does not fit) shows in the open form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import TextArea

from ...core.base.errors import InvalidInput
from .. import external_editor
from ..screens.confirm import ConfirmScreen
from ..screens.form import Field, FormScreen

if TYPE_CHECKING:
    from .slots import SlotsPane

Doc = dict[str, Any]


def _limit(text: str, *, required: bool) -> int | None:
    """The typed limit as a number (the slot's rules check its range); empty is the
    default for a new slot, and refused for an existing one."""
    typed = text.strip()
    if not typed and not required:
        return None
    try:
        return int(typed)
    except ValueError:
        raise InvalidInput("limit", f"must be a whole number >= 1 (got {text!r})") from None


async def edit_in_editor(pane: SlotsPane, slot: dict[str, Any]) -> None:
    """Edit a slot's text in $EDITOR, saved through the ``set_slot`` operation (its limit
    and read-only flag checked as for ``memwork slot set``)."""

    async def save(text: str) -> Any:
        return await pane.workbench.write(
            "set_slot",
            label=slot["label"],
            text=text,
            done=lambda s: f"Saved {s['label']} ({s['chars']}/{s['limit']})",
        )

    await external_editor.edit_and_save(
        pane.workbench, f"slot {slot['label']}", slot["content"], save
    )


def new_slot(pane: SlotsPane) -> None:
    """Create an empty slot; the new slot is selected and its editor focused."""

    async def submit(values: dict[str, str]) -> Any:
        created = await pane.workbench.write(
            "create_slot",
            label=values["label"],
            limit=_limit(values["limit"], required=False),
            description=values["description"],
            done=lambda slot: f"Slot {slot['label']} created: type its text, ctrl+s saves",
        )
        if created is not None:
            pane.select_after_load(created["id"], edit=True)
        return created

    pane.app.push_screen(
        FormScreen(
            "New slot",
            [
                Field(
                    "label",
                    "Label",
                    placeholder="e.g. persona or corrections/mistakes",
                    help="letters, digits and _ - . / (unique)",
                ),
                Field("limit", "Limit (characters)", "2000"),
                Field("description", "Description", placeholder="what belongs in it"),
            ],
            submit,
            save_label="Create",
        )
    )


def edit_details(pane: SlotsPane, slot: Doc) -> None:
    """Change a slot's limit and description."""

    async def submit(values: dict[str, str]) -> Any:
        return await pane.workbench.write(
            "set_slot",
            label=slot["label"],
            text=pane.slots.get(slot["id"], slot)["content"],
            limit=_limit(values["limit"], required=True),
            description=values["description"],
            done=lambda saved: f"Saved {slot['label']}: limit {saved['limit']}",
        )

    pane.app.push_screen(
        FormScreen(
            f"Slot {slot['label']}: limit and description",
            [
                Field(
                    "limit",
                    "Limit (characters)",
                    str(slot["limit"]),
                    help=f"now {slot['chars']} characters; a whole number >= 1",
                ),
                Field("description", "Description", slot.get("description", "")),
            ],
            submit,
        )
    )


async def toggle_lock(pane: SlotsPane, slot: Doc) -> None:
    """Lock a slot (read-only for agents and here); unlocking asks first."""
    if not slot.get("read_only"):
        await pane.workbench.write(
            "lock_slot",
            label=slot["label"],
            done=f"Locked {slot['label']}: read-only for agents and here (l unlocks)",
        )
        return

    async def answered(yes: bool | None) -> None:
        if yes:
            await pane.workbench.write(
                "unlock_slot",
                label=slot["label"],
                done=f"Unlocked {slot['label']} (l locks it again)",
            )

    pane.app.push_screen(
        ConfirmScreen(
            f"Unlock slot {slot['label']}?",
            "It was marked read-only (usually by the team). Once unlocked, you and "
            "agents can edit or delete it.",
            confirm="Unlock",
        ),
        answered,
    )


def discard_draft(pane: SlotsPane, slot: Doc) -> None:
    """Ask, then drop the unsaved draft of ``slot`` (the editor shows the stored text)."""

    def answered(yes: bool | None) -> None:
        if not yes:
            return
        pane.drafts.pop(slot["id"], None)
        pane.save_error = ""
        if pane.editor_id == slot["id"]:
            editor = pane.query_one("#slot-editor", TextArea)
            current = pane.slots.get(slot["id"], slot)
            pane.editor_base = current["content"]
            editor.load_text(current["content"])
        pane.app.notify("Draft discarded")

    pane.app.push_screen(
        ConfirmScreen(
            f"Discard your unsaved changes to {slot['label']}?",
            "The slot goes back to its stored text.",
            confirm="Discard",
        ),
        answered,
    )


def delete_slot(pane: SlotsPane, slot: Doc) -> None:
    """Ask, then delete ``slot`` (a restore point first, so ``U`` undoes it); a read-only
    slot is refused with the key that unlocks it."""
    if slot.get("read_only"):
        pane.app.notify(
            f"slot {slot['label']} is read-only: l unlocks it first",
            title="Not deleted",
            severity="error",
        )
        return

    async def answered(yes: bool | None) -> None:
        if yes:
            pane.drafts.pop(slot["id"], None)
            pane._deleting = slot["id"]
            await pane.workbench.write(
                "delete_slot",
                label=slot["label"],
                done=f"Deleted slot {slot['label']}",
                restore_point=f"deleting slot {slot['label']}",
            )

    draft = " and your unsaved draft" if pane._has_draft(slot["id"]) else ""
    pane.app.push_screen(
        ConfirmScreen(
            f"Delete slot {slot['label']}?",
            f"Its {slot['chars']} characters{draft} leave every context. "
            "U undoes it (a restore point is taken first).",
            confirm="Delete",
        ),
        answered,
    )
