"""The workbench shell: pane switching, help, palette, search, theme, quit, --demo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import OptionList

import tui.app
from core import lessons
from core.paths import demo_source
from core.storage.store import Store
from tests.conftest import folder_digest
from tests.tui.conftest import SIZE, run, screen_text, settle
from tui.app import PANES
from tui.launch import demo_copy, launch
from tui.widgets.virtual_table import VirtualTable


def test_digits_switch_to_the_nine_panes_in_order(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            text = screen_text(app)
            for n, pane in enumerate(PANES, start=1):
                assert f"{n} {pane.TITLE}" in text  # every pane is named on screen
            expected = [
                "sessions",
                "episodes",
                "cards",
                "lessons",
                "slots",
                "checkpoints",
                "context",
                "history",
                "review",
            ]
            assert [p.PANE_ID for p in PANES] == expected
            for n, pane_id in enumerate(expected, start=1):
                await pilot.press(str(n))
                await settle(pilot)
                assert app.active_pane == pane_id

    run(scenario)


def test_help_screen_lists_every_pane_and_its_keys(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("question_mark")
            await settle(pilot)
            text = screen_text(app)
            assert "memwork — keys" in text and "go to Sessions" in text
            # The whole table, scrolled or not: every pane's keys are listed.
            from rich.console import Console

            console = Console(width=100, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
            console.print(app.screen._table())
            everything = console.export_text()
            for pane in PANES:
                assert pane.TITLE in everything
            assert "Reinforce" in everything and "Decay" in everything
            await pilot.press("escape")
            await settle(pilot)
            assert "memwork — keys" not in screen_text(app)

    run(scenario)


def test_command_palette_reaches_a_pane_action(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            await pilot.press("tab")  # the lessons list
            table = app.query_one("#lessons", VirtualTable)
            lesson_id = table.cursor_key
            store = Store(demo_path)
            with store.reading():
                before = lessons.resolve(store, lesson_id)["reinforcements"]
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"Rules & lessons: Reinforce")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            with store.reading():
                assert lessons.resolve(store, lesson_id)["reinforcements"] == before + 1

    run(scenario)


async def _search(pilot, query: str) -> None:
    """Open the global search (/) and type ``query`` into it."""
    await settle(pilot)
    await pilot.press("slash")
    await settle(pilot)
    await pilot.press(*query)
    await settle(pilot)


def test_search_jumps_to_the_record(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await _search(pilot, "runbook paging")
            assert "Read the runbook before paging anyone" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "lessons"
            table = app.query_one("#lessons", VirtualTable)
            with app.service.store.reading():
                chosen = lessons.resolve(app.service.store, table.cursor_key)
            assert chosen["content"] == "Read the runbook before paging anyone"
            # The record's own list has the focus, so its keys and detail are what show.
            await settle(pilot)
            assert table.has_focus
            text = screen_text(app)
            assert "r Reinforce" in text  # the lessons list's keys in the footer
            assert f"{chosen['id']}" in text

    run(scenario)


def test_theme_toggles_and_q_quits(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+t")
            assert app.theme == "textual-light"
            await pilot.press("ctrl+t")
            assert app.theme == "textual-dark"
            await pilot.press("q")
            await pilot.pause()
            assert not app.is_running

    run(scenario)


def test_demo_copy_leaves_data_demo_untouched() -> None:
    before = folder_digest(demo_source())
    copy = demo_copy()
    store = Store(copy)
    from datetime import UTC, datetime

    try:
        lessons.add_lesson(store, "written to the copy only", now=datetime.now(UTC), actor="test")
        assert folder_digest(demo_source()) == before
        assert copy != demo_source()
    finally:
        shutil.rmtree(copy.parent)


def test_demo_workbench_removes_its_temporary_copy_on_quit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[Path] = []

    class QuitsAtOnce:
        return_code = 0

        def __init__(self, store: Store, **_: object) -> None:
            opened.append(store.path)

        def run(self) -> None:
            assert (opened[0] / "store.json").exists()

    monkeypatch.setattr(tui.app, "make_app", QuitsAtOnce)
    assert launch(None, demo=True) == 0
    assert opened and not opened[0].exists() and not opened[0].parent.exists()


def test_help_snapshot(demo_app, snap_compare) -> None:
    assert snap_compare(demo_app(), press=["question_mark"], terminal_size=SIZE)


def test_search_names_the_session_of_an_observation_and_jumps_to_it(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            # The session's title is searchable with the note's words, and shown apart
            # from the kind, so recurring notes in different sessions tell apart.
            await _search(pilot, "nightly worker-25")
            text = screen_text(app)
            assert "observation  tool · Nightly log cleanup: rotated" in text
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "sessions"
            assert "Nightly log cleanup" in screen_text(app)

    run(scenario)


def test_search_starts_at_its_second_character(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await _search(pilot, "r")
            assert "Keep typing: a search starts at 2 characters" in screen_text(app)
            assert app.screen.query_one("#hits", OptionList).option_count == 0
            await pilot.press("u", "n", "b", "o", "o", "k")
            await settle(pilot)
            assert app.screen.query_one("#hits", OptionList).option_count > 0

    run(scenario)
