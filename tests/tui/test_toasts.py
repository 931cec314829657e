"""Toasts never pile up: a new one replaces those on screen (three stacked covered half
a list at 80x24), and an error stays beside it until it times out."""

from __future__ import annotations

import pytest

from memwork.tui.app import MemworkApp
from tests.tui.conftest import open_pane, run, settle


def shown(app: MemworkApp) -> list[str]:
    return [str(n.message) for n in app._notifications]  # noqa: SLF001 - what the rack shows


@pytest.mark.slow
def test_a_new_toast_replaces_the_ones_on_screen(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "lessons")
            for key in ("r", "w", "p"):  # reinforce, weaken, pin: a toast each
                await pilot.press(key)
                await settle(pilot)
            assert len(shown(app)) == 1, shown(app)
            assert "in" in shown(app)[0].lower()  # the pin's toast, the last one

    run(scenario)


@pytest.mark.slow
def test_an_error_stays_beside_the_newest_toast(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            app.notify("first")
            app.notify("it failed", severity="error")
            app.notify("second")
            app.notify("third")
            await settle(pilot)
            assert shown(app) == ["it failed", "third"]
            app.notify("failed again", severity="error")
            await settle(pilot)
            assert shown(app) == ["failed again"]

    run(scenario)


@pytest.mark.slow
def test_a_checkpoint_restore_says_restored_once(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "checkpoints")
            await pilot.press("r")
            await settle(pilot)
            await pilot.press("y")  # confirm
            await settle(pilot)
            toasts = list(app._notifications)  # noqa: SLF001
            assert len(toasts) == 1
            words = f"{toasts[0].title} {toasts[0].message}"
            assert words.count("Restored") == 1, words

    run(scenario)


@pytest.mark.slow
def test_the_demo_note_gives_way_to_a_dialog(demo_app) -> None:
    """The demo's start note stays 30 s; at 80x24 it covered a form's buttons (the help
    screen still says where the copy is)."""
    note = "A temporary copy, deleted when you quit."

    async def scenario() -> None:
        app = demo_app()
        app.start_note = note
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "lessons")
            assert shown(app) == [note]
            await pilot.press("a")  # the add-lesson form
            await settle(pilot)
            assert shown(app) == []
            await pilot.press("escape")
            await settle(pilot)
            assert shown(app) == []  # gone for good, not back when the form closes

    run(scenario)
