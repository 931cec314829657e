"""Monotonic counters kept in the small ``meta`` table.

Episode indexes, audit sequence numbers and rule order come from here, read
and bumped inside the caller's transaction, so two processes never hand out
the same number.
"""

from __future__ import annotations

from .store import Store

META = "meta"
COUNTERS = "counters"


def peek(store: Store, name: str) -> int:
    """The last number handed out for ``name`` (0 when none yet)."""
    doc = store.docs(META).get(COUNTERS) or {}
    return int(doc.get(name, 0))


def take(store: Store, name: str, n: int = 1) -> int:
    """Reserve ``n`` numbers for ``name``; return the first (numbers start at 1)."""
    doc = dict(store.docs(META).get(COUNTERS) or {"id": COUNTERS})
    first = int(doc.get(name, 0)) + 1
    doc[name] = first + n - 1
    store.put(META, COUNTERS, doc)
    return first


def set_at_least(store: Store, name: str, value: int) -> None:
    """Make sure the next number for ``name`` is above ``value`` (imports use this)."""
    doc = dict(store.docs(META).get(COUNTERS) or {"id": COUNTERS})
    if int(doc.get(name, 0)) < value:
        doc[name] = value
        store.put(META, COUNTERS, doc)
