"""The smaller things a new user tripped over (each its own test): a stale refusal that
outlived the limit that caused it, "reinforced 0x" on a new lesson, "2 contradict",
a diff without its changed characters marked, a summary cut without an ellipsis,
flags a light theme could not show."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import Static, TextArea

from memwork.core.base.clock import parse_instant
from memwork.core.domain import lessons, sessions
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import DEMO_NOW, SIZE, open_pane, run, screen_text, settle

NOW = parse_instant(DEMO_NOW)


async def _select_slot(pilot, label: str) -> None:  # noqa: ANN001
    app = pilot.app
    table = app.query_one("#slots", VirtualTable)
    for index in range(table.row_count):
        if app.pane("slots").slots[table.row_key_at(index)]["label"] == label:
            table.move_cursor(index)
            await settle(pilot)
            return
    raise AssertionError(label)


@pytest.mark.slow
def test_a_refusal_under_an_old_limit_goes_when_the_limit_is_raised(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select_slot(pilot, "project/checkout")  # limit 400
            await pilot.press("e")
            await settle(pilot)
            app.query_one("#slot-editor", TextArea).insert(" More." * 60)
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert "Not saved: " in screen_text(app) and "limit" in screen_text(app)
            await pilot.press("escape", "i", "ctrl+a", "ctrl+k", *"2000", "ctrl+s")
            await settle(pilot)
            assert "Not saved" not in screen_text(app)  # the refusal was about 400
            assert "Unsaved changes" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_a_new_lesson_says_when_it_was_added_not_reinforced_0x(demo_app, demo_path) -> None:
    lessons.add_lesson(
        Store(demo_path), "Zebra crossings first", confidence=0.99, now=NOW, actor="cli:atlas"
    )

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            text = screen_text(app)
            assert "Zebra crossings first" in text  # selected: the strongest, at the top
            assert "added just now, not reinforced" in text
            assert "reinforced 0x" not in text

    run(scenario)


@pytest.mark.slow
def test_the_lessons_header_counts_contradicting_lessons_in_words(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            text = screen_text(app)
            assert "⚑ 2 contradicting lessons" in text
            assert "2 contradict " not in text and not text.count("2 contradict\n")

    run(scenario)


@pytest.mark.slow
def test_a_slot_diff_marks_the_characters_that_changed(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            pane = app.pane("review")
            table = app.query_one("#proposals", VirtualTable)
            for index in range(table.row_count):
                if pane.proposals[table.row_key_at(index)]["op"] == "replace":
                    table.move_cursor(index)
            await settle(pilot)
            detail = app.query_one("#review-detail", Static).render()
            marked = {
                detail.plain[span.start : span.end]
                for span in detail.spans
                if getattr(span.style, "reverse", False) or "reverse" in str(span.style)
            }
            assert marked == {"6", "7"}  # Postgres 16 → Postgres 17: the digits, not the line

    run(scenario)


@pytest.mark.slow
def test_a_long_session_summary_ends_in_an_ellipsis(demo_app, demo_path: Path) -> None:
    store = Store(demo_path)
    started = sessions.start_session(
        store, agent_id="atlas", title="Long one", now=NOW, actor="cli"
    )
    summary = " ".join(f"step {n} went fine and the canary held" for n in range(40))
    sessions.end_session(store, started["id"], summary=summary, now=NOW, actor="cli")

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            table = app.query_one("#sessions", VirtualTable)
            table.move_cursor(table.source.index_of(started["id"]))
            await settle(pilot)
            header = screen_text(app)
            assert "summary step 0 went fine" in header
            shown = [line for line in header.splitlines() if "▏" in line]
            assert any(line.rstrip().endswith("…") for line in shown), header

    run(scenario)


@pytest.mark.slow
def test_flags_take_the_themes_warning_colour_on_the_light_theme(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            await pilot.press("ctrl+t")
            await settle(pilot)
            assert app.theme == "textual-light"
            warning = app.theme_variables["text-warning"]
            table = app.query_one("#lessons", VirtualTable)
            flagged = [
                cell
                for index in range(table.row_count)
                for cell in table.source.row(index).cells
                if isinstance(cell, Text) and cell.plain.startswith("⚑")
            ]
            assert flagged
            styles = {str(span.style) for cell in flagged for span in cell.spans}
            assert "yellow" not in styles
            assert any(warning.lower() in style.lower() for style in styles), styles

    run(scenario)
