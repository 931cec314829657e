"""Working memory beyond one key: clear every user key or the scratchpad, ask whether
a key exists, list keys by a glob, read every value at once, and count what a
session's working memory holds.

Expired keys are invisible here as everywhere (:mod:`core.domain.working_memory.entries`): they are
never counted, listed or reported as existing. Clearing keeps the task state, the
scratchpad and the working-memory checkpoints; clearing the scratchpad keeps the rest.
"""

from __future__ import annotations

from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from ...base.errors import InvalidInput
from ...storage.store import Store
from . import entries as wm

#: The longest glob ``wm keys`` takes.
PATTERN_MAX = 200


def _live(store: Store, session: str, now: datetime) -> tuple[str, dict[str, Any], int]:
    """Session id, its live keys (key → entry) and its checkpoint count (a read)."""
    with store.reading():
        sid = wm._session_id(store, session)
        state = wm._stored_state(store, sid) or wm._fresh_state(sid, now)
        checkpoints = len(wm._checkpoints(store, sid))
    live = {k: e for k, e in sorted(state["kv"].items()) if not wm.is_expired(e, now)}
    return sid, {**state, "kv": live}, checkpoints


def clear_keys(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Delete every user key of the session (task state, scratchpad and checkpoints
    stay); returns ``{"session_id", "cleared": [keys]}``."""
    with store.transaction():
        sid, state, purged = wm._load_for_write(store, session, now, actor)
        cleared = sorted(state["kv"])
        state["kv"] = {}
        wm._save_state(store, state, now)
        wm.audit_change(store, actor, "wm-clear", sid, f"cleared {len(cleared)} keys", purged, now)
    return {"session_id": sid, "cleared": cleared}


def scratch_clear(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Empty the session's scratchpad; returns ``{"session_id", "cleared": N}``."""
    with store.transaction():
        sid, state, purged = wm._load_for_write(store, session, now, actor)
        count = len(state["scratchpad"])
        state["scratchpad"] = []
        wm._save_state(store, state, now)
        summary = f"scratch cleared ({count} entries)"
        wm.audit_change(store, actor, "wm-scratch-clear", sid, summary, purged, now)
    return {"session_id": sid, "cleared": count}


def key_exists(store: Store, session: str, key: str, *, now: datetime) -> dict[str, Any]:
    """Whether ``key`` is live in the session: ``{"key", "exists"}``."""
    wm.check_key(key)
    _, state, _ = _live(store, session, now)
    return {"key": key, "exists": key in state["kv"]}


def key_names(store: Store, session: str, pattern: str = "*", *, now: datetime) -> list[str]:
    """The live keys matching ``pattern`` (a glob: ``*``, ``?``, ``[abc]``; case counts),
    sorted."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > PATTERN_MAX:
        raise InvalidInput("pattern", f"must be a glob of 1 to {PATTERN_MAX} characters")
    _, state, _ = _live(store, session, now)
    return [k for k in state["kv"] if fnmatchcase(k, pattern)]


def get_all(store: Store, session: str, *, now: datetime) -> dict[str, Any]:
    """Every live key's value, by key."""
    _, state, _ = _live(store, session, now)
    return {k: e["value"] for k, e in state["kv"].items()}


def stats(store: Store, session: str, *, now: datetime) -> dict[str, Any]:
    """What the session's working memory holds. ``total_keys`` counts what the session
    working memory stores under keys: the user keys plus the task state and the
    scratchpad when present. ``using_fallback`` is always false from a store that
    answered."""
    sid, state, checkpoints = _live(store, session, now)
    user = len(state["kv"])
    has_task = state.get("task") is not None
    scratch = len(state.get("scratchpad") or [])
    return {
        "session_id": sid,
        "total_keys": user + int(has_task) + int(scratch > 0),
        "user_keys": user,
        "checkpoints": checkpoints,
        "scratchpad_entries": scratch,
        "has_task_state": has_task,
        "ttl_keys": sum(1 for e in state["kv"].values() if e.get("expires_at")),
        "using_fallback": False,
    }
