"""Calls that must not wait: they stop where they would, and are run again elsewhere.

The server doors (HTTP, and MCP's tools) answer a quick read on their event loop
instead of a worker thread (``core/doors/quick_calls.py``). There, waiting for
anything (the store's lock while another process commits, the recall index while
its saver holds it, a first build of that index, a commit's fsync) would hold up
every other connection. Such a call runs inside :func:`never_waiting`; the places
that would wait ask :func:`may_wait` first, or take their lock with :func:`taken`,
and raise :class:`WouldWait` instead. Nothing is written before that point in a
call that only reads, so the door simply runs the call again in a thread, where it
may wait.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_NEVER: ContextVar[bool] = ContextVar("memwork_never_waiting", default=False)


class WouldWait(Exception):  # noqa: N818 - a signal to run elsewhere, not a failure
    """A call inside :func:`never_waiting` met something it would have waited for."""


def may_wait() -> bool:
    """Whether the running call may wait (False inside :func:`never_waiting`)."""
    return not _NEVER.get()


@contextmanager
def never_waiting() -> Iterator[None]:
    """Run the block so that whatever would wait raises :class:`WouldWait`."""
    token = _NEVER.set(True)
    try:
        yield
    finally:
        _NEVER.reset(token)


def take(lock: threading.Lock | threading.RLock) -> bool:
    """Acquire ``lock``, waiting for it unless inside :func:`never_waiting`, where a
    lock another thread holds raises :class:`WouldWait`; whether the call may wait
    (for the caller's next steps)."""
    waits = may_wait()
    if not lock.acquire(blocking=waits):
        raise WouldWait
    return waits


class taken:  # noqa: N801 - used as ``with taken(lock):``, like a function
    """``with lock:``, taken by :func:`take` (a class, not a generator: every search
    takes one)."""

    __slots__ = ("lock",)

    def __init__(self, lock: threading.Lock | threading.RLock) -> None:
        self.lock = lock

    def __enter__(self) -> None:
        take(self.lock)

    def __exit__(self, *_: Any) -> None:
        self.lock.release()
