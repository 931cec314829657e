"""The stored state of one session's working memory, and the rules for its keys.

Everything lives in the physical table ``working_memory.<session_id>``: the ``state``
document (kv, task, scratchpad) and one document per working-memory checkpoint
(:mod:`.checkpoints`). Expiry is computed from timestamps with the caller's clock: an
expired key is invisible to every read at once and is removed from the stored document
by the next write to that session's working memory (any write: keys, task, scratchpad
or checkpoint), never by a background job.

The modules beside this one act on that state: :mod:`.keys` (a session's keys),
:mod:`.task` (its task state), :mod:`.scratchpad`, :mod:`.checkpoints` (copies of one
session's working memory, unrelated to the store-wide checkpoints of
:mod:`core.services.checkpoints`), :mod:`.overview` (what it holds as a whole) and
:mod:`.scopes` (keys shared above the session). They read and write it only through the
functions here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

import orjson

from ...base import names
from ...base.clock import iso, parse_instant
from ...base.errors import InvalidInput
from ...base.numbers import is_finite
from ...ledger import audit
from ...models.base import validate
from ...models.working_memory import KEY_MAX, SCRATCH_CAPACITY, STATE_ID, WMState
from ...privacy import identifier_problem
from ...storage.store import Store
from .. import sessions

LOGICAL = "working_memory"


#: 100 years: longer TTLs are refused rather than overflowing the date arithmetic.
TTL_MAX = 100 * 365 * 24 * 3600


class KeyView(TypedDict):
    """A key's entry as the CLI, the API and the workbench show it."""

    key: str
    value: Any
    """The JSON value as set (strings scrubbed)."""
    set_at: str
    expires_at: str | None
    ttl_remaining: float | None
    """Seconds left at the caller's ``now`` (0.0 once expired); None without a TTL."""


def table_name(session_id: str) -> str:
    """The physical table that holds a session's working memory.

    The session id becomes part of a file name, so it must pass the naming rule.
    """
    return f"{LOGICAL}.{names.check_id(session_id, 'session')}"


def remaining_ttl(entry: dict[str, Any], now: datetime) -> float | None:
    """Seconds until ``entry`` expires (0.0 once expired), None when it has no TTL."""
    expires = entry.get("expires_at")
    if not expires:
        return None
    return max(0.0, round((parse_instant(expires) - now).total_seconds(), 3))


def is_expired(entry: dict[str, Any], now: datetime) -> bool:
    """Whether ``entry`` has a TTL that has run out at ``now``."""
    expires = entry.get("expires_at")
    if not expires:
        return False
    return parse_instant(expires) <= now


def check_key(key: str) -> str:
    """A key is a non-empty string without surrounding spaces; ``_`` starts reserved keys."""
    if not isinstance(key, str) or not key.strip():
        raise InvalidInput("key", "must not be empty")
    if key.startswith("_"):
        raise InvalidInput("key", "keys starting with '_' are reserved")
    if key != key.strip():
        raise InvalidInput("key", "must not start or end with whitespace")
    if len(key) > KEY_MAX:
        raise InvalidInput("key", f"must be at most {KEY_MAX} characters (got {len(key)})")
    problem = identifier_problem(key)
    if problem:
        raise InvalidInput("key", problem)
    return key


def check_ttl(ttl: float | None) -> float | None:
    """A TTL is a number of seconds > 0 (None: the key never expires)."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not is_finite(ttl):
        raise InvalidInput("ttl", f"must be a number of seconds > 0 (got {ttl!r})")
    if ttl <= 0:
        raise InvalidInput("ttl", f"must be > 0 seconds (got {ttl:g})")
    if ttl > TTL_MAX:
        raise InvalidInput("ttl", f"must be at most {TTL_MAX} seconds (100 years; got {ttl:g})")
    return float(ttl)


def entry_view(key: str, entry: dict[str, Any], now: datetime) -> KeyView:
    """A key's entry as the CLI and UI show it (``ttl_remaining`` in seconds or None)."""
    return {
        "key": key,
        "value": entry["value"],
        "set_at": entry["set_at"],
        "expires_at": entry.get("expires_at"),
        "ttl_remaining": remaining_ttl(entry, now),
    }


def copy_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stored document that is the caller's to edit: stored documents are
    shared with the store's cache, never edited in place."""
    copy: dict[str, Any] = orjson.loads(orjson.dumps(doc))
    return copy


def fresh_state(session_id: str, now: datetime) -> dict[str, Any]:
    """The state of a session whose working memory holds nothing yet."""
    return {
        "id": STATE_ID,
        "session_id": session_id,
        "kv": {},
        "task": None,
        "scratchpad": [],
        "scratch_capacity": SCRATCH_CAPACITY,
        "created_at": iso(now),
        "updated_at": iso(now),
    }


def purge_expired(state: dict[str, Any], now: datetime) -> list[str]:
    """Remove the keys of ``state`` that expired at ``now`` (in place); their names, sorted."""
    expired = sorted(k for k, e in state["kv"].items() if is_expired(e, now))
    for key in expired:
        del state["kv"][key]
    return expired


def session_id_for_read(store: Store, session: str) -> str:
    """The id of the session an agent named, for reads: an id no session has yet
    reads as an empty working memory (nothing is created by a read); another agent's
    session, while agents are isolated, is not found (``sessions.find_named``)."""
    found = sessions.find_named(store, session)
    return found["id"] if found is not None else sessions.check_named_id(session.strip())


def stored_state(store: Store, session_id: str) -> dict[str, Any] | None:
    """The session's stored state document (shared with the store's cache: read it, copy it
    with :func:`copy_doc` before editing), or None when its working memory was never written."""
    return store.docs(table_name(session_id)).get(STATE_ID)


def load_for_write(
    store: Store, session: str, now: datetime, actor: str
) -> tuple[str, dict[str, Any], list[str]]:
    """Session id, a private copy of its state, and the expired keys just purged from it.

    A session id nobody has used yet creates the session (marked implicit).
    """
    sid = sessions.ensure_session(store, session, now=now, actor=actor)["id"]
    stored = stored_state(store, sid)
    state = copy_doc(stored) if stored is not None else fresh_state(sid, now)
    return sid, state, purge_expired(state, now)


def save_state(store: Store, state: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Validate and store ``state`` (stamped ``updated_at``); the document stored."""
    state["updated_at"] = iso(now)
    doc = validate(WMState, state).to_doc()
    store.put(table_name(doc["session_id"]), STATE_ID, doc)
    return doc


def audit_change(
    store: Store,
    actor: str,
    action: str,
    record_id: str,
    summary: str,
    purged: list[str],
    now: datetime,
    table: str = LOGICAL,
) -> None:
    """One audit entry for a working-memory change (``table``: a session's working
    memory, or the shared scopes), naming the expired keys the change purged."""
    if purged:
        summary += f" (purged {len(purged)} expired: {', '.join(purged)})"
    audit.record(
        store,
        actor=actor,
        action=action,
        table=table,
        record_id=record_id,
        summary=summary,
        now=now,
    )
