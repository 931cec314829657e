"""A first run orients: the title names where the store is, an empty store's first
screen says how to point an agent at it, and lists say "loading" until they are
read, never "none" for a store that has some."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.domain import sessions
from memwork.core.storage.store import Store
from memwork.tui.app import make_app
from memwork.tui.title import home_relative
from memwork.tui.widgets.virtual_table import VirtualTable
from memwork.tui.widgets.welcome import Welcome
from tests.tui.conftest import open_pane, run, screen_text, settle


@pytest.mark.slow
def test_an_empty_store_says_where_it_is_and_how_agents_reach_it(tmp_path: Path) -> None:
    db = tmp_path / "agent-memory"
    Store(db)  # what `memwork` with no store does: creates it, empty
    where = str(db.resolve())

    async def scenario() -> None:
        app = make_app(db, poll=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert app.title_base == home_relative(where)
            assert "This store is empty" in screen_text(app)
            # Its text, as shown (a long path wraps on screen; it is never cut).
            text = " ".join(app.query_one(Welcome).render().plain.split())
            assert f"MEMWORK_DB={where}" in text
            # Three lines, one per door: the CLI, an MCP client's config, Python.
            assert f"CLI MEMWORK_DB={where} memwork context --task <task>" in text
            assert '"memwork": {"command": "memwork", "args": ["mcp"]' in text
            assert f"Python from memwork import Memory; memory = Memory('{where}')" in text
            # An agent writes: the orientation makes way for what it wrote.
            store = Store(db)
            started = sessions.start_session(
                store, agent_id="atlas", now=datetime(2026, 11, 20, tzinfo=UTC), actor="cli"
            )
            app.store_changed()
            await settle(pilot)
            text = screen_text(app)
            assert "This store is empty" not in text
            assert started["id"] in text or "atlas" in text

    run(scenario)


@pytest.mark.slow
def test_at_80x24_the_title_says_where_the_store_is(tmp_path: Path) -> None:
    # Named as the default store is (<user data dir>/memwork): its name alone says nothing.
    db = tmp_path / "a" / "long" / "path" / "to" / "share" / "memwork"
    Store(db)

    async def scenario() -> None:
        app = make_app(db, poll=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            title = screen_text(app).splitlines()[0]
            assert "memwork — memwork" not in title
            assert "share/memwork" in title  # cut in the middle, its end kept
            assert title.split("—", 1)[1].strip().startswith(str(tmp_path)[:8])

    run(scenario)


@pytest.mark.slow
def test_a_list_says_loading_until_it_is_read(demo_app, tmp_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app(prepare=False)  # the Lessons pane loads when first shown
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            # Composed (as a first switch or idle-time preparation does first), not read.
            await app.attached_pane("lessons")
            table = app.query_one("#lessons", VirtualTable)
            assert table.row_count == 0
            assert table.empty_text == "Loading lessons…"  # not "No lessons yet"
            await open_pane(pilot, "lessons")
            assert table.row_count > 0

        empty = tmp_path / "empty"
        Store(empty)
        app = make_app(empty, poll=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await open_pane(pilot, "lessons")
            assert "No lessons yet" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_a_store_with_episodes_but_no_session_opens_on_its_episodes(tmp_path: Path) -> None:
    """It used to open on an empty Sessions list, as if nothing were recorded."""
    db = tmp_path / "agent-memory"
    Memory(str(db)).record_episode({"task_id": "deploy-api", "score": 0.8})

    async def scenario() -> None:
        app = make_app(db, poll=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            assert app.active_pane == "episodes"
            assert "deploy-api" in screen_text(app)
            await open_pane(pilot, "sessions")  # still there when asked for
            await settle(pilot)
            assert app.active_pane == "sessions"

    run(scenario)
