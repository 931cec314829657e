"""The Replay pane: a session's timeline stepped through with real keys on the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from memwork.core.services.replay import session_replay
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle, wait_until

NARROW = (80, 24)
ACTIVE = "ses_01M3250V00WA1TEPXJB3ZH4H8V"


@pytest.mark.slow
def test_steps_forward_back_and_to_the_end(demo_app, demo_path: Path) -> None:
    store = Store(demo_path)
    replay = session_replay(store, ACTIVE)
    store.close()
    total = len(replay.events)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "replay")
            pane = app.pane("replay")
            steps = app.query_one("#replay-steps", VirtualTable)
            await wait_until(pilot, lambda: f"step 1 of {total}" in screen_text(app))
            assert steps.row_count == 1
            # enter moves to the replay; n steps forward, p back, shift+→ to the last step.
            await pilot.press("enter")
            await settle(pilot)
            for _ in range(3):
                await pilot.press("n")
                await settle(pilot)
            await wait_until(pilot, lambda: f"step 4 of {total}" in screen_text(app))
            assert steps.row_count == 4
            assert replay.events[3].text[:30] in screen_text(app)
            await pilot.press("p")
            await wait_until(pilot, lambda: pane.step == 3)
            await pilot.press("shift+right")
            await wait_until(pilot, lambda: f"step {total} of {total}" in screen_text(app))
            assert steps.row_count == total
            await pilot.press("shift+left")
            await wait_until(pilot, lambda: pane.step == 1)
            # space plays: the steps come one a second until space pauses.
            await pilot.press("space")
            await wait_until(pilot, lambda: pane.step >= 3, timeout=30)
            await pilot.press("space")
            await settle(pilot)
            paused = pane.step
            await pilot.pause(1.5)
            assert pane.step == paused and "playing" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_a_new_observation_appears_at_the_end_of_the_replay(demo_app, demo_path: Path) -> None:
    from memwork.core.base.clock import parse_instant
    from memwork.core.domain import sessions

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "replay")
            await pilot.press("enter")
            await settle(pilot)
            await pilot.press("shift+right")
            await settle(pilot)
            before = app.pane("replay").total
            # An agent observes while the replay is open; the workbench follows the store.
            later = parse_instant("2026-11-20T12:30:00Z")
            store = Store(demo_path)
            sessions.observe(store, ACTIVE, "Replayed from the workbench", now=later, actor="test")
            store.close()
            app.store_changed()
            await wait_until(pilot, lambda: app.pane("replay").total == before + 1)
            await pilot.press("shift+right")
            await wait_until(pilot, lambda: "Replayed from the workbench" in screen_text(app))

    run(scenario)


@pytest.mark.slow
def test_replay_pane_snapshot_80x24(demo_app, snap_compare) -> None:
    async def shown(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        for _ in range(4):
            await pilot.press("n")
            await settle(pilot)

    assert snap_compare(demo_app(), run_before=shown, terminal_size=NARROW)
