"""Workbench test fixtures: the demo store at a fixed instant, a pilot runner, no blinking."""

from __future__ import annotations

import asyncio
import shutil
import unicodedata
import weakref
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual._wait import wait_for_idle
from textual.app import App
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.message_pump import MessagePump
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, TextArea
from textual.worker import WorkerCancelled

from memwork.core.storage.paths import demo_source
from memwork.tui.app import PANES, MemworkApp, make_app
from memwork.tui.keys import holding_messages
from memwork.tui.pane_list import pane_key
from memwork.tui.panes.base import Pane

#: The instant the demo store was written at (data/generate_demo.py).
DEMO_NOW = "2026-11-20T12:00:00Z"
SIZE = (120, 40)


def key_event(key: str) -> events.Key:
    """The key event a terminal sends for ``key`` (a name like "ctrl+s", or a character),
    as Textual's own Pilot builds it."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(
            _get_unicode_name_from_key(REPLACED_KEYS.get(key, key))
        )
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


async def _press_as_typed(self: Pilot, *keys: str) -> None:
    """Every key of one ``press`` arrives at once, as a quick hand or a paste sends it,
    then the test waits once for the app to be idle.

    Textual's Pilot waits for the app to go idle after every single key (two idle
    checks of 20 ms or more, and a re-render of the screen each time): typing a
    sentence into a form cost a second or more. The workbench handles a burst as if
    every key had been typed slowly (tui/keys.py), so a burst tests what a user does;
    ``wait:<ms>`` still pauses inside a sequence.
    """
    app = self.app
    driver = app._driver  # noqa: SLF001 - the driver the terminal's keys come through
    assert driver is not None
    for key in keys:
        if key.startswith("wait:"):
            await wait_for_idle(0)
            await asyncio.sleep(float(key.partition(":")[2]) / 1000)
            continue
        event = key_event(key)
        event.set_sender(app)
        driver.send_message(event)
    if keys:
        await wait_for_idle(0)
        await app._animator.wait_until_complete()  # noqa: SLF001
        await wait_for_idle(0)
        await handled(app)


async def handled(app: App[Any], timeout: float = 30.0) -> None:
    """Wait until the app and every widget on its screen have handled the messages they
    hold, and those their handlers posted in turn (up to 50 rounds).

    Textual's Pilot posts a callback to every widget on each pause and waits for all of
    them: on a pane of ~90 widgets that wakes ~90 tasks, ~14 ms of CPU a pause, and a
    test's ``settle`` pauses four or five times. Only the widgets whose queues hold
    something are waited on here; the idle wait that follows (a quiet 20 ms) covers a
    handler still running.
    """
    for _ in range(50):
        busy = holding_messages(app)
        if not busy or not await _behind(app, busy, timeout):
            return


async def _behind(app: App[Any], busy: list[MessagePump], timeout: float) -> bool:
    """Wait until each of ``busy`` ran a callback posted behind what it holds; False
    when none could take one, the app failed (its exception ends the test) or the wait
    timed out."""
    done = asyncio.Event()
    pending = 0

    def ran() -> None:
        nonlocal pending
        pending -= 1
        if pending == 0:
            done.set()

    for node in busy:
        if node.call_later(ran):
            pending += 1
    if pending == 0:
        return False
    waits = [
        asyncio.create_task(done.wait()),
        asyncio.create_task(app._exception_event.wait()),  # noqa: SLF001
    ]
    _, left = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    for task in left:
        task.cancel()
    return done.is_set()


async def pause(pilot: Pilot, delay: float | None = None) -> None:
    """``pilot.pause()`` with :func:`handled` in place of Textual's wait on every widget."""
    app = pilot.app
    await handled(app)
    if delay is None:
        await wait_for_idle(0)
    else:
        await asyncio.sleep(delay)
    app.screen._on_timer_update()  # noqa: SLF001 - as Pilot.pause does


@pytest.fixture(autouse=True)
def _keys_as_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Pilot, "press", _press_as_typed)


@pytest.fixture(autouse=True)
def _fixed_clock_and_no_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every workbench test sees the demo's clock; cursors never blink (stable snapshots)."""
    monkeypatch.setenv("MEMWORK_NOW", DEMO_NOW)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)


#: Frames each running app was asked for (drawn or not), counted by the fixture below:
#: :func:`settle` knows the screen is unchanged when none was asked for.
FRAMES: weakref.WeakKeyDictionary[App[Any], int] = weakref.WeakKeyDictionary()


@pytest.fixture(autouse=True)
def _no_frames_for_nobody(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The headless driver of ``run_test`` throws away every frame the app draws, and
    drawing them cost ~15% of the workbench tests' CPU time. Tests look at the screen
    through :func:`screen_text` and snapshots, which draw it whole when they look; the
    layout, its sizes and the events it sends are computed as before. A test marked
    ``every_frame`` (one that looks at the frames a terminal would get) has them drawn.

    Every frame asked for is counted in :data:`FRAMES`: Textual asks for one on any
    change of what is shown (a refresh, a layout, a scroll)."""
    every_frame = request.node.get_closest_marker("every_frame") is not None
    draw = Screen._compositor_refresh

    def counted(self: Screen[Any]) -> None:
        app = self.app
        FRAMES[app] = FRAMES.get(app, 0) + 1
        if every_frame or not (app.is_headless and self is app.screen and not app.is_inline):
            draw(self)
            return
        self._compositor._dirty_regions.clear()  # noqa: SLF001 - what a frame would clear
        self._dirty_widgets.clear()  # noqa: SLF001
        app._update_mouse_over(self)  # noqa: SLF001

    monkeypatch.setattr(Screen, "_compositor_refresh", counted)


@pytest.fixture
def demo_path(tmp_path: Path) -> Path:
    """A private copy of data/demo (tests never touch the committed one)."""
    target = tmp_path / "demo"
    shutil.copytree(demo_source(), target, ignore=shutil.ignore_patterns(".lock"))
    return target


@pytest.fixture
def demo_app(demo_path: Path) -> Iterator[Callable[..., MemworkApp]]:
    """Build the workbench on the demo copy (``poll=False`` keeps timers out of snapshots).

    ``prepare=False``: the hidden panes load when first shown, not in idle time. The
    workbench a user runs prepares them, and one test checks that; in every other
    test that work only competed with the keys it sends (about a quarter of the
    workbench tests' CPU time)."""

    def build(**kwargs: Any) -> MemworkApp:
        kwargs.setdefault("poll", False)
        kwargs.setdefault("prepare", False)
        # The title names the store's place: a private copy's temporary path would make
        # every snapshot differ from run to run.
        kwargs.setdefault("title_suffix", "demo")
        return make_app(demo_path, **kwargs)

    yield build


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    """Run an async Pilot scenario from a plain test (no async plugin needed)."""
    asyncio.run(scenario())


async def settle(pilot: Pilot) -> None:
    """Let workers finish and the screen catch up: until two frames in a row are the
    same (a worker's result lays out, resizes and scrolls over several turns of the
    event loop, and how many depends on how busy the machine is). A pane's debounced
    rebuild counts as work: a busy machine can leave its timer still to fire."""
    for _ in range(400):  # 20 s at most
        if not any(pane.rebuild_pending for pane in pilot.app.screen_stack[0].query(Pane)):
            break
        await pause(pilot, 0.05)
    for _ in range(2):
        await pause(pilot)
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            pass  # an exclusive worker was replaced by a newer one: that one counts
    # Read the screen only when a frame was asked for: drawing it whole costs ~10 ms.
    app = pilot.app
    await pause(pilot)
    frames = FRAMES.get(app, 0)
    shown = None
    for _ in range(50):
        await pause(pilot)
        if FRAMES.get(app, 0) == frames:
            return
        frames = FRAMES.get(app, 0)
        now = screen_text(app)
        if now == shown:
            return
        shown = now


async def wait_until(pilot: Pilot, ready: Callable[[], bool], timeout: float = 60.0) -> None:
    """Pause until ``ready()`` holds (timers tick late on a loaded machine); fail after
    ``timeout`` seconds with what the screen showed."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not ready():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not ready after {timeout} s:\n{screen_text(pilot.app)}")
        await pilot.pause(0.1)


def screen_text(app: MemworkApp) -> str:
    """What the user sees right now, as plain text lines."""
    # The screens under a dialog show through it (dimmed), as in the terminal.
    update = app.screen._compositor.render_update(  # type: ignore[attr-defined]
        full=True, screen_stack=app._background_screens
    )
    return "\n".join("".join(strip.text for strip in line) for line in update.strips)


async def open_pane(pilot: Pilot, pane_id: str) -> None:
    """Press the pane's key (its digit, or its letter past the ninth) once the app has
    settled (an early key can be lost)."""
    await settle(pilot)
    n = 1 + [pane.PANE_ID for pane in PANES].index(pane_id)
    await pilot.press(pane_key(n, PANES[n - 1]))
    await settle(pilot)
    assert pilot.app.active_pane == pane_id


def capture_toasts(app: MemworkApp) -> list[str]:
    """Record every toast's message (run_test does not draw toasts)."""
    messages: list[str] = []
    notify = app.notify

    def recording(message: str, **kwargs: Any) -> None:
        messages.append(str(message))
        notify(message, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return messages
