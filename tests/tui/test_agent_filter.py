"""The workbench sees every agent's memory, even while the store isolates agents, and
shows one agent's sessions or episodes at a time (f cycles), driven by real keys."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from memwork.core.domain import episodes, sessions
from memwork.core.ledger import config
from memwork.core.storage.store import Store
from memwork.tui.panes.episodes import EpisodesPane
from memwork.tui.panes.sessions import SessionsPane
from tests.conftest import NOW
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle, wait_until


def _agents_of_episodes(path: Path) -> Counter[str]:
    store = Store(path)
    with store.reading():
        total = episodes.count(store)
        rows = episodes.page(store, 1, total + 1)
    return Counter(r.get("agent_id", "") for r in rows)


@pytest.mark.slow
def test_f_cycles_the_sessions_through_each_agent(demo_app, demo_path: Path) -> None:
    store = Store(demo_path)
    # Isolation is for agents' doors: the workbench still sees every agent's sessions.
    config.set_value(store, "isolation", "agent", now=NOW, actor="tui")
    every = sessions.list_sessions(store)
    agents = sorted({s["agent_id"] for s in every})
    assert len(agents) >= 2  # the demo has more than one agent

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "sessions")
            pane = app.query_one(SessionsPane)
            assert set(pane.sessions) == {s["id"] for s in every}
            for agent in agents:
                await pilot.press("f")
                await settle(pilot)
                assert {s["agent_id"] for s in pane.sessions.values()} == {agent}
                assert len(pane.sessions) == sum(s["agent_id"] == agent for s in every)
                assert f"· agent {agent}" in screen_text(app)
                selected = pane.selected_session()
                assert selected is not None and selected["agent_id"] == agent
            await pilot.press("f")  # after the last agent: every session again
            await settle(pilot)
            assert set(pane.sessions) == {s["id"] for s in every}
            assert "· agent" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_f_cycles_the_episodes_through_each_agent_then_none(demo_app, demo_path: Path) -> None:
    counts = _agents_of_episodes(demo_path)
    named = sorted(a for a in counts if a)
    assert named and counts[""]  # the demo has stamped and global episodes

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            pane = app.query_one(EpisodesPane)
            await wait_until(pilot, lambda: pane.complete)
            assert len(pane.view_rows) == sum(counts.values())
            for agent in [*named, ""]:
                await pilot.press("f")
                await wait_until(pilot, lambda: not pane._filter_pending)
                await settle(pilot)
                assert {r.agent for r in pane.view_rows} == {agent}
                assert len(pane.view_rows) == counts[agent]
                shown = agent or "(none)"
                assert f"{counts[agent]} of {sum(counts.values())} · agent {shown}" in (
                    screen_text(app)
                )
            await pilot.press("f")
            await settle(pilot)
            assert len(pane.view_rows) == sum(counts.values())
            # x clears the agent filter with the others.
            await pilot.press("f", "o")
            await wait_until(pilot, lambda: not pane._filter_pending)
            await pilot.press("x")
            await settle(pilot)
            assert pane.agent_filter is None and len(pane.view_rows) == sum(counts.values())

    run(scenario)


@pytest.mark.slow
def test_episodes_of_one_agent_snapshot(demo_app, snap_compare) -> None:
    async def second_agent(pilot) -> None:  # noqa: ANN001
        await settle(pilot)
        await pilot.press("2")
        await wait_until(pilot, lambda: pilot.app.query_one(EpisodesPane).complete)
        await pilot.press("f", "f")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=second_agent, terminal_size=SIZE)
