"""What a session's working memory holds as a whole: everything the workbench shows of it
(:func:`overview`), and its counts (:func:`stats`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from ...models.working_memory import SCRATCH_CAPACITY
from ...storage.store import Store
from .checkpoints import checkpoint_view, stored_checkpoints
from .state import KeyView, entry_view, fresh_state, is_expired, session_id_for_read, stored_state


class WorkingMemoryView(TypedDict):
    """Everything the workbench shows of one session's working memory (:func:`overview`)."""

    session_id: str
    keys: list[KeyView]
    """Live keys, by name."""
    task: dict[str, Any] | None
    scratchpad: list[dict[str, Any]]
    scratch_capacity: int
    checkpoints: list[dict[str, Any]]
    """Working-memory checkpoints, oldest first, each with its counts (keys, scratch_entries,
    has_task)."""


def overview(store: Store, session: str, *, now: datetime) -> WorkingMemoryView:
    """Everything the workbench shows for a session's working memory at ``now``."""
    with store.reading():
        sid = session_id_for_read(store, session)
        state = stored_state(store, sid) or fresh_state(sid, now)
        found = stored_checkpoints(store, sid)
    return {
        "session_id": sid,
        "keys": [
            entry_view(k, e, now) for k, e in sorted(state["kv"].items()) if not is_expired(e, now)
        ],
        "task": state.get("task"),
        "scratchpad": list(state.get("scratchpad", [])),
        "scratch_capacity": state.get("scratch_capacity", SCRATCH_CAPACITY),
        "checkpoints": [checkpoint_view(d) for d in found],
    }


def stats(store: Store, session: str, *, now: datetime) -> dict[str, Any]:
    """What the session's working memory holds. ``total_keys`` counts what the session
    working memory stores under keys: the user keys plus the task state and the
    scratchpad when present. ``using_fallback`` is always false from a store that
    answered."""
    with store.reading():
        sid = session_id_for_read(store, session)
        state = stored_state(store, sid) or fresh_state(sid, now)
        checkpoints = len(stored_checkpoints(store, sid))
    live = [e for e in state["kv"].values() if not is_expired(e, now)]
    user = len(live)
    has_task = state.get("task") is not None
    scratch = len(state.get("scratchpad") or [])
    return {
        "session_id": sid,
        "total_keys": user + int(has_task) + int(scratch > 0),
        "user_keys": user,
        "checkpoints": checkpoints,
        "scratchpad_entries": scratch,
        "has_task_state": has_task,
        "ttl_keys": sum(1 for e in live if e.get("expires_at")),
        "using_fallback": False,
    }
