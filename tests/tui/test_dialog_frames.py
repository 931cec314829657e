"""A dialog is drawn once, in its final layout: no frame of a tall layout, then a short
one, then borderless controls (a flicker below 32 lines); help opens on the current
pane's keys from its first frame, not at the top with a jump a moment later."""

from __future__ import annotations

from typing import Any

import pytest
from textual.screen import Screen
from textual.widgets import Button, Input, Static

from memwork.tui.screens.confirm import ConfirmScreen
from memwork.tui.screens.form import FormScreen
from memwork.tui.screens.help import HelpScreen
from tests.tui.conftest import open_pane, run, settle

# These tests read the frames the terminal would get: they are drawn (conftest).
pytestmark = pytest.mark.every_frame


def _record_frames(app, kind: type[Screen], describe) -> list[Any]:  # noqa: ANN001
    """Every composited frame that shows a ``kind`` screen, described by ``describe``."""
    frames: list[Any] = []
    display = app._display  # noqa: SLF001 - called with each frame the terminal would get

    def recording(screen: Screen, renderable: Any) -> None:
        if isinstance(screen, kind):
            frames.append(describe(screen))
        display(screen, renderable)

    app._display = recording  # noqa: SLF001
    return frames


def _layout(screen: Screen) -> tuple:
    controls = tuple(w.compact for w in screen.query("Input, Button"))
    return screen.has_class("-short"), controls


@pytest.mark.slow
@pytest.mark.parametrize(
    ("key", "kind"),
    [("a", FormScreen), ("f", ConfirmScreen)],
)
def test_a_dialog_below_32_lines_has_one_layout_from_its_first_frame(
    demo_app, key: str, kind: type[Screen]
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "lessons")
            frames = _record_frames(app, kind, _layout)
            await pilot.press(key)
            await settle(pilot)
            assert isinstance(app.screen, kind)
            assert frames, "the dialog was never drawn"
            # Short and borderless from the first frame on: one layout, no flicker.
            assert set(frames) == {frames[-1]}, frames
            short, controls = frames[0]
            assert short and controls and all(controls)
            assert app.screen.query(Input) or app.screen.query(Button)

    run(scenario)


@pytest.mark.slow
def test_help_opens_on_the_current_panes_keys_from_its_first_frame(demo_app) -> None:
    def top_section(screen: Screen) -> str:
        # The first section on screen below the store line.
        scroll_y = screen.query_one("VerticalScroll").scroll_y
        for static in screen.query(Static):
            if (
                static.id != "help-store"
                and static.region.y >= 0
                and static.virtual_region.y >= scroll_y
            ):
                return static.id or ""
        return ""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "slots")
            frames = _record_frames(app, HelpScreen, top_section)
            await pilot.press("question_mark")
            await settle(pilot)
            assert frames and set(frames) == {"help-slots"}, frames

    run(scenario)
