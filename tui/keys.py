"""Keys in the order they were typed, each to the widget that is ready for it.

Textual hands a key to the focused widget by posting it to that widget's queue
and goes straight on to the next key. Typed faster than the app answers (a
busy machine, a paste, a quick hand), the keys after one that opens a form or
an editor went to the widget that had the focus when they arrived: `i`, `200`,
ctrl+s saved the old limit (the digits went to the list, ctrl+s to the form),
and the `q` of "unsaved q text" typed into a slot just opened reached the list
and quit. A terminal application is expected to behave as if every key had
been typed slowly.

:class:`KeyGate` does that. The app lets one key at a time through, and the
next only once the last one was handled everywhere it went: stopped by a
widget (an input that typed it), or bubbled up to the app (whose bindings ran
its action). Focus changes the action asked for are applied before the next
key is routed (they are queued on the app first). Where the target of the next
keys is not ready yet (a screen just pushed focuses its first field when it
mounts, a pane just shown when it is laid out), the opener *holds* the keys
until it is (:meth:`KeyGate.hold`); they are then delivered in order, as typed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial
from time import monotonic
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ScreenStackError
from textual.message_pump import MessagePump
from textual.screen import Screen
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.message_pump import MessagePump

    # The mixin's methods call App's (super(), self.screen): mypy reads it as an App.
    _AppBase = App[Any]
else:
    _AppBase = object

#: A key no widget reported back within this many seconds is taken as handled (a
#: widget removed while it held the key): the keys behind it must not wait forever.
KEY_PATIENCE = 1.0
#: A hold whose target never became ready lets the keys go after this many seconds.
HOLD_PATIENCE = 2.0
#: At most this many rounds of messages set off by one key are handled before the next
#: key (a message bubbles one widget up per round: an Input's Submitted reaches its
#: pane three or four rounds later, and the focus change it asks for one after that).
ECHO_ROUNDS = 24


def holding_messages(app: App[Any]) -> list[MessagePump]:
    """The app and the widgets of its screen that hold a message they have not handled
    yet (none while the app closes)."""
    try:
        nodes: list[MessagePump] = [app, *app.screen.walk_children(with_self=True)]
    except ScreenStackError:
        return []
    return [
        node
        for node in nodes
        if node._pending_message is not None or not node._message_queue.empty()  # noqa: SLF001
    ]


class KeyGate:
    """One key at a time, in typing order, to a target that is ready for it.

    The app calls :meth:`arrived` with every key from the terminal, :meth:`done`
    when a key reached it after bubbling, and :meth:`resume` when the focus moved
    (a held target may be ready now). ``route`` is Textual's own routing of one
    key (priority bindings, then the focused widget).
    """

    def __init__(self, app: App[Any], route: Callable[[events.Key], Awaitable[None]]) -> None:
        self.app = app
        self.route = route
        self.waiting: deque[events.Key] = deque()
        self.current: events.Key | None = None
        self.current_since = 0.0
        self.holds: list[tuple[Callable[[], bool], float]] = []
        #: Since when the keys wait for the last one's messages to be handled (0: not).
        self.echoes_since = 0.0

    # -- what the app calls -----------------------------------------------------------
    async def arrived(self, event: events.Key) -> None:
        """A key from the terminal: deliver it now, or after the keys before it."""
        self.waiting.append(event)
        await self.next()

    def done(self, event: events.Key) -> None:
        """``event`` was handled (it reached the app, or a widget stopped it)."""
        if event is self.current:
            self.current = None
            self.echoes_since = monotonic()
            # Queued on the app, behind whatever the key's action queued there (a focus
            # change, a screen's first callbacks), so those are applied first.
            self.app.call_later(self._when_echoes_are_handled, ECHO_ROUNDS)

    def _when_echoes_are_handled(self, rounds: int) -> None:
        """Deliver the next key once the messages the last one set off are handled.

        A key's handling goes on in other widgets' queues after it was stopped: the
        enter that picks an item of a Select's list closes the list and posts the
        Select's Changed to its pane; ``o`` sets a filter whose pane reads it back
        when the Changed arrives. Typed quickly, the next key used to get there first
        (``t review enter o o``: the two ``o`` were lost to the closing list; ``o o``
        read the filter before the first ``o`` had set it). Every widget of the screen
        is sent a callback behind what it holds, and the next key goes once all ran;
        messages those handlers posted in turn get another round, up to ``rounds``.
        """
        busy = holding_messages(self.app)
        if not busy or rounds <= 0:
            self.echoes_since = 0.0
            self.app.call_later(self.next)
            return
        pending = 0

        def ran() -> None:
            nonlocal pending
            pending -= 1
            if pending == 0:
                self.app.call_later(self._when_echoes_are_handled, rounds - 1)

        for node in busy:
            if node.call_later(ran):
                pending += 1
        if pending == 0:
            self.echoes_since = 0.0
            self.app.call_later(self.next)

    def resume(self) -> None:
        """Something may have become ready (the focus moved): try the waiting keys."""
        if self.waiting and self.current is None:
            self.app.call_later(self.next)

    def hold(self, ready: Callable[[], bool]) -> None:
        """Keep the keys typed from now on until ``ready()`` (the new target took the
        focus); they are delivered then, in order."""
        self.holds.append((ready, monotonic() + HOLD_PATIENCE))

    def check(self) -> None:
        """Called now and then: let keys go that a vanished widget or a target that
        never became ready would otherwise keep waiting."""
        if self.current is not None and monotonic() - self.current_since > KEY_PATIENCE:
            self.done(self.current)
        elif self.echoes_since and monotonic() - self.echoes_since > KEY_PATIENCE:
            self.echoes_since = 0.0  # a widget that took a callback went away
            self.app.call_later(self.next)
        elif self.waiting and self.current is None:
            self.app.call_later(self.next)

    # -- delivery ---------------------------------------------------------------------
    def held(self) -> bool:
        """Whether a hold still keeps the keys (ready or expired holds are dropped)."""
        if self.holds:
            now = monotonic()
            self.holds = [(r, t) for r, t in self.holds if now < t and not r()]
        return bool(self.holds)

    async def next(self) -> None:
        """Deliver the next waiting key, unless one is on its way or a hold keeps them."""
        if self.current is not None or self.echoes_since or not self.waiting or self.held():
            return
        event = self.waiting.popleft()
        self.current, self.current_since = event, monotonic()
        target = self.app.focused or self.app.screen
        await self.route(event)
        if not event.is_forwarded:
            self.done(event)  # a priority binding took it, or nothing wanted it
        elif not target.call_later(self._follow, event, target):
            self.done(event)  # the target is closing: the key went nowhere

    def _follow(self, event: events.Key, node: MessagePump) -> None:
        """Runs on ``node`` right after it handled ``event``: done if it stopped there,
        else follow it up to the parent, where it was posted next."""
        if event is not self.current:
            return
        parent = node._parent  # noqa: SLF001 - the node the key bubbles to
        if parent is self.app:
            # The app runs the key's bindings and calls done(); this runs after that,
            # and only matters if the key never got there. (A screen marks a key from
            # the app as stopped, yet still hands it up: its flag says nothing here.)
            self.app.call_later(self.done, event)
        elif event._stop_propagation or parent is None:  # noqa: SLF001
            self.done(event)
        elif not parent.call_later(self._follow, event, parent):
            self.done(event)


class TypeAhead(_AppBase):
    """What the app adds to route typed keys through its :class:`KeyGate` (``self.keys``):
    mixed into :class:`~tui.app.MemworkApp` before ``App``."""

    keys: KeyGate

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            await self.keys.arrived(event)  # typed: in order, one at a time
            return
        await super().on_event(event)

    async def _route_key(self, event: events.Key) -> None:
        """Textual's routing of one typed key (priority bindings, then the focus)."""
        await super().on_event(event)

    async def _on_key(self, event: events.Key) -> None:
        # The key bubbled up to the app: run the bindings (Textual's own handler, once:
        # prevent_default stops it being called again) and let the next key go.
        event.prevent_default()
        try:
            await App._on_key(self, event)  # noqa: SLF001 - the handler this one wraps
        finally:
            self.keys.done(event)

    def on_descendant_focus(self) -> None:
        self.keys.resume()  # a form or pane the keys wait for may be ready now

    def push_screen(self, screen: Any, *args: Any, **kwargs: Any) -> Any:
        """Push a screen; keys typed before it has the focus wait for it (never reach
        the screen behind)."""
        if isinstance(screen, Screen):
            self.keys.hold(partial(self._screen_ready, screen))
            screen.call_after_refresh(self.keys.resume)
        return super().push_screen(screen, *args, **kwargs)

    def _screen_ready(self, screen: Screen[Any]) -> bool:
        if screen is not self.screen or screen.focused is not None:
            return True  # focused, or gone (dismissed, or another screen on top)
        return screen.is_mounted and not screen.focus_chain

    def hold_keys_for(self, widget: Widget) -> None:
        """Keys typed from now on wait until ``widget`` has the focus (an inline editor
        about to take it)."""
        self.keys.hold(lambda: widget.has_focus or not widget.is_attached)
