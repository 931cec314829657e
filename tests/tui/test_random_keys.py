"""The workbench under a hand that presses anything: random keys over every pane, its
editors, forms and palette, on the demo store. It never ends in an exception."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from memwork.tui.app import MemworkApp
from tests.tui.conftest import run

#: Pane digits, letters (each pane's actions), and the keys that move, open and close;
#: not q / ctrl+q (they quit), nor ctrl+z (the shell's suspend).
KEYS = [
    *"123456789WRabcdefghijklmnoprstuvwxyzABCDEFGHIJKLMNOPSTUVXYZ0/?.-+ ",
    *("escape", "enter", "tab", "shift+tab", "up", "down", "left", "right", "pageup"),
    *("pagedown", "home", "end", "backspace", "delete", "ctrl+f", "ctrl+p", "ctrl+s"),
    *("ctrl+y", "space", "f1"),
]


@pytest.mark.slow
@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_random_keys_never_end_the_workbench_in_an_exception(
    demo_app: Callable[..., MemworkApp], monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    monkeypatch.setenv("EDITOR", "true")  # `E` opens $EDITOR: one that returns at once
    monkeypatch.setenv("VISUAL", "true")
    rng = random.Random(36 + size[0])
    pressed: list[str] = []

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=size) as pilot:
            for n in range(250):
                # Escape often: a form takes every key typed until it is left.
                key = "escape" if rng.random() < 0.15 else rng.choice(KEYS)
                pressed.append(key)
                await pilot.press(key)
                if n % 25 == 0:
                    await pilot.pause()
                assert app.is_running, pressed[-20:]
            await pilot.pause()
        assert app._exception is None, (app._exception, pressed[-20:])

    run(scenario)
