"""Which calls a server door (HTTP, MCP) answers on its event loop rather than in a
worker thread.

Handing a call to a worker thread and its answer back costs two wake-ups across
threads: ~0.15-0.3 ms on a small machine, a quarter of a whole search at 100k notes.
A call that only reads, on a store on this machine, whose last few runs each took
less than the interpreter's switch interval (5 ms), runs where its request was read.
That costs the other connections nothing they would not wait for anyway: a thread
that computes holds the GIL, and the event loop gets it back only once per switch
interval.

What a thread does give the loop is time while a call waits (for the store's lock,
held by a process that commits; for the recall index, while its saver holds it; for
a first build of that index). A call on the loop runs inside
:func:`core.base.no_wait.never_waiting`, so those places raise
:class:`~core.base.no_wait.WouldWait` instead, and the call is run again in a thread:
it has written nothing by then (a write is a wait too: its commit ends in an fsync,
so a read that would write, such as a context with its log on, stops before it does).
A call that met a wait, or took long all the same, is counted as slow, and the calls
after it go to threads until the last few are quick again. The first calls of a route
always go to a thread.
"""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Callable
from typing import TypeVar

import anyio

from ..base.no_wait import WouldWait, never_waiting

T = TypeVar("T")

#: How many of a route's last calls must have been quick for the next to run inline.
REMEMBERED = 4


class QuickCalls:
    """One route's last few run times, and whether its next call runs inline.

    A run on the loop is timed by the wall clock (a wait would show); a run in a thread
    by that thread's CPU time (its waits for the GIL are the other calls', not its own).
    """

    __slots__ = ("_limit", "_times", "_next")

    def __init__(self, limit: float | None = None, remembered: int = REMEMBERED) -> None:
        self._limit = sys.getswitchinterval() if limit is None else limit
        # Unknown until measured: the first calls go to threads. A list of a fixed
        # length, written in place, so that max() never meets one changing size.
        self._times = [float("inf")] * remembered
        self._next = 0

    def inline_next(self) -> bool:
        """Whether the route's last calls were all quick."""
        return max(self._times) < self._limit

    def _took(self, seconds: float) -> None:
        at = self._next
        self._next = (at + 1) % len(self._times)
        self._times[at] = seconds

    def inline(self, call: Callable[[], T]) -> T:
        """``call()`` here, in a context of its own (as a thread would give it), never
        waiting: :class:`~core.base.no_wait.WouldWait` where it would."""
        started = time.perf_counter()
        try:
            return contextvars.copy_context().run(_never_waiting, call)
        except WouldWait:
            # Counted as never quick, so its next calls go to threads for a while: a call
            # that writes (a context with its log on), or a store kept busy, would meet
            # the same again. (An error is timed as an answer is.)
            started = float("-inf")
            raise
        finally:
            self._took(time.perf_counter() - started)

    def threaded(self, call: Callable[[], T]) -> T:
        """``call()`` in the worker thread this runs in, timed."""
        started = time.thread_time()
        try:
            return call()
        finally:
            self._took(time.thread_time() - started)


def _never_waiting(call: Callable[[], T]) -> T:
    with never_waiting():
        return call()


async def answered(quick: QuickCalls | None, call: Callable[[], T]) -> T:
    """``call()`` on the event loop when ``quick`` says its last calls were quick (and
    again in a worker thread if it meets a wait there), else in a worker thread; with
    no ``quick`` (a call that may write or wait by nature), always in a thread."""
    if quick is None:
        return await anyio.to_thread.run_sync(call)
    if quick.inline_next():
        try:
            return quick.inline(call)
        except WouldWait:
            pass
    return await anyio.to_thread.run_sync(quick.threaded, call)
