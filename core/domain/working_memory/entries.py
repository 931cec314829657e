"""Per-session working memory: keys with optional TTL, task state, scratchpad, and
working-memory checkpoints (copies of one session's working memory, unrelated to the
store-wide checkpoints of :mod:`core.services.checkpoints`).

Everything lives in the physical table ``working_memory.<session_id>``: the
``state`` document (kv, task, scratchpad) and one document per checkpoint.
Expiry is computed from timestamps with the caller's clock: an expired key is
invisible to every read at once and is removed from the stored document by the
next write to that session's working memory (any write: set, delete, task,
scratchpad or checkpoint), never by a background job.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, TypedDict

import orjson

from ...base import ids, names
from ...base.clock import iso, parse_instant
from ...base.errors import InvalidInput, NotFound
from ...base.text import one_line
from ...ledger import audit
from ...models.base import validate
from ...models.limits import check_json
from ...models.working_memory import (
    DEFAULT_TASK_ID,
    DEFAULT_TASK_STATUS,
    KEY_MAX,
    SCRATCH_CAPACITY,
    STATE_ID,
    TaskState,
    WMCheckpoint,
    WMState,
)
from ...privacy import identifier_problem, scrub, scrub_under
from ...storage.store import Store
from .. import sessions

LOGICAL = "working_memory"
#: 100 years: longer TTLs are refused rather than overflowing the date arithmetic.
TTL_MAX = 100 * 365 * 24 * 3600
TASK_FIELDS = (
    "task_id",
    "description",
    "status",
    "current_step",
    "total_steps",
    "progress_percent",
)


class KeyView(TypedDict):
    """A key's entry as the CLI, the API and the workbench show it."""

    key: str
    value: Any
    """The JSON value as set (strings scrubbed)."""
    set_at: str
    expires_at: str | None
    ttl_remaining: float | None
    """Seconds left at the caller's ``now`` (0.0 once expired); None without a TTL."""


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


def table_name(session_id: str) -> str:
    """The physical table that holds a session's working memory.

    The session id becomes part of a file name, so it must pass the naming rule.
    """
    return f"{LOGICAL}.{names.check_id(session_id, 'session')}"


# -- pure rules ------------------------------------------------------------------------
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


def clamp_progress(value: float) -> float:
    """Progress is a percentage: values outside 0–100 are clamped, not refused."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInput("progress_percent", f"must be a finite number (got {value!r})")
    return float(min(100.0, max(0.0, value)))


def derived_progress(current_step: int, total_steps: int) -> float:
    """Progress from steps: ``current_step / total_steps`` as a clamped percentage."""
    return clamp_progress(round(100.0 * current_step / total_steps, 2))


def progress_is_given(task: dict[str, Any]) -> bool:
    """Whether the task's progress was set by the caller rather than derived from steps.

    Tasks stored before this was recorded are judged by their numbers: a progress
    that is not what the steps give (or not 0 before any steps) was set by hand.
    """
    recorded = task.get("progress_given")
    if recorded is not None:
        return bool(recorded)
    progress = float(task.get("progress_percent") or 0.0)
    step, total = task.get("current_step"), task.get("total_steps")
    if step is not None and total:
        return progress != derived_progress(int(step), int(total))
    return progress != 0.0


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
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl):
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


def _copy(doc: dict[str, Any]) -> dict[str, Any]:
    # Stored documents are shared with the store's cache: never edit them in place.
    copy: dict[str, Any] = orjson.loads(orjson.dumps(doc))
    return copy


def _fresh_state(session_id: str, now: datetime) -> dict[str, Any]:
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


def _purge(state: dict[str, Any], now: datetime) -> list[str]:
    expired = sorted(k for k, e in state["kv"].items() if is_expired(e, now))
    for key in expired:
        del state["kv"][key]
    return expired


# -- store plumbing --------------------------------------------------------------------
def _session_id(store: Store, session: str) -> str:
    """The id of the session an agent named, for reads: an id no session has yet
    reads as an empty working memory (nothing is created by a read); another agent's
    session, while agents are isolated, is not found (``sessions.find_named``)."""
    found = sessions.find_named(store, session)
    return found["id"] if found is not None else sessions.check_named_id(session.strip())


def _stored_state(store: Store, session_id: str) -> dict[str, Any] | None:
    return store.docs(table_name(session_id)).get(STATE_ID)


def _load_for_write(
    store: Store, session: str, now: datetime, actor: str
) -> tuple[str, dict[str, Any], list[str]]:
    """Session id, a private copy of its state, and the expired keys just purged from it.

    A session id nobody has used yet creates the session (marked implicit).
    """
    sid = sessions.ensure_session(store, session, now=now, actor=actor)["id"]
    stored = _stored_state(store, sid)
    state = _copy(stored) if stored is not None else _fresh_state(sid, now)
    return sid, state, _purge(state, now)


def _save_state(store: Store, state: dict[str, Any], now: datetime) -> dict[str, Any]:
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


def _checkpoints(store: Store, session_id: str) -> list[dict[str, Any]]:
    docs = [
        dict(d)
        for d in store.docs(table_name(session_id)).values()
        if d.get("kind") == "checkpoint"
    ]
    return sorted(docs, key=lambda d: (d["created_at"], d["seq"], d["id"]))


def _resolve_checkpoint(store: Store, session_id: str, key: str) -> dict[str, Any]:
    found = _checkpoints(store, session_id)
    key = key.strip().lower()
    exact = [d for d in found if d["id"] == key]
    if exact:
        return exact[0]
    matches = [d for d in found if d["id"].startswith(key)] if len(key) >= 4 else []
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise InvalidInput(
            "id", f"{key!r} matches {len(matches)} checkpoints; give more characters"
        )
    raise NotFound("working-memory checkpoint", key)


# -- reads ----------------------------------------------------------------------------
def get_key(store: Store, session: str, key: str, *, now: datetime) -> KeyView:
    """A live key's entry with ``ttl_remaining``; NotFound when missing or expired."""
    with store.reading():
        sid = _session_id(store, session)
        state = _stored_state(store, sid) or {"kv": {}}
    entry = state["kv"].get(key)
    if entry is None or is_expired(entry, now):
        raise NotFound("working-memory key", key)
    return entry_view(key, entry, now)


def list_keys(store: Store, session: str, *, now: datetime) -> list[KeyView]:
    """Live keys (expired ones are invisible), sorted by key."""
    with store.reading():
        sid = _session_id(store, session)
        state = _stored_state(store, sid) or {"kv": {}}
    return [entry_view(k, e, now) for k, e in sorted(state["kv"].items()) if not is_expired(e, now)]


def get_task(store: Store, session: str) -> dict[str, Any] | None:
    """The session's task state, or None when no task was set."""
    with store.reading():
        state = _stored_state(store, _session_id(store, session)) or {}
    task = state.get("task")
    return dict(task) if task else None


def scratch_list(store: Store, session: str) -> list[dict[str, Any]]:
    """Scratchpad entries, oldest first."""
    with store.reading():
        state = _stored_state(store, _session_id(store, session)) or {}
    return [dict(e) for e in state.get("scratchpad", [])]


def list_wm_checkpoints(store: Store, session: str) -> list[dict[str, Any]]:
    """The session's working-memory checkpoints in creation order, with computed counts."""
    with store.reading():
        found = _checkpoints(store, _session_id(store, session))
    return [_checkpoint_view(d) for d in found]


def _checkpoint_view(doc: dict[str, Any]) -> dict[str, Any]:
    state = doc["state"]
    return {
        **doc,
        "keys": len(state.get("kv", {})),
        "scratch_entries": len(state.get("scratchpad", [])),
        "has_task": state.get("task") is not None,
    }


def overview(store: Store, session: str, *, now: datetime) -> WorkingMemoryView:
    """Everything the workbench shows for a session's working memory at ``now``."""
    with store.reading():
        sid = _session_id(store, session)
        state = _stored_state(store, sid) or _fresh_state(sid, now)
        found = _checkpoints(store, sid)
    return {
        "session_id": sid,
        "keys": [
            entry_view(k, e, now) for k, e in sorted(state["kv"].items()) if not is_expired(e, now)
        ],
        "task": state.get("task"),
        "scratchpad": list(state.get("scratchpad", [])),
        "scratch_capacity": state.get("scratch_capacity", SCRATCH_CAPACITY),
        "checkpoints": [_checkpoint_view(d) for d in found],
    }


# -- keys -----------------------------------------------------------------------------
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
        sid, state, purged = _load_for_write(store, session, now, actor)
        state["kv"][key] = entry
        _save_state(store, state, now)
        ttl_note = f" (ttl {seconds:g}s)" if seconds is not None else ""
        audit_change(store, actor, "wm-set", sid, f"set key {key!r}{ttl_note}", purged, now)
    return entry_view(key, entry, now)


def delete_key(store: Store, session: str, key: str, *, now: datetime, actor: str) -> KeyView:
    """Delete a live key (NotFound when missing or already expired); returns its entry."""
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        entry = state["kv"].pop(key, None)
        if entry is None:
            raise NotFound("working-memory key", key)
        _save_state(store, state, now)
        audit_change(store, actor, "wm-delete", sid, f"delete key {key!r}", purged, now)
    return entry_view(key, entry, now)


# -- task state -----------------------------------------------------------------------
def update_task(
    store: Store,
    session: str,
    *,
    now: datetime,
    actor: str,
    task_id: str | None = None,
    description: str | None = None,
    status: str | None = None,
    current_step: int | None = None,
    total_steps: int | None = None,
    progress_percent: float | None = None,
) -> dict[str, Any]:
    """Create or partially update the task state; returns it.

    Only the fields given change. A ``task_id`` different from the current one
    starts a new task (fresh ``started_at``; fields not given take defaults).
    ``progress_percent`` is clamped to 0–100. Until the caller gives a progress,
    it follows the steps: an update that changes ``current_step`` or
    ``total_steps`` re-derives it as ``current_step / total_steps``. Once the
    caller has given a progress it is theirs (``progress_given``): step updates
    leave it alone until the caller gives another or starts a new task.
    """
    if all(
        v is None
        for v in (task_id, description, status, current_step, total_steps, progress_percent)
    ):
        raise InvalidInput("task", f"give at least one of {', '.join(TASK_FIELDS)}")
    # A word the agent chose is its text: scrubbed like any (status first, then description).
    status = scrub(str(status).strip()).strip() if status is not None else None
    given: dict[str, object] = {}
    if task_id is not None:
        given["task_id"] = str(task_id).strip()
    if description is not None:
        given["description"] = scrub(description).strip()
    if status is not None:
        given["status"] = status
    if current_step is not None:
        given["current_step"] = current_step
    if total_steps is not None:
        given["total_steps"] = total_steps
    if progress_percent is not None:
        given["progress_percent"] = clamp_progress(progress_percent)
    for name in ("current_step", "total_steps"):
        value = given.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InvalidInput(name, f"must be a whole number (got {value!r})")
    stamp = iso(now)
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        current = state.get("task")
        new_task = current is None or (
            "task_id" in given and given["task_id"] != current["task_id"]
        )
        task = (
            {"task_id": DEFAULT_TASK_ID, "status": DEFAULT_TASK_STATUS, "started_at": stamp}
            if new_task or current is None
            else dict(current)
        )
        owned = progress_is_given(task)
        task.update(given)
        if "progress_percent" in given:
            owned = True
        elif ("current_step" in given or "total_steps" in given) and not owned:
            step, total = task.get("current_step"), task.get("total_steps")
            if step is not None and total:
                task["progress_percent"] = derived_progress(int(step), int(total))
        task["progress_given"] = owned
        task["updated_at"] = stamp
        state["task"] = validate(TaskState, task).model_dump(mode="json")
        _save_state(store, state, now)
        what = "start" if new_task else "update"
        summary = (
            f"{what} task {state['task']['task_id']!r}: "
            f"{state['task']['status']} {state['task']['progress_percent']:g}%"
        )
        audit_change(store, actor, "wm-task", sid, summary, purged, now)
    return dict(state["task"])


def clear_task(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Remove the task state (NotFound when there is none); returns what was removed."""
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        task = state.get("task")
        if not task:
            raise NotFound("working-memory task", sid)
        state["task"] = None
        _save_state(store, state, now)
        audit_change(store, actor, "wm-task", sid, f"clear task {task['task_id']!r}", purged, now)
    return dict(task)


# -- scratchpad -----------------------------------------------------------------------
def scratch_add(
    store: Store, session: str, text: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Append a timestamped entry (scrubbed); past the capacity the oldest are dropped.

    Returns the entry plus ``dropped`` (entries this call pushed out).
    """
    content = scrub(text).strip()
    if not content:
        raise InvalidInput(
            "text", "must not be empty (<private>…</private> parts are removed first)"
        )
    entry = {"ts": iso(now), "text": content}
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        pad = [*state["scratchpad"], entry]
        capacity = int(state.get("scratch_capacity") or SCRATCH_CAPACITY)
        dropped = max(0, len(pad) - capacity)
        state["scratchpad"] = pad[dropped:]
        _save_state(store, state, now)
        summary = f"scratch: {one_line(content)[:120]}"
        if dropped:
            summary += f" (dropped {dropped} oldest)"
        audit_change(store, actor, "wm-scratch", sid, summary, purged, now)
    return {**entry, "dropped": dropped}


def set_scratch_capacity(
    store: Store, session: str, capacity: int, *, now: datetime, actor: str
) -> int:
    """Change how many scratchpad entries are kept; shrinking drops the oldest at once.

    Returns how many entries were dropped.
    """
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
        raise InvalidInput("scratch_capacity", f"must be a whole number >= 1 (got {capacity!r})")
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        dropped = max(0, len(state["scratchpad"]) - capacity)
        state["scratchpad"] = state["scratchpad"][dropped:]
        state["scratch_capacity"] = capacity
        _save_state(store, state, now)
        summary = f"scratch capacity {capacity}"
        if dropped:
            summary += f" (dropped {dropped} oldest)"
        audit_change(store, actor, "wm-scratch", sid, summary, purged, now)
    return dropped


# -- working-memory checkpoints ---------------------------------------------------------
def create_wm_checkpoint(
    store: Store, session: str, *, description: str = "", now: datetime, actor: str
) -> str:
    """Copy the session's live working memory into a new checkpoint; returns its uuid4."""
    text = scrub(description).strip()
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        existing = _checkpoints(store, sid)
        stamp = iso(now)
        checkpoint_id = ids.new_uuid()
        doc = {
            "id": checkpoint_id,
            "session_id": sid,
            "kind": "checkpoint",
            "description": text,
            # Order within one instant (a fixed clock, a fast agent) follows creation.
            "seq": max((int(d["seq"]) for d in existing), default=0) + 1,
            "created_at": stamp,
            "updated_at": stamp,
            "state": {k: state[k] for k in ("kv", "task", "scratchpad")},
        }
        saved = validate(WMCheckpoint, doc).to_doc()
        _save_state(store, state, now)
        store.put(table_name(sid), checkpoint_id, saved)
        note = f": {one_line(text)[:100]}" if text else ""
        audit_change(
            store, actor, "wm-checkpoint", checkpoint_id, f"create checkpoint{note}", purged, now
        )
    return checkpoint_id


def checkpoint_op(
    store: Store, session: str, *, description: str = "", now: datetime, actor: str
) -> dict[str, Any]:
    """The ``create_wm_checkpoint`` operation: the new checkpoint as ``list`` shows it."""
    with store.transaction():
        checkpoint_id = create_wm_checkpoint(
            store, session, description=description, now=now, actor=actor
        )
        return next(c for c in list_wm_checkpoints(store, session) if c["id"] == checkpoint_id)


def task_op(
    store: Store,
    session: str,
    *,
    now: datetime,
    actor: str,
    task_id: str | None = None,
    description: str | None = None,
    step: int | None = None,
    total: int | None = None,
    progress: float | None = None,
    status: str | None = None,
) -> dict[str, Any] | None:
    """The ``wm_task`` operation: update the fields given, or read the task state when none
    is (``None`` when the session has none)."""
    if all(v is None for v in (task_id, description, step, total, progress, status)):
        return get_task(store, session)
    return update_task(
        store,
        session,
        now=now,
        actor=actor,
        task_id=task_id,
        description=description,
        status=status,
        current_step=step,
        total_steps=total,
        progress_percent=progress,
    )


def restore_wm_checkpoint(
    store: Store, session: str, checkpoint_id: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Replace the session's kv, task and scratchpad with a checkpoint's; returns it.

    Keys keep their original ``expires_at``: a key whose TTL ran out since the
    checkpoint stays expired (and is purged by this very write).
    """
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        checkpoint = _resolve_checkpoint(store, sid, checkpoint_id)
        saved_state = _copy(checkpoint["state"])
        state["kv"] = saved_state.get("kv", {})
        state["task"] = saved_state.get("task")
        capacity = int(state.get("scratch_capacity") or SCRATCH_CAPACITY)
        state["scratchpad"] = list(saved_state.get("scratchpad", []))[-capacity:]
        purged = sorted(set(purged) | set(_purge(state, now)))
        _save_state(store, state, now)
        audit_change(
            store,
            actor,
            "wm-restore",
            checkpoint["id"],
            f"restore checkpoint {checkpoint['id']}",
            purged,
            now,
        )
    return _checkpoint_view(checkpoint)


def delete_wm_checkpoint(
    store: Store, session: str, checkpoint_id: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Delete one of the session's checkpoints; returns it."""
    with store.transaction():
        sid, state, purged = _load_for_write(store, session, now, actor)
        checkpoint = _resolve_checkpoint(store, sid, checkpoint_id)
        store.delete(table_name(sid), [checkpoint["id"]])
        if purged:
            _save_state(store, state, now)
        audit_change(
            store,
            actor,
            "wm-checkpoint-delete",
            checkpoint["id"],
            f"delete checkpoint {checkpoint['id']}",
            purged,
            now,
        )
    return _checkpoint_view(checkpoint)
