"""The Rules & lessons pane, driven by real key presses on the demo store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memwork.core.domain import lessons
from memwork.core.storage.store import Store
from memwork.tui.panes.lessons import LessonsPane
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, capture_toasts, open_pane, run, screen_text, settle


def _stored(path: Path, lesson_id: str) -> dict:
    store = Store(path)
    with store.reading():
        return lessons.resolve(store, lesson_id)


@pytest.mark.slow
def test_lessons_pane_lists_lessons_with_confidence_bars(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            text = screen_text(app)
            assert "4 Lessons" in text  # the tab (short titles at 120 columns)
            assert "live lessons" in text
            assert "Keep secrets out of logs" in text
            assert "█" in text  # confidence bars

    run(scenario)


@pytest.mark.slow
def test_reinforce_weaken_pin_from_the_keyboard(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            # The pane opens on the lessons (it used to open on the rules, where r, w and
            # p did nothing).
            table = app.query_one("#lessons", VirtualTable)
            await pilot.press("down", "down", "down")
            lesson_id = table.cursor_key
            before = _stored(demo_path, lesson_id)
            await pilot.press("r")
            await settle(pilot)
            after = _stored(demo_path, lesson_id)
            assert after["reinforcements"] == before["reinforcements"] + 1
            assert after["confidence"] > before["confidence"]
            assert table.cursor_key == lesson_id  # the selection survives the reload
            await pilot.press("w")
            await settle(pilot)
            assert _stored(demo_path, lesson_id)["confidence"] < after["confidence"]
            await pilot.press("p")
            await settle(pilot)
            assert _stored(demo_path, lesson_id)["pinned"] is not before.get("pinned", False)

    run(scenario)


@pytest.mark.slow
def test_forget_asks_first_and_u_right_after_brings_it_back(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            table = app.query_one("#lessons", VirtualTable)
            lesson_id = table.cursor_key
            before = _stored(demo_path, lesson_id)
            await pilot.press("f")
            await settle(pilot)
            assert "Forget this lesson?" in screen_text(app)
            await pilot.press("n")  # cancel: nothing changes
            await settle(pilot)
            assert not _stored(demo_path, lesson_id)["deleted"]
            await pilot.press("f")
            await settle(pilot)
            await pilot.press("y")
            await settle(pilot)
            assert _stored(demo_path, lesson_id)["deleted"]
            assert lesson_id not in [table.row_key_at(i) for i in range(table.row_count)]
            assert "u brings it back" in toasts[-1]
            # The cursor is on another, live lesson now: u still undoes the forget (it
            # used to answer "not forgotten"), and the lesson is selected again.
            assert table.cursor_key != lesson_id
            await pilot.press("u")
            await settle(pilot)
            after = _stored(demo_path, lesson_id)
            assert not after["deleted"]
            assert table.cursor_key == lesson_id
            assert toasts[-1].startswith("Back as it was")
            # A true undo: the decay clock and the confidence are as they were before f.
            assert after["last_reinforced_at"] == before["last_reinforced_at"]
            assert after["confidence"] == before["confidence"]
            assert "just now" not in screen_text(app)
            # Nothing left to undo: u on a live lesson says so.
            await pilot.press("u")
            await settle(pilot)
            assert "not forgotten" in toasts[-1]
            # A forgotten lesson reads "forgotten" in the list, never "deleted".
            await pilot.press("f")
            await settle(pilot)
            await pilot.press("y", "x")
            await settle(pilot)
            text = screen_text(app)
            assert "forgotten" in text and "deleted" not in text

    run(scenario)


@pytest.mark.slow
def test_delete_asks_first_then_takes_the_lesson_and_its_words_for_good(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            table = app.query_one("#lessons", VirtualTable)
            lesson_id = table.cursor_key
            words = _stored(demo_path, lesson_id)["content"]
            await pilot.press("delete")
            await settle(pilot)
            assert "Delete this lesson for good?" in screen_text(app)
            await pilot.press("n")  # cancel: nothing changes
            await settle(pilot)
            assert _stored(demo_path, lesson_id)["content"] == words
            await pilot.press("delete")
            await settle(pilot)
            await pilot.press("y")
            await settle(pilot)
            assert toasts[-1].startswith("Lesson deleted for good")
            assert lesson_id not in [table.row_key_at(i) for i in range(table.row_count)]
            store = Store(demo_path)
            with store.reading():
                assert lesson_id not in store.docs(lessons.TABLE)
                history = [
                    doc
                    for name in store.table_names("audit")
                    for doc in store.docs(name).values()
                    if doc.get("record_id") == lesson_id
                ]
            assert history and all(words not in doc["summary"] for doc in history)
            # Not forgotten: gone. x (all lessons) does not list it either.
            await pilot.press("x")
            await settle(pilot)
            assert lesson_id not in [table.row_key_at(i) for i in range(table.row_count)]

    run(scenario)


@pytest.mark.slow
def test_lesson_keys_on_the_rules_list_say_where_they_work(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            assert app.focused is app.query_one("#lessons", VirtualTable)
            await pilot.press("tab")
            await settle(pilot)
            assert app.focused is app.query_one("#rules", VirtualTable)
            lesson_id = app.query_one("#lessons", VirtualTable).cursor_key
            before = _stored(demo_path, lesson_id)
            await pilot.press("r", "t")
            await settle(pilot)
            assert toasts[0] == "r (Reinforce) acts on a lesson: Tab to the lessons list first"
            assert toasts[1].startswith("Rule switched")  # t is the rules list's own key
            assert _stored(demo_path, lesson_id)["reinforcements"] == before["reinforcements"]
            await pilot.press("shift+tab", "t")
            await settle(pilot)
            assert app.focused is app.query_one("#lessons", VirtualTable)
            assert toasts[2] == "t (Rule on/off) acts on the rules: Tab to the rules list first"

    run(scenario)


@pytest.mark.slow
def test_a_new_rule_is_selected_and_toasts_keep_its_brackets(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            await pilot.press("tab", "n")
            await settle(pilot)
            await pilot.press(*"[AVOID] Deploying on Friday evenings", "ctrl+s")
            await settle(pilot)
            rules = app.query_one("#rules", VirtualTable)
            assert app.focused is rules
            selected = app.query_one(LessonsPane).rules[rules.cursor_key]
            assert selected["text"] == "[AVOID] Deploying on Friday evenings"
            assert toasts[-1] == "Rule added: [AVOID] Deploying on Friday evenings"
            # Shown as typed: the toast is not read as markup.
            assert list(app._notifications)[-1].markup is False  # noqa: SLF001

    run(scenario)


@pytest.mark.slow
def test_a_new_lesson_is_selected_in_the_lessons_list(demo_app) -> None:
    """After a, the lesson just added is the one under the cursor (it used to stay on
    the lesson selected before), even when the form was opened from the rules list."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            await pilot.press("tab", "a")  # from the rules list
            await settle(pilot)
            await pilot.press(*"Zebra-stripe the canary hosts before a rollout", "ctrl+s")
            await settle(pilot)
            table = app.query_one("#lessons", VirtualTable)
            assert app.focused is table
            selected = app.query_one(LessonsPane).lessons[table.cursor_key]
            assert selected["content"] == "Zebra-stripe the canary hosts before a rollout"
            row = table.cursor_row - table.scroll_offset.y  # on screen, not scrolled away
            assert 0 <= row < table.size.height

    run(scenario)


@pytest.mark.slow
def test_add_lesson_form_shows_validation_errors_in_the_form(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            await pilot.press("a")
            await settle(pilot)
            await pilot.press(*"Prefer feature flags for risky changes")
            await pilot.press("tab")  # scope
            await pilot.press("ctrl+a", "ctrl+k", *"somewhere")
            await pilot.press("ctrl+s")
            await settle(pilot)
            text = screen_text(app)
            assert "scope: must be 'global', 'task:<id>' or 'project:<id>'" in text
            await pilot.press("shift+tab")
            await pilot.press("tab")
            await pilot.press("ctrl+a", "ctrl+k", *"task:deploy-api", "ctrl+s")
            await settle(pilot)
            assert "Add a lesson" not in screen_text(app)
            store = Store(demo_path)
            with store.reading():
                contents = {x["content"]: x for x in lessons.all_lessons(store)}
            assert contents["Prefer feature flags for risky changes"]["scope"] == "task:deploy-api"

    run(scenario)


@pytest.mark.slow
def test_decay_preview_shows_what_fades(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            await pilot.press("right_square_bracket", "right_square_bracket")
            await settle(pilot)
            text = screen_text(app)
            assert "Decay preview" in text and "2 weeks from now" in text
            assert "fade" in text and "forgotten" in text
            # The detail agrees with the row: both give the previewed confidence (the
            # detail used to show only today's, 0.30 beside a row saying 0.25).
            table = app.query_one("#lessons", VirtualTable)
            for _ in range(6):
                # The confidence cell, written as the bar with its number.
                row = table.source.row(table.cursor_row).cells[1].options[0].plain
                if "↓" in row:
                    break
                await pilot.press("down")
                await settle(pilot)
            previewed = re.search(r"\d\.\d\d", row).group()  # the bar, the number, ↓
            detail = str(app.query_one("#lesson-detail").render())
            assert f"in 2 weeks {previewed}" in detail
            await pilot.press("0")
            await settle(pilot)
            assert "weeks from now" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_lessons_pane_snapshot(demo_app, snap_compare) -> None:
    async def second_lesson(pilot) -> None:  # noqa: ANN001
        # "down" pressed before the list is read would land nowhere on a busy machine
        # (the snapshot then showed the first lesson): the list is read first.
        await open_pane(pilot, "lessons")
        await pilot.press("down")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=second_lesson, terminal_size=SIZE)


@pytest.mark.slow
def test_decay_preview_snapshot(demo_app, snap_compare) -> None:
    assert snap_compare(
        demo_app(),
        press=["4", "right_square_bracket"] + ["right_square_bracket"] * 3,
        terminal_size=SIZE,
    )


@pytest.mark.slow
def test_a_scope_with_a_typo_is_caught_in_the_form(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            await pilot.press("a", *"Tag releases before deploying", "tab")
            await pilot.press("ctrl+a", "ctrl+k", *"task:deploy api", "ctrl+s")
            await settle(pilot)
            text = screen_text(app)
            # A space: refused, with the name it probably meant.
            assert "scope: task names have no spaces (did you mean task:deploy-api?)" in text
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert "task names have no spaces" in screen_text(app)  # still refused
            # A name nothing knows: said once, kept on a second ctrl+s.
            await pilot.press("ctrl+a", "ctrl+k", *"task:deploy-apj", "ctrl+s")
            await settle(pilot)
            assert "no task 'deploy-apj' is known" in screen_text(app)
            assert "ctrl+s again keeps it" in screen_text(app)
            await pilot.press("ctrl+s")
            await settle(pilot)
            store = Store(demo_path)
            with store.reading():
                added = [
                    x for x in lessons.all_lessons(store) if x["content"].startswith("Tag releases")
                ]
            assert [x["scope"] for x in added] == ["task:deploy-apj"]

    run(scenario)


@pytest.mark.slow
def test_the_edit_form_sets_the_decay_rate_and_the_detail_shows_it(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            lesson_id = table.cursor_key
            while _stored(demo_path, lesson_id).get("pinned"):  # pinned: no decay shown
                await pilot.press("down")
                lesson_id = table.cursor_key
            await pilot.press("e")
            await settle(pilot)
            assert "Decay per week" in screen_text(app)
            await pilot.press("tab", "tab", "tab", "tab")  # scope, confidence, tags, decay
            await pilot.press("ctrl+a", "ctrl+k", *"0.125", "ctrl+s")
            await settle(pilot)
            assert _stored(demo_path, lesson_id)["decay_rate"] == 0.125
            assert "0.125 per week" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_a_decay_rate_that_is_no_number_is_refused_under_its_field(
    demo_app, demo_path: Path
) -> None:
    """``nan`` reads as a float, and was written back as null (the rate gone); the form
    now says why it is refused, under the field, and the lesson keeps its rate."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            lesson_id = app.query_one("#lessons", VirtualTable).cursor_key
            before = _stored(demo_path, lesson_id).get("decay_rate")
            await pilot.press("e")
            await settle(pilot)
            await pilot.press("tab", "tab", "tab", "tab")  # scope, confidence, tags, decay
            await pilot.press("ctrl+a", "ctrl+k", *"nan", "ctrl+s")
            await settle(pilot)
            assert "decay_rate: must be a finite number (got nan)" in screen_text(app)
            assert _stored(demo_path, lesson_id).get("decay_rate") == before

    run(scenario)
