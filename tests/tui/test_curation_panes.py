"""Curation across the panes: lesson effect (shown, sortable), contradictions and lint
findings on each record's detail, Enter on a context line opens its source, and the
History pane shows "injected into context" entries when asked."""

from __future__ import annotations

from typing import Any

import pytest

from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle


def _select_lesson(app, content: str) -> None:  # noqa: ANN001
    table = app.query_one("#lessons", VirtualTable)
    pane = app.pane("lessons")
    for index in range(table.row_count):
        if pane.lessons[table.row_key_at(index)]["content"] == content:
            table.move_cursor(index)
            return
    raise AssertionError(content)


def _detail(app) -> str:  # noqa: ANN001
    """The detail column's text on one line (the column wraps it on screen)."""
    from textual.widgets import Static

    return " ".join(str(app.query_one("#lesson-detail", Static).render()).split())


def _effects_in_order(app) -> list[Any]:  # noqa: ANN001
    table = app.query_one("#lessons", VirtualTable)
    pane = app.pane("lessons")
    return [pane.effects.get(table.row_key_at(i)) for i in range(table.row_count)]


@pytest.mark.slow
def test_lessons_show_their_effect_and_sort_by_it(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")  # it opens on the lessons list
            _select_lesson(app, "Dual credentials make rotations zero-downtime")
            await settle(pilot)
            text = screen_text(app)
            assert "Effect" in text and "+0.25" in text
            detail = _detail(app)
            assert "effect +0.25 on rotate-credentials: mean 0.45 over 5 episodes before" in detail
            await pilot.press("s")
            await settle(pilot)
            assert "sorted by effect (s)" in screen_text(app)
            changes = [e["change"] for e in _effects_in_order(app) if e]
            assert changes == sorted(changes, reverse=True) and len(changes) > 5
            # Lessons with nothing to compare come after every measured one.
            shown = _effects_in_order(app)
            first_none = shown.index(None)
            assert all(e is None for e in shown[first_none:])
            await pilot.press("s")
            await settle(pilot)
            assert "sorted by effect" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_both_contradicting_lessons_say_so_and_lint_shows_on_the_detail(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")  # it opens on the lessons list
            pane = app.pane("lessons")
            ids = {x["content"]: x["id"] for x in pane.lessons.values()}
            pause, never = (
                "Pause reindex jobs during peak traffic",
                "Never pause reindex jobs during peak traffic",
            )
            _select_lesson(app, pause)
            await settle(pilot)
            assert f"⚑ contradicts {ids[never]} “{never}”" in _detail(app)
            assert "⚑ contradicts" in screen_text(app)
            _select_lesson(app, never)
            await settle(pilot)
            assert f"⚑ contradicts {ids[pause]} “{pause}”" in _detail(app)
            assert "2 contradict" in screen_text(app)
            # A lint finding on a lesson: the copy of a slot's line.
            _select_lesson(app, "Do not page the database team before 08:00 UTC.")
            await settle(pilot)
            assert "⚑ duplicate: same content in slot corrections/user-feedback" in _detail(app)
            assert "Lint" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_slots_show_their_lint_findings(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            text = screen_text(app)
            assert "⚑ stale" in text and "⚑ dup" in text
            pane = app.pane("slots")
            table = app.query_one("#slots", VirtualTable)
            for index in range(table.row_count):
                if pane.slots[table.row_key_at(index)]["label"] == "project/checkout":
                    table.move_cursor(index)
            await settle(pilot)
            assert "Lint: slot project/checkout untouched for 42 days" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_enter_on_a_context_line_opens_its_source(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            await pilot.press("down")  # "### persona"
            await settle(pilot)
            assert "from slot persona  ⏎ opens it" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "slots"
            slots_pane = app.pane("slots")
            assert slots_pane.selected()["label"] == "persona"
            # A lesson line leads to the lesson.
            await open_pane(pilot, "context")
            context = app.pane("context")
            lines = context.result["text"].split("\n")
            row = next(
                i
                for i, s in enumerate(context.result["text_sources"])
                if s and s[0]["kind"] == "lesson"
            )
            preview = app.query_one("#context-preview")
            preview.move_cursor((row, 0))
            await settle(pilot)
            assert "from lesson les_" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "lessons"
            lesson = app.pane("lessons").selected_lesson()
            assert lesson is not None and f"- {lesson['content']}" == lines[row]
            # A heading has no record behind it: Enter says so and stays.
            await open_pane(pilot, "context")
            preview.move_cursor((0, 0))
            await settle(pilot)
            assert "heading or blank line" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "context"

    run(scenario)


@pytest.mark.slow
def test_a_rule_line_names_its_episodes_and_a_mean_line_opens_the_task(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            context = app.pane("context")
            context.query_one("#context-task").value = "deploy-api"
            await pilot.pause(0.3)  # the preview rebuilds after a short debounce
            await settle(pilot)
            assert context.shown_params[0] == "deploy-api"
            preview = app.query_one("#context-preview")
            sources = context.result["text_sources"]
            row = next(
                i for i, s in enumerate(sources) if s and s[0]["kind"] == "rule" and len(s) > 1
            )
            preview.focus()
            preview.move_cursor((row, 0))
            await settle(pilot)
            line = " ".join(str(context.query_one("#context-line-source").render()).split())
            assert (
                line
                == f"from rule {sources[row][0]['id']} + {len(sources[row]) - 1} episode"
                + ("s" if len(sources[row]) > 2 else "")
                + " ⏎ opens it"
            )
            mean = len(sources) - 1
            assert sources[mean] == [{"kind": "task", "id": "deploy-api"}]
            preview.move_cursor((mean, 0))
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "episodes"
            assert app.pane("episodes").task_filter == "deploy-api"

    run(scenario)


@pytest.mark.slow
def test_history_shows_context_injections_when_asked(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "history")
            text = screen_text(app)
            assert "context injections hidden (i)" in text
            assert "injected into context" not in text
            pane = app.pane("history")
            await pilot.press("i")
            await settle(pilot)
            assert "context injections shown (i)" in screen_text(app)
            table = app.query_one("#history", VirtualTable)
            actions = [table.source.entry(i)["action"] for i in range(table.row_count)]
            assert "inject" in actions
            # Filtered to a lesson's own entries: when it reached an agent.
            pane.query_one("#history-filter").value = "action:inject table:lessons"
            await settle(pilot)
            rows = [table.source.entry(i) for i in range(table.row_count)]
            assert rows and all(e["summary"].startswith("injected into context") for e in rows)
            assert all(e["actor"] == "cli:atlas" for e in rows)

    run(scenario)
