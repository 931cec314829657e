"""The ``doctor`` operation: the report on an open store, from the checks of its backend
(:mod:`.folder` for a folder, :mod:`.redis` for Redis, :mod:`.findings` for what both
find). It reports; it repairs nothing."""

from __future__ import annotations

from typing import Any

from ...storage.store import Store
from ...storage.url import StoreURL
from . import folder, redis


def report_op(store: Store) -> dict[str, Any]:
    """The ``doctor`` operation at the agents' doors: the open store's checks, with
    an overall verdict (``ok``); a Redis store is checked as ``memwork doctor`` checks it."""
    if store.scheme == "redis":
        url = getattr(store.backend, "url", None)  # with its password, which location drops
        if isinstance(url, StoreURL):
            return redis.report(url)
    if store.folder is None:
        return {"checks": [], "ok": True, "store": store.label}
    # A long-lived caller's own background fold holds the lock for a moment: not a
    # writer elsewhere, so it is let finish before the lock is looked at.
    store.settle()
    return folder.report(store.folder)
