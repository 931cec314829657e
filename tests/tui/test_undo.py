"""`U` undoes the last delete or merge made in the workbench, from the restore point
taken before it (named in the toast); when the store moved since, it asks first."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from memwork.core.base.clock import parse_instant
from memwork.core.base.errors import NotFound
from memwork.core.domain import slots
from memwork.core.services import checkpoints
from memwork.core.storage.store import Store
from memwork.tui.screens.confirm import ConfirmScreen
from tests.tui.conftest import DEMO_NOW, capture_toasts, open_pane, run, settle, wait_until

NOW: datetime = parse_instant(DEMO_NOW)
SIZE = (80, 24)


def _labels(path: Path) -> list[str]:
    return [s["label"] for s in slots.list_slots(Store(path))]


def _deletable(path: Path) -> dict:
    return next(s for s in slots.list_slots(Store(path)) if not s.get("read_only"))


async def _delete_selected_slot(pilot, app, label: str, demo_path: Path) -> None:
    await open_pane(pilot, "slots")
    while app.query_one("#slots").cursor_key != _slot_id(demo_path, label):
        await pilot.press("down")
    await pilot.press("d")
    await settle(pilot)
    await pilot.press("y")
    await wait_until(pilot, lambda: label not in _labels(demo_path))
    await settle(pilot)


def _slot_id(path: Path, label: str) -> str:
    return slots.get_slot(Store(path), label)["id"]


@pytest.mark.slow
def test_U_brings_back_a_deleted_slot(demo_app, demo_path: Path) -> None:
    slot = _deletable(demo_path)
    label = slot["label"]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            toasts = capture_toasts(app)
            await pilot.press("U")
            await settle(pilot)
            assert any(t.startswith("Nothing to undo") for t in toasts)

            await _delete_selected_slot(pilot, app, label, demo_path)
            point = f"before deleting slot {label}"
            assert any(f"U undoes it (restore point “{point}”)" in t for t in toasts), toasts
            made = [c for c in checkpoints.list_checkpoints(Store(demo_path))]
            assert made[-1]["description"] == point and made[-1]["automatic"]

            await pilot.press("U")  # nothing moved since: no question
            await wait_until(pilot, lambda: label in _labels(demo_path))
            await settle(pilot)
            back = slots.get_slot(Store(demo_path), label)
            assert back["content"] == slot["content"]
            assert any(t.startswith(f"Undone: deleting slot {label}.") for t in toasts), toasts
            assert not isinstance(app.screen, ConfirmScreen)
            toasts.clear()
            await pilot.press("U")  # the one undo is spent
            await settle(pilot)
            assert any(t.startswith("Nothing to undo") for t in toasts)

    run(scenario)


@pytest.mark.slow
def test_U_asks_first_when_an_agent_wrote_since(demo_app, demo_path: Path) -> None:
    slot = _deletable(demo_path)
    label = slot["label"]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await _delete_selected_slot(pilot, app, label, demo_path)
            # An agent (another process) writes a slot meanwhile.
            slots.set_slot(Store(demo_path), "agent/notes", "seen", now=NOW, actor="agent:a")
            await pilot.press("U")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            await pilot.press("n")  # not now: nothing changes
            await settle(pilot)
            assert label not in _labels(demo_path) and "agent/notes" in _labels(demo_path)

            await pilot.press("U")
            await settle(pilot)
            await pilot.press("y")
            await wait_until(pilot, lambda: label in _labels(demo_path))
            # The agent's slot went with the restore, and is kept in the undo's checkpoint.
            try:
                slots.get_slot(Store(demo_path), "agent/notes")
                raise AssertionError("the restore keeps the state of the restore point")
            except NotFound:
                pass
            # (Found by its name: at the test's fixed clock every checkpoint has one time,
            # and the list orders those by random id.)
            kept = [
                c
                for c in checkpoints.list_checkpoints(Store(demo_path))
                if c["description"].startswith("before restoring")
            ]
            assert len(kept) == 1 and kept[0]["automatic"]

    run(scenario)
