"""A session's own working-memory keys: set, get, delete and list them, ask whether one
exists, list them by a glob, read every value at once, and clear them all.

Expired keys are invisible here as everywhere (:mod:`.state`): they are never read,
counted, listed or reported as existing. Clearing keeps the task state, the scratchpad
and the working-memory checkpoints. Keys shared above the session, and the operations
that see them, are :mod:`.scopes`.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

import orjson

from ...base.clock import iso
from ...base.errors import InvalidInput, NotFound
from ...models.limits import check_json
from ...privacy import scrub_under
from ...storage.store import Store
from .state import (
    KeyView,
    audit_change,
    check_key,
    check_ttl,
    entry_view,
    is_expired,
    load_for_write,
    save_state,
    session_id_for_read,
    stored_state,
)

#: The longest glob ``wm keys`` takes.
PATTERN_MAX = 200


def _live_keys(store: Store, session: str, now: datetime) -> dict[str, Any]:
    """The session's live keys (key → entry), sorted by key (a read)."""
    with store.reading():
        state = stored_state(store, session_id_for_read(store, session)) or {"kv": {}}
    return {k: e for k, e in sorted(state["kv"].items()) if not is_expired(e, now)}


def get_key(store: Store, session: str, key: str, *, now: datetime) -> KeyView:
    """A live key's entry with ``ttl_remaining``; NotFound when missing or expired."""
    with store.reading():
        sid = session_id_for_read(store, session)
        state = stored_state(store, sid) or {"kv": {}}
    entry = state["kv"].get(key)
    if entry is None or is_expired(entry, now):
        raise NotFound("working-memory key", key)
    return entry_view(key, entry, now)


def list_keys(store: Store, session: str, *, now: datetime) -> list[KeyView]:
    """Live keys (expired ones are invisible), sorted by key."""
    with store.reading():
        sid = session_id_for_read(store, session)
        state = stored_state(store, sid) or {"kv": {}}
    return [entry_view(k, e, now) for k, e in sorted(state["kv"].items()) if not is_expired(e, now)]


def key_exists(store: Store, session: str, key: str, *, now: datetime) -> dict[str, Any]:
    """Whether ``key`` is live in the session: ``{"key", "exists"}``."""
    check_key(key)
    return {"key": key, "exists": key in _live_keys(store, session, now)}


def key_names(store: Store, session: str, pattern: str = "*", *, now: datetime) -> list[str]:
    """The live keys matching ``pattern`` (a glob: ``*``, ``?``, ``[abc]``; case counts),
    sorted."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > PATTERN_MAX:
        raise InvalidInput("pattern", f"must be a glob of 1 to {PATTERN_MAX} characters")
    return [k for k in _live_keys(store, session, now) if fnmatchcase(k, pattern)]


def get_all(store: Store, session: str, *, now: datetime) -> dict[str, Any]:
    """Every live key's value, by key."""
    return {k: e["value"] for k, e in _live_keys(store, session, now).items()}


def set_key(
    store: Store,
    session: str,
    key: str,
    value: Any,
    *,
    ttl: float | None = None,
    now: datetime,
    actor: str,
) -> KeyView:
    """Set ``key`` to a JSON value (strings are scrubbed); ``ttl`` seconds > 0, optional
    (without one, the store's ``wm_default_ttl`` when it is set)."""
    check_key(key)
    seconds = check_ttl(ttl)
    check_json(value, "value")  # depth and integer range, before the encoder trips on them
    try:
        orjson.dumps(value)
    except TypeError:
        raise InvalidInput("value", f"must be a JSON value (got {type(value).__name__})") from None
    with store.transaction():
        if seconds is None:  # the store's default TTL, when an operator set one
            from ...ledger.config import seconds as setting_seconds

            default = setting_seconds(store, "wm_default_ttl")
            seconds = float(default) if default is not None else None
        entry = {
            "value": scrub_under(key, value),  # "db_password" holds a secret, whatever it says
            "set_at": iso(now),
            "expires_at": iso(now + timedelta(seconds=seconds)) if seconds is not None else None,
        }
        sid, state, purged = load_for_write(store, session, now, actor)
        state["kv"][key] = entry
        save_state(store, state, now)
        ttl_note = f" (ttl {seconds:g}s)" if seconds is not None else ""
        audit_change(store, actor, "wm-set", sid, f"set key {key!r}{ttl_note}", purged, now)
    return entry_view(key, entry, now)


def delete_key(store: Store, session: str, key: str, *, now: datetime, actor: str) -> KeyView:
    """Delete a live key (NotFound when missing or already expired); returns its entry."""
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        entry = state["kv"].pop(key, None)
        if entry is None:
            raise NotFound("working-memory key", key)
        save_state(store, state, now)
        audit_change(store, actor, "wm-delete", sid, f"delete key {key!r}", purged, now)
    return entry_view(key, entry, now)


def clear_keys(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Delete every user key of the session (task state, scratchpad and checkpoints
    stay); returns ``{"session_id", "cleared": [keys]}``."""
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        cleared = sorted(state["kv"])
        state["kv"] = {}
        save_state(store, state, now)
        audit_change(store, actor, "wm-clear", sid, f"cleared {len(cleared)} keys", purged, now)
    return {"session_id": sid, "cleared": cleared}
