"""Which lesson does the agent rely on most? With contexts logged (context_log on),
the lessons list counts how many contexts injected each lesson, sorts by it, and the
History entries name the lesson each injection was."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core.services.context.log import injection_counts
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import open_pane, run, screen_text, settle


def _counts(path: Path) -> dict:
    store = Store(path)
    with store.reading():
        return injection_counts(store)


def _column_text(table: VirtualTable, key: str, row: int) -> str:
    """What the list shows in column ``key`` of row ``row`` (through the screen)."""
    widths = table.visible_columns()
    assert key in widths, f"{key} hidden: {widths}"
    line = table.render_line(1 + row - round(table.scroll_y)).text
    start = 0
    for column in table.columns:
        if column.key not in widths:
            continue
        if column.key == key:
            return line[start : start + widths[key] + 2].strip()
        start += widths[column.key] + 2
    raise AssertionError(key)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (100, 30), (140, 45)])
def test_s_sorts_lessons_by_use_and_the_used_column_stays(demo_app, demo_path, size) -> None:
    counts = _counts(demo_path)
    assert counts, "the demo logs two contexts"

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=size) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            await pilot.press("end")  # scrolled down before sorting
            await pilot.press("s", "s")  # confidence → effect → use
            await settle(pilot)
            assert "sorted by use" in screen_text(app)
            pane = app.pane("lessons")
            keys = [table.row_key_at(i) for i in range(table.row_count)]
            shown = [counts.get(k, {"count": 0})["count"] for k in keys if k in pane.lessons]
            assert shown == sorted(shown, reverse=True) and shown[0] == max(
                c["count"] for k, c in counts.items() if k in pane.lessons
            )
            # The new order is read from its top, with the count beside each lesson.
            assert table.scroll_y == 0 and table.cursor_row == 0
            assert _column_text(table, "use", 0) == str(shown[0])
            assert f"used in {shown[0]} contexts" in screen_text(app)

    run(scenario)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
def test_sorting_by_effect_keeps_the_effect_column_in_a_narrow_terminal(demo_app, size) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=size) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            await pilot.press("end")
            await pilot.press("s")
            await settle(pilot)
            assert "sorted by effect" in screen_text(app)
            assert "effect" in table.visible_columns()
            assert table.scroll_y == 0 and table.cursor_row == 0
            assert _column_text(table, "effect", 0).startswith("+")

    run(scenario)


@pytest.mark.slow
def test_injection_entries_name_the_lesson(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "history")
            await pilot.press("i", "f", *"action:inject table:lessons", "enter")
            await settle(pilot)
            table = app.query_one("#history", VirtualTable)
            assert table.row_count
            # The Action column says inject; the summary says which lesson, first.
            summary = _column_text(table, "summary", 0)
            assert summary.startswith("lesson “"), summary
            assert "injected into context" not in screen_text(app).split("▔")[0]

    run(scenario)
