"""Escape and a digit typed in one burst (a quick hand, one SSH packet) are the two keys
the user pressed, never an Alt chord: the bytes go through the terminal parser the
app's driver uses, as a terminal would send them."""

from __future__ import annotations

import sys
import time

import pytest
from textual import events
from textual.command import CommandPalette
from textual.widgets import TextArea

from memwork.tui.app import MemworkApp
from memwork.tui.burst import BurstParser
from tests.tui.conftest import SIZE, open_pane, run, settle


def send_bytes(app: MemworkApp, data: str) -> None:
    """What a terminal's input does: the bytes through the parser, the keys to the
    driver (which posts them to the app)."""
    parser = BurstParser()
    for message in [*parser.feed(data), *parser.tick()]:
        app._driver.process_message(message)  # type: ignore[union-attr]


def keys_of(data: str) -> list[str]:
    return [m.key for m in BurstParser().feed(data) if isinstance(m, events.Key)]


def test_escape_then_a_key_in_one_read_is_two_keys() -> None:
    assert keys_of("\x1b7") == ["escape", "7"]
    assert keys_of("\x1b4") == ["escape", "4"]
    assert keys_of("\x1bq") == ["escape", "q"]
    # Sequences that are one key stay one key.
    assert keys_of("\x1b[A") == ["up"]
    assert keys_of("\x1b[1;2A") == ["shift+up"]
    assert keys_of("7") == ["7"]


def test_escape_then_a_sequence_start_splits_once_the_parser_stops_waiting() -> None:
    """ESC ] may begin a reply from the terminal: the parser waits for the rest, and
    only then reads the two keys typed."""
    parser = BurstParser()
    assert list(parser.feed("\x1b]")) == []
    time.sleep(0.2)  # past the parser's wait for the rest of a sequence
    assert [m.key for m in parser.tick() if isinstance(m, events.Key)] == [
        "escape",
        "right_square_bracket",
    ]


def test_the_app_reads_its_terminal_with_that_parser(demo_app) -> None:
    driver_class = demo_app().driver_class
    assert sys.modules[driver_class.__module__].XTermParser is BurstParser


@pytest.mark.slow
def test_escape_7_in_one_burst_leaves_the_slot_editor_and_shows_pane_7(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await pilot.press("e")
            await settle(pilot)
            editor = app.query_one("#slot-editor", TextArea)
            assert editor.has_focus
            before = editor.text
            send_bytes(app, "\x1b7")
            await settle(pilot)
            assert "¶" not in editor.text
            assert editor.text == before
            assert app.active_pane == "context"

    run(scenario)


@pytest.mark.slow
def test_escape_4_in_one_burst_closes_the_palette_and_shows_pane_4(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+p")
            await settle(pilot)
            assert isinstance(app.screen, CommandPalette)
            send_bytes(app, "\x1b4")
            await settle(pilot)
            assert not isinstance(app.screen, CommandPalette)
            assert app.active_pane == "lessons"

    run(scenario)
