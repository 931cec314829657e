"""The workbench's one door to the store: reads, writes and change detection.

Widgets never touch TinyDB; panes call core functions through this service,
always from worker threads (see :meth:`tui.app.MemworkApp.io`). Every write
goes through :meth:`MemoryService.write`, the single writer path, which
stamps the actor and the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

from core import clock
from core.storage.store import Store

T = TypeVar("T")
ACTOR = "tui"


class MemoryService:
    """Core calls for the workbench, with the clock and actor filled in."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.actor = ACTOR

    @property
    def now(self) -> datetime:
        """The clock every rule reads (honours MEMWORK_NOW and the demo shift)."""
        return clock.now()

    def read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(store, *args, **kwargs)`` inside one consistent read."""
        with self.store.reading():
            return fn(self.store, *args, **kwargs)

    def write(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a core mutation as the workbench (``actor=tui``, ``now`` = the clock)."""
        return fn(self.store, *args, now=self.now, actor=self.actor, **kwargs)

    def generation(self) -> int:
        """The store's commit counter; it moves whenever anyone writes."""
        return self.store.committed_generation()

    def follow(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """Have ``on_change`` called (from a thread) after every commit, pushed by the
        store (Redis pub/sub); returns a stop, or None when the store must be polled."""
        return self.store.follow(on_change)
