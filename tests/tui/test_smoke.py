"""The workbench's one journey in the quick tier: it opens on the demo store, shows what
a user sees first, and a pane key switches panes. Every other journey takes seconds and
is marked slow (the whole suite runs them)."""

from __future__ import annotations

from memwork.tui.app import PANES
from tests.tui.conftest import SIZE, run, screen_text, settle


def test_the_workbench_opens_on_the_demo_and_a_digit_switches_panes(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            first = screen_text(app)
            assert "memwork — demo" in first.splitlines()[0]
            assert "1 Sessions" in first and "2 Episodes" in first
            assert "4 sessions · 1 active" in first  # the first pane read the store
            assert "Migrate orders.status to an enum" in first
            assert "q Quit" in first  # the footer
            assert app.active_pane == PANES[0].PANE_ID
            await pilot.press("2")
            await settle(pilot)
            assert app.active_pane == "episodes"
            shown = screen_text(app)
            assert "143 episodes" in shown and "write-migration" in shown

    run(scenario)
