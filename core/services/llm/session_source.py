"""What ``reflect`` and ``crystallize`` read: a session and its observations."""

from __future__ import annotations

from typing import Any

from ...base.errors import Conflict
from ...domain import sessions
from ...storage.store import Store


def read(store: Store, key: str, verb: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the session, its observations oldest first); Conflict when it has none (there is
    nothing to ``verb``, and a model must not be asked about nothing)."""
    with store.reading():
        session = sessions.resolve(store, key)
        found = sessions.observations(store, session["id"])
    if not found:
        raise Conflict(f"session {session['id']} has no observations to {verb}")
    return session, found
