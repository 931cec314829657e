"""A server's recall index made ready before its first search.

A long-lived process answers its first search with more than the search: the saved
index file opened and caught up with the store, numpy imported where the store is big
enough for a query's sums to want it (~50 ms), each record's length term and the kinds'
member words worked out. At 100k records that first search took 55–60 ms where the
next took 1–2. :func:`start` does that work in a thread of its own as ``memwork serve``
starts, so an agent's first search, which comes after its handshake and some thought,
costs what every later one does. ``memwork mcp`` does
not: one runs per agent session, many start together, and numpy's import alone costs
~20 MB and ~0.15 s of CPU (its BLAS thread spins a while) in a session that may never
search.

Only an index already saved is readied: building one from the store (seconds at 100k
records, and a save of hundreds of megabytes at the end) is left to the first search,
as before, so a server that is stopped before anyone searches stops at once and writes
nothing. ``MEMWORK_WARM_RECALL=0`` turns this off.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import TYPE_CHECKING

from .search import first_catch_up, kept_recall

if TYPE_CHECKING:
    from ...storage.store import Store

ENV = "MEMWORK_WARM_RECALL"

log = logging.getLogger(__name__)


def wanted() -> bool:
    """Whether servers ready their recall index as they start (``MEMWORK_WARM_RECALL``,
    on unless ``0``)."""
    return os.environ.get(ENV, "").strip() != "0"


def warm(store: Store) -> bool:
    """Open ``store``'s saved recall index in this process's kept index, catch it up
    and work out what a first query would (:meth:`RecallIndex.ready`); whether there
    was a saved index to start from (none: nothing is done)."""
    lock, recall = kept_recall(store)
    with lock:
        if recall.index is None:
            if not recall.has_saved_index(store):
                return False
            first_catch_up(store, recall)
        index = store.read(lambda: recall.refresh(store))
        index.ready()
    return True


def start(store: Store) -> threading.Thread | None:
    """:func:`warm` in a daemon thread (None when turned off); the caller joins it before
    it closes the store. A failure is only logged: the first search does the same work
    and reports what it meets."""
    if not wanted():
        return None

    def run() -> None:
        try:
            warm(store)
        except Exception:  # noqa: BLE001 - only a head start: the search tries again
            log.debug("readying the recall index failed", exc_info=True)

    thread = threading.Thread(target=run, name="memwork-recall-warm", daemon=True)
    thread.start()
    return thread
