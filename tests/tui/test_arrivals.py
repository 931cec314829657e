"""Records an agent writes while the workbench is open come into view: a list at its
top stays at its top, a list scrolled down says how many arrived above it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from memwork.core.base.clock import parse_instant
from memwork.core.domain import lessons, sessions
from memwork.core.ledger import audit
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import DEMO_NOW, open_pane, run, screen_text, settle

NOW = parse_instant(DEMO_NOW)


def _agent_observes(path: Path, count: int) -> None:
    """An agent's CLI writing observations from another process (another Store)."""
    store = Store(path)
    session = sessions.start_session(store, agent_id="atlas", now=NOW, actor="cli:atlas")
    for n in range(count):
        sessions.observe(
            store,
            session["id"],
            f"agent note {n}",
            now=NOW + timedelta(seconds=n + 1),
            actor="cli:atlas",
        )


def _newest_entry(path: Path) -> dict:
    store = Store(path)
    with store.reading():
        return next(e for e in audit.entries(store, newest_first=True) if e["action"] != "inject")


def _first_row_text(app, table_id: str) -> str:
    table = app.query_one(table_id, VirtualTable)
    return table.render_line(1).text


@pytest.mark.slow
def test_history_opened_after_an_agent_wrote_starts_at_the_newest_entry(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "history")
            await open_pane(pilot, "review")  # the curator works elsewhere meanwhile
            _agent_observes(demo_path, 26)
            app.store_changed()  # what the poll does when the store moves
            await settle(pilot)
            await open_pane(pilot, "history")
            table = app.query_one("#history", VirtualTable)
            newest = _newest_entry(demo_path)
            assert table.scroll_y == 0
            assert table.cursor_key == newest["id"]
            assert "agent note 25" in _first_row_text(app, "#history")
            assert "new ↑" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_history_scrolled_down_counts_what_arrived_above(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "history")
            await pilot.press("pagedown", "down")
            await settle(pilot)
            table = app.query_one("#history", VirtualTable)
            selected, line = table.cursor_key, table.cursor_row - round(table.scroll_y)
            _agent_observes(demo_path, 5)
            app.store_changed()
            await settle(pilot)
            # One session start and five observations came in above the view.
            assert table.cursor_key == selected
            assert table.cursor_row - round(table.scroll_y) == line
            assert "6 new ↑" in screen_text(app)
            await pilot.press("home")
            await settle(pilot)
            assert "new ↑" not in screen_text(app)
            assert "agent note 4" in _first_row_text(app, "#history")

    run(scenario)


@pytest.mark.slow
def test_an_agents_confident_lesson_appears_at_the_top_of_the_lessons(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(140, 45)) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            await pilot.press("down")  # a lesson selected, the view at the top
            await settle(pilot)
            selected = table.cursor_key
            lessons.add_lesson(
                Store(demo_path),
                "Pin the base image digest in every Dockerfile",
                confidence=0.99,
                now=NOW,
                actor="cli:atlas",
            )
            app.store_changed()
            await settle(pilot)
            assert table.scroll_y == 0
            assert "Pin the base image digest" in _first_row_text(app, "#lessons")
            assert table.cursor_key == selected  # still on screen, one row lower

    run(scenario)


#: Far enough for the decaying lessons to fall behind ones that decay slower or not at all.
WEEKS = 16


def _keys(table: VirtualTable) -> list[str | None]:
    return [table.row_key_at(i) for i in range(table.row_count)]


@pytest.mark.slow
def test_a_lesson_the_decay_preview_moves_off_screen_stays_selected(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(140, 45)) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            now_order = _keys(table)
            for _ in range(WEEKS):
                await pilot.press("right_square_bracket")
            await settle(pilot)
            later_order = _keys(table)
            await pilot.press("0")
            await settle(pilot)
            visible = table.scrollable_content_region.height - 1
            # With the cursor on the first row, the preview keeps the top in view.
            assert table.scroll_y == 0 and table.cursor_row == 0
            # A lesson chosen further down that the preview sinks off the screen stays
            # selected: the view follows it (nothing above it is new).
            sinking = next(k for k in now_order[1:visible] if later_order.index(k) >= visible)
            table.move_cursor(now_order.index(sinking))
            for _ in range(WEEKS):
                await pilot.press("right_square_bracket")
            await settle(pilot)
            assert table.cursor_key == sinking
            assert "new ↑" not in screen_text(app)
            await pilot.press("0")
            await settle(pilot)
            assert table.cursor_key == sinking

    run(scenario)
