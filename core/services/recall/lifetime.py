"""Which stores this process opened for one call only (the CLI's), so recall saves its
index for them when the call ends instead of in a background thread.

Kept apart from :mod:`core.services.recall.search` so a CLI verb that never searches
can say so without importing the recall engine.
"""

from __future__ import annotations

import weakref

from ...storage.store import Store

_ONE_CALL: weakref.WeakSet[Store] = weakref.WeakSet()


def for_one_call(store: Store) -> None:
    """Say that ``store`` is opened for one call: the process ends after it."""
    _ONE_CALL.add(store)


def one_call(store: Store) -> bool:
    """Whether ``store`` was opened for one call (see :func:`for_one_call`)."""
    return store in _ONE_CALL
