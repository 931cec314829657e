"""Keys typed in the same tick as the key that opens a form, an editor or a pane land
there, in order, as if they had been typed slowly (a quick hand, a paste, a busy
machine): never in the pane behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from memwork.core.domain import lessons, slots
from memwork.core.storage.store import Store
from memwork.tui.screens.confirm import ConfirmScreen
from memwork.tui.screens.form import FormScreen
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, key_event, open_pane, run, settle


def type_ahead(app, *keys: str) -> None:
    """Post every key at once, before the app has handled the first: what a terminal
    delivers when keys come faster than the app answers."""
    for key in keys:
        event = key_event(key)
        event.set_sender(app)
        app.post_message(event)


def chars(text: str) -> list[str]:
    return list(text)


def _slot(path: Path, label: str) -> dict:
    return {s["label"]: s for s in slots.list_slots(Store(path))}[label]


async def _select_slot(pilot, label: str) -> None:
    app = pilot.app
    table = app.query_one("#slots", VirtualTable)
    for index in range(table.row_count):
        if app.pane("slots").slots[table.row_key_at(index)]["label"] == label:
            table.move_cursor(index)
            await settle(pilot)
            return
    raise AssertionError(label)


@pytest.mark.slow
def test_a_limit_typed_right_after_i_is_the_limit_saved(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select_slot(pilot, "project/checkout")
            type_ahead(app, "i", "2", "0", "0", "ctrl+s")
            await settle(pilot)
            assert _slot(demo_path, "project/checkout")["limit"] == 200
            assert app.active_pane == "slots"  # the 2 never switched panes
            assert not isinstance(app.screen, FormScreen)

    run(scenario)


@pytest.mark.slow
def test_fields_typed_ahead_across_tab_land_in_their_own_fields(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            type_ahead(app, "n", *chars("notes"), "tab", "3", "0", "0", "ctrl+s")
            await settle(pilot)
            created = _slot(demo_path, "notes")
            assert created["limit"] == 300

    run(scenario)


@pytest.mark.slow
def test_text_typed_right_after_e_goes_into_the_slot_and_q_does_not_quit(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select_slot(pilot, "project/checkout")
            before = _slot(demo_path, "project/checkout")["content"]
            type_ahead(app, "e", *chars("unsaved q text "))
            await settle(pilot)
            editor = app.query_one("#slot-editor", TextArea)
            assert app.is_running
            assert editor.has_focus
            assert editor.text == "unsaved q text " + before
            # Quitting now asks first: the edit is unsaved.
            type_ahead(app, "escape", "q")
            await settle(pilot)
            assert isinstance(app.screen, ConfirmScreen)
            assert app.is_running

    run(scenario)


@pytest.mark.slow
def test_a_key_typed_right_after_a_digit_acts_in_the_new_pane(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            type_ahead(app, "4", "a")
            await settle(pilot)
            assert app.active_pane == "lessons"
            assert isinstance(app.screen, FormScreen)
            assert "lesson" in app.screen.form_title.lower()

    run(scenario)


@pytest.mark.slow
def test_a_lesson_typed_ahead_is_added_with_its_text(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            text = "Tag every release before deploying"
            type_ahead(app, "a", *chars(text), "ctrl+s")
            await settle(pilot)
            store = Store(demo_path)
            with store.reading():
                contents = [x["content"] for x in lessons.all_lessons(store)]
            assert text in contents
            assert not isinstance(app.screen, FormScreen)

    run(scenario)


@pytest.mark.slow
def test_keys_after_a_pick_in_a_list_wait_for_the_list_to_close(demo_app) -> None:
    """``t review enter o o`` typed at once: the two ``o`` used to reach the closing task
    list (lost), and ``o o`` alone read the outcome filter before the first ``o`` had set
    it (one step instead of two)."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            type_ahead(app, "t", *chars("review"), "enter", "o", "o")
            await settle(pilot)
            pane = app.pane("episodes")
            assert (pane.task_filter, pane.outcome_filter) == ("review-pr", "partial")
            type_ahead(app, "o", "o")
            await settle(pilot)
            assert pane.outcome_filter is None  # failure, then all outcomes again

    run(scenario)


@pytest.mark.slow
def test_keys_after_enter_in_a_field_wait_for_the_focus_it_moves(demo_app) -> None:
    """Enter in the Context pane's task field moves the focus to the preview once the
    field's Submitted reaches the pane, a few widgets up. ``t deploy-api enter b 300``
    typed at once used to route ``b`` to the field still focused and ``3`` to the
    preview, which switched to the Cards pane; the budget kept 2000."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            type_ahead(app, "t", *chars("deploy-api"), "enter", "b", *chars("300"), "enter")
            await settle(pilot)
            assert app.active_pane == "context"
            assert app.query_one("#context-task", Input).value == "deploy-api"
            assert app.query_one("#context-budget", Input).value == "300"

    for _ in range(3):  # the lost keys depended on how the messages interleaved
        run(scenario)
