"""The Work view (`w` in Sessions): add a work item, edit its title, priority, notes and
dependencies, with real keys; a bad entry is refused in the form, nothing saved."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from memwork.core.domain import actions
from memwork.core.storage.store import Store
from tests.tui.conftest import SIZE, run, screen_text, settle, wait_until


def _listed(path: Path) -> list[dict]:
    return actions.list_actions(Store(path))


def _error(app) -> str:
    return str(app.screen.query_one("#error", Static).render())


@pytest.mark.slow
def test_n_adds_a_work_item_that_waits_for_another(demo_app, demo_path: Path) -> None:
    before = _listed(demo_path)
    first = before[0]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("w")
            await settle(pilot)
            await pilot.press("n")
            await settle(pilot)
            assert "Add a work item" in screen_text(app)
            # A priority that is not a number: refused by name, the form stays open.
            await pilot.press(*"Write the rollback runbook", "tab", *"high", "ctrl+s")
            await settle(pilot)
            assert "priority" in _error(app) and "whole number" in _error(app)
            assert len(_listed(demo_path)) == len(before)

            await pilot.press(*["backspace"] * 4, "5", "tab", "tab", *first["title"], "ctrl+s")
            await wait_until(pilot, lambda: len(_listed(demo_path)) == len(before) + 1)
            await settle(pilot)
            made = next(a for a in _listed(demo_path) if a["title"] == "Write the rollback runbook")
            assert made["priority"] == 5 and made["after"] == [first["id"]]
            assert made["status"] == "pending" and made["waiting_for"] == [first["id"]]
            # The new item is selected, and says what it waits for.
            text = screen_text(app)
            assert f"{made['id']} · Write the rollback runbook" in text
            assert f"waits for: {first['title']}" in text

    run(scenario)


@pytest.mark.slow
def test_e_edits_title_priority_note_and_refuses_a_cycle(demo_app, demo_path: Path) -> None:
    listed = _listed(demo_path)
    first = listed[0]
    waiting = next(a for a in listed if first["id"] in a["waiting_for"])

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("w")
            await settle(pilot)
            # The first item waiting for the one a dependency on which would close a cycle.
            await pilot.press("e")
            await settle(pilot)
            assert f"Edit “{first['title']}" in screen_text(app)
            await pilot.press("tab", "tab", "tab", *waiting["title"], "ctrl+s")
            await settle(pilot)
            assert "cycle" in _error(app)
            assert actions.get_op(Store(demo_path), first["id"])["after"] == first["after"]

            # Fix the dependency field, then change the title and priority, add a note.
            await pilot.press(*["backspace"] * len(waiting["title"]))
            await pilot.press("shift+tab", *"canary watched for 15 min")
            await pilot.press("shift+tab", *["backspace"] * 3, "9")
            await pilot.press("shift+tab", "end", *" (api)", "ctrl+s")
            await wait_until(
                pilot,
                lambda: actions.get_op(Store(demo_path), first["id"])["priority"] == 9,
            )
            saved = actions.get_op(Store(demo_path), first["id"])
            assert saved["title"] == f"{first['title']} (api)"
            assert saved["notes"][-1]["text"] == "canary watched for 15 min"
            assert saved["notes"][-1]["by"] == "tui"
            await settle(pilot)
            assert f"{first['title']} (api)" in screen_text(app)

            # x cancels the selected item.
            await pilot.press("x")
            await wait_until(
                pilot,
                lambda: actions.get_op(Store(demo_path), first["id"])["status"] == "cancelled",
            )

    run(scenario)


@pytest.mark.slow
def test_add_form_over_the_work_items_at_80x24_snapshot(demo_app, snap_compare) -> None:
    async def ready(pilot) -> None:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        await pilot.press("n", *"Check the rollback path")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=ready, terminal_size=(80, 24))
