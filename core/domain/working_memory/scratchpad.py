"""A session's scratchpad: timestamped notes, oldest first, kept up to a capacity."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base.clock import iso
from ...base.errors import InvalidInput
from ...base.text import one_line
from ...models.working_memory import SCRATCH_CAPACITY
from ...privacy import scrub
from ...storage.store import Store
from .state import audit_change, load_for_write, save_state, session_id_for_read, stored_state


def scratch_list(store: Store, session: str) -> list[dict[str, Any]]:
    """Scratchpad entries, oldest first."""
    with store.reading():
        state = stored_state(store, session_id_for_read(store, session)) or {}
    return [dict(e) for e in state.get("scratchpad", [])]


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
        sid, state, purged = load_for_write(store, session, now, actor)
        pad = [*state["scratchpad"], entry]
        capacity = int(state.get("scratch_capacity") or SCRATCH_CAPACITY)
        dropped = max(0, len(pad) - capacity)
        state["scratchpad"] = pad[dropped:]
        save_state(store, state, now)
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
        sid, state, purged = load_for_write(store, session, now, actor)
        dropped = max(0, len(state["scratchpad"]) - capacity)
        state["scratchpad"] = state["scratchpad"][dropped:]
        state["scratch_capacity"] = capacity
        save_state(store, state, now)
        summary = f"scratch capacity {capacity}"
        if dropped:
            summary += f" (dropped {dropped} oldest)"
        audit_change(store, actor, "wm-scratch", sid, summary, purged, now)
    return dropped


def scratch_clear(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Empty the session's scratchpad; returns ``{"session_id", "cleared": N}``."""
    with store.transaction():
        sid, state, purged = load_for_write(store, session, now, actor)
        count = len(state["scratchpad"])
        state["scratchpad"] = []
        save_state(store, state, now)
        summary = f"scratch cleared ({count} entries)"
        audit_change(store, actor, "wm-scratch-clear", sid, summary, purged, now)
    return {"session_id": sid, "cleared": count}
