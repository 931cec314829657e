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
from core.privacy import counting
from core.storage.manifest import MANIFEST_NAME, Manifest
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
        """Run a core mutation as the workbench (``actor=tui``, ``now`` = the clock).

        Redactions the scrubber makes in it are counted into the change's audit entry.
        """
        with counting():
            return fn(self.store, *args, now=self.now, actor=self.actor, **kwargs)

    def generation(self) -> int:
        """The store's commit counter; it moves whenever anyone writes."""
        if self.store.in_memory_only:
            return self.store.storage.manifest.generation
        return Manifest.read(self.store.path / MANIFEST_NAME).generation
