"""The Graph pane: the tree of links from a record, driven by real keys on the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from memwork.core.services.link_graph import link_tree, linked_records
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle, wait_until

NARROW = (80, 24)


@pytest.mark.slow
def test_the_tree_shows_a_records_links_and_reroots_on_enter(demo_app, demo_path: Path) -> None:
    store = Store(demo_path)
    top = linked_records(store)[0]
    tree = link_tree(store, top.id)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "graph")
            await wait_until(pilot, lambda: f"{top.links} links" in screen_text(app))
            text = screen_text(app)
            # The most linked record is the root; what it links to is listed under it.
            assert "◆ root" in text and "→ sighted in" in text
            assert tree[1].title[:20] in text
            # tab into the tree, down to the first link, enter: that record is the root.
            await pilot.press("tab", "down", "enter")
            await settle(pilot)
            pane = app.pane("graph")
            await wait_until(pilot, lambda: bool(pane.rows) and pane.rows[0].id == tree[1].id)
            assert "backspace: back (1)" in screen_text(app)
            await pilot.press("backspace")
            await wait_until(pilot, lambda: pane.rows[0].id == top.id)
            # o opens the record under the cursor in its own pane (an episode here).
            await pilot.press("home", "down", "o")
            await settle(pilot)
            assert app.active_pane == "episodes"

    run(scenario)


@pytest.mark.slow
def test_an_empty_store_says_where_links_come_from(tmp_path: Path) -> None:
    from memwork.tui.app import make_app

    async def scenario() -> None:
        app = make_app(tmp_path / "empty", poll=False, title_suffix="empty")
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "graph")
            table = app.query_one("#graph-records", VirtualTable)
            assert table.row_count == 0
            assert "No links yet" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_graph_pane_snapshot_80x24(demo_app, snap_compare) -> None:
    async def shown(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("W")
        await settle(pilot)
        await pilot.press("tab", "down", "down")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=shown, terminal_size=NARROW)
