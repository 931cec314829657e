"""``U``: undo the workbench's last destructive change, from a restore point.

Before a change that deletes or merges (a slot, a session, an observation, a
working-memory key, merged lessons or mistake cards), the workbench takes an
automatic checkpoint named for it ("before deleting slot persona"), and the
change's toast names it. ``U`` restores that checkpoint through the same
operation as ``memwork checkpoint restore``, which first takes an automatic
checkpoint of the state it replaces: the undo can itself be undone from the
Checkpoints pane, and nothing is lost.

A checkpoint restores the whole store, not one record. When the store moved
since the change (an agent wrote, or another change was made here), ``U`` asks
first and says so: those changes are rolled back too (and kept in the automatic
checkpoint the restore takes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.base.text import clip

if TYPE_CHECKING:
    from .app import MemworkApp


@dataclass(frozen=True, slots=True)
class RestorePoint:
    """The checkpoint taken before a destructive change made here."""

    checkpoint: str
    """The checkpoint's id."""
    what: str
    """The change, as its name says it ("deleting slot persona")."""
    generation: int
    """The store's commit counter right after the change (did anything move since?)."""


class Undo:
    """The workbench's restore points (the last one is what ``U`` undoes)."""

    def __init__(self, app: MemworkApp) -> None:
        self.app = app
        self.last: RestorePoint | None = None

    async def take(self, what: str) -> str:
        """Take the restore point for ``what`` (raises when the store cannot be copied:
        the change must then not be made)."""
        doc = await self.app.io(
            self.app.service.write, "take_restore_point", description=f"before {what}"
        )
        return str(doc["id"])

    async def remember(self, checkpoint: str, what: str) -> None:
        """The change for which ``checkpoint`` was taken is done."""
        generation = await self.app.io(self.app.service.generation)
        self.last = RestorePoint(checkpoint, what, generation)

    def action_undo(self) -> None:
        """Undo the last destructive change made here (asking first when the store moved
        since)."""
        point = self.last
        if point is None:
            self.app.notify(
                "Nothing to undo: U undoes the last delete or merge made in this "
                "workbench (forgotten lessons come back with u in Rules & lessons)",
                timeout=6,
            )
            return
        self.app.run_worker(self._undo(point), group="undo", exclusive=True)

    async def _undo(self, point: RestorePoint) -> None:
        from .screens.confirm import ConfirmScreen

        moved = await self.app.io(self.app.service.generation) != point.generation
        if not moved:
            await self._restore(point)
            return

        async def answered(yes: bool | None) -> None:
            if yes:
                await self._restore(point)

        self.app.push_screen(
            ConfirmScreen(
                f"Undo {clip(point.what, 60)}?",
                "The store changed since (an agent wrote, or another change was made "
                "here): the restore point puts the whole store back, so those changes are "
                "undone too. They are kept in the automatic checkpoint the undo takes "
                "(Checkpoints, 6).",
                confirm="Undo",
            ),
            answered,
        )

    async def _restore(self, point: RestorePoint) -> None:
        before: Any = await self.app.write("restore_checkpoint", checkpoint=point.checkpoint)
        if before is None or before.get("proposed"):
            return  # refused: the toast says why
        if self.last == point:
            self.last = None
        self.app.notify(
            f"Undone: {point.what}. To redo it, restore “{before['description']}” in "
            "Checkpoints (6).",
            title="Undone",
            timeout=10,
        )
