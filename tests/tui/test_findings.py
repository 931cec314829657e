"""The lint findings the header counts have a list (L, or the palette): each record a
finding names is a row that opens it, and the fix is a key away."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette

from memwork.core.domain import lessons, rules
from memwork.core.services import lint
from memwork.core.storage.store import Store
from memwork.tui.screens.findings import FindingsScreen
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import DEMO_NOW, run, screen_text, settle


def _findings(path: Path) -> list[dict]:
    from memwork.core.base.clock import parse_instant

    return lint.lint(Store(path), parse_instant(DEMO_NOW))


async def _row_of(pilot, text: str) -> int:
    """Put the findings list's cursor on the row whose record reads ``text``."""
    screen = pilot.app.screen
    assert isinstance(screen, FindingsScreen)
    table = screen.query_one("#findings", VirtualTable)
    for index, target in enumerate(screen.targets):
        if target.title.startswith(text):
            table.move_cursor(index)
            await settle(pilot)
            return index
    raise AssertionError(f"no row {text!r}: {[t.title for t in screen.targets]}")


@pytest.mark.slow
def test_l_lists_every_finding_and_enter_opens_its_record(demo_app, demo_path: Path) -> None:
    found = _findings(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert f"{len(found)} lint findings (L)" in screen_text(app)  # with the key
            await pilot.press("L")
            await settle(pilot)
            assert isinstance(app.screen, FindingsScreen)
            text = screen_text(app)
            assert f"Lint findings: {len(found)}" in text
            assert "contradiction" in text and "near-duplicates" in text
            assert sum(len(f["records"]) for f in found) == len(app.screen.targets)
            await _row_of(pilot, "Never pause reindex jobs")
            assert "f forgets this lesson" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert not isinstance(app.screen, FindingsScreen)
            assert app.active_pane == "lessons"
            lesson = app.pane("lessons").selected_lesson()
            assert lesson is not None and lesson["content"].startswith("Never pause reindex")

    run(scenario)


@pytest.mark.slow
def test_the_palette_leads_to_the_findings(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+p", *"lint findings")
            await settle(pilot)
            assert isinstance(app.screen, CommandPalette)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, FindingsScreen)

    run(scenario)


@pytest.mark.slow
def test_findings_are_fixed_from_the_list(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            before = len(_findings(demo_path))
            await pilot.press("L")
            await settle(pilot)
            # A contradiction: forget one side.
            await _row_of(pilot, "Never pause reindex jobs")
            await pilot.press("f")
            await settle(pilot)
            await pilot.press("y")
            await settle(pilot)
            kinds = [f["kind"] for f in _findings(demo_path)]
            assert "contradiction" not in kinds and len(kinds) == before - 1
            # Near-duplicates: merge the group.
            await _row_of(pilot, "Link the runbook in the incident channel")
            await pilot.press("m")
            await settle(pilot)
            assert "Merge 1 near-duplicate lesson into the first?" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            assert "near_duplicates" not in [f["kind"] for f in _findings(demo_path)]
            # A rule a lesson contradicts: switch it off.
            await _row_of(pilot, "[AVOID] Promoted before")
            await pilot.press("t")
            await settle(pilot)
            store = Store(demo_path)
            with store.reading():
                rule = next(
                    r for r in rules.all_rules(store) if r["text"].startswith("[AVOID] Promoted")
                )
            assert not rule["active"]
            remaining = _findings(demo_path)
            assert "avoid_contradicts_lesson" not in [f["kind"] for f in remaining]
            # The list and the header follow.
            assert isinstance(app.screen, FindingsScreen)
            assert f"Lint findings: {len(remaining)}" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            assert f"{len(remaining)} lint finding" in screen_text(app)
            with store.reading():
                gone = [x for x in lessons.all_lessons(store) if x.get("superseded_by")]
            assert gone

    run(scenario)
