"""`/` on a list filters it as you type; Enter keeps the filter, Esc clears it; the
keys of the pane act on the filtered rows, and the filter survives the store moving."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core.domain import lessons
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle, wait_until


def _rows(table: VirtualTable) -> list[str]:
    return [
        " ".join(str(getattr(c, "plain", c)) for c in table.source.row(i).cells)
        for i in range(table.row_count)
    ]


@pytest.mark.slow
def test_slash_filters_the_lessons_and_esc_clears(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            everything = table.row_count
            assert everything > 5
            await pilot.press("slash", *"canary")
            await settle(pilot)
            kept = _rows(table)
            assert 0 < len(kept) < everything
            assert all("canary" in row.lower() for row in kept)
            assert f"{len(kept)} of {everything}" in screen_text(app)
            await pilot.press("enter")  # keep it, back on the list
            await settle(pilot)
            assert table.has_focus and table.filter_text == "canary"
            assert f"/canary · {len(kept)} of {everything}" in screen_text(app)

            # The pane's keys act on the filtered row under the cursor.
            chosen = table.cursor_key
            store = Store(demo_path)
            before = lessons.get_lesson(store, chosen, app.service.now)["reinforcements"]
            await pilot.press("r")
            await wait_until(
                pilot,
                lambda: (
                    lessons.get_lesson(Store(demo_path), chosen, app.service.now)["reinforcements"]
                    > before
                ),
            )
            await settle(pilot)
            # The store moved; the list reloaded and is still filtered.
            assert table.filter_text == "canary" and table.row_count == len(kept)

            # Words in any order, any case; nothing matching says so.
            await pilot.press("slash", *["backspace"] * 6, *"zzqx")
            await settle(pilot)
            assert table.row_count == 0
            assert "Nothing here matches “zzqx”" in screen_text(app)
            await pilot.press("escape")  # Esc in the field puts the last filter back
            await settle(pilot)
            assert table.filter_text == "canary"
            await pilot.press("escape")  # Esc on the list clears it
            await settle(pilot)
            assert table.filter_text == "" and table.row_count == everything
            assert "of " + str(everything) not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_slash_filters_the_work_items_and_ctrl_f_searches_everything(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("w")
            await settle(pilot)
            table = app.screen.query_one("#work", VirtualTable)
            everything = table.row_count
            await pilot.press("slash", *"pending", "enter")
            await settle(pilot)
            assert 0 < table.row_count < everything
            assert all("pending" in row for row in _rows(table))
            await pilot.press("escape", "escape")  # clear the filter, then close the view
            await settle(pilot)
            assert "Work items" not in screen_text(app)
            await pilot.press("ctrl+f")
            await settle(pilot)
            assert type(app.screen).__name__ == "SearchScreen"

    run(scenario)


@pytest.mark.slow
def test_filtered_lessons_at_80x24_snapshot(demo_app, snap_compare) -> None:
    async def ready(pilot) -> None:
        await open_pane(pilot, "lessons")
        await pilot.press("slash", *"canary")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=ready, terminal_size=(80, 24))
