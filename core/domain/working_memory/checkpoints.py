"""Working-memory checkpoints: copies of one session's keys, task state and scratchpad,
stored beside its state, that can be restored (unrelated to the store-wide checkpoints
of :mod:`core.services.checkpoints`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import ids
from ...base.clock import iso
from ...base.errors import InvalidInput, NotFound
from ...base.text import one_line
from ...models.base import validate
from ...models.working_memory import SCRATCH_CAPACITY, WMCheckpoint
from ...privacy import scrub
from ...storage.store import Store
from .state import (
    audit_change,
    copy_doc,
    load_for_write,
    purge_expired,
    save_state,
    session_id_for_read,
    table_name,
)


def stored_checkpoints(store: Store, session_id: str) -> list[dict[str, Any]]:
    """The session's stored working-memory checkpoints, oldest first (ties: creation order)."""
    docs = [
        dict(d)
        for d in store.docs(table_name(session_id)).values()
        if d.get("kind") == "checkpoint"
    ]
    return sorted(docs, key=lambda d: (d["created_at"], d["seq"], d["id"]))


def checkpoint_view(doc: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint as ``list`` shows it: the document plus its counts (``keys``,
    ``scratch_entries``, ``has_task``)."""
    state = doc["state"]
    return {
        **doc,
        "keys": len(state.get("kv", {})),
        "scratch_entries": len(state.get("scratchpad", [])),
        "has_task": state.get("task") is not None,
    }


def _resolve(store: Store, session_id: str, key: str) -> dict[str, Any]:
    """The checkpoint ``key`` names: its id, or a unique prefix of at least 4 characters."""
    found = stored_checkpoints(store, session_id)
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


def list_wm_checkpoints(store: Store, session: str) -> list[dict[str, Any]]:
    """The session's working-memory checkpoints in creation order, with computed counts."""
    with store.reading():
        found = stored_checkpoints(store, session_id_for_read(store, session))
    return [checkpoint_view(d) for d in found]


def create_wm_checkpoint(
    store: Store, session: str, *, description: str = "", now: datetime, actor: str
) -> str:
    """Copy the session's live working memory into a new checkpoint; returns its uuid4."""
    text = scrub(description).strip()
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        existing = stored_checkpoints(store, sid)
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
        save_state(store, state, now)
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


def restore_wm_checkpoint(
    store: Store, session: str, checkpoint_id: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Replace the session's kv, task and scratchpad with a checkpoint's; returns it.

    Keys keep their original ``expires_at``: a key whose TTL ran out since the
    checkpoint stays expired (and is purged by this very write).
    """
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        checkpoint = _resolve(store, sid, checkpoint_id)
        saved_state = copy_doc(checkpoint["state"])
        state["kv"] = saved_state.get("kv", {})
        state["task"] = saved_state.get("task")
        capacity = int(state.get("scratch_capacity") or SCRATCH_CAPACITY)
        state["scratchpad"] = list(saved_state.get("scratchpad", []))[-capacity:]
        purged = sorted(set(purged) | set(purge_expired(state, now)))
        save_state(store, state, now)
        audit_change(
            store,
            actor,
            "wm-restore",
            checkpoint["id"],
            f"restore checkpoint {checkpoint['id']}",
            purged,
            now,
        )
    return checkpoint_view(checkpoint)


def delete_wm_checkpoint(
    store: Store, session: str, checkpoint_id: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Delete one of the session's checkpoints; returns it."""
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        checkpoint = _resolve(store, sid, checkpoint_id)
        store.delete(table_name(sid), [checkpoint["id"]])
        if purged:
            save_state(store, state, now)
        audit_change(
            store,
            actor,
            "wm-checkpoint-delete",
            checkpoint["id"],
            f"delete checkpoint {checkpoint['id']}",
            purged,
            now,
        )
    return checkpoint_view(checkpoint)
