"""The audit log: every mutation appends one entry, in the same transaction."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from core import ids, shards
from core.clock import iso
from core.storage.store import Store

BASE = "audit"


def actor_name(kind: str, agent_id: str | None = None) -> str:
    """``cli`` or ``cli:<agent id>`` — who made a change."""
    return f"{kind}:{agent_id}" if agent_id else kind


def record(
    store: Store,
    *,
    actor: str,
    action: str,
    table: str,
    record_id: str,
    summary: str,
    now: datetime,
    seq: int | None = None,
) -> dict[str, Any]:
    """Append one audit entry (call inside the mutation's transaction).

    Inside :func:`core.privacy.counting` the entry records the redactions made since
    the previous entry (``redactions``: kind → count), which is the change's own input.
    ``seq`` is for a caller writing many entries in one transaction, which knows the next
    number (finding it costs a look at every table name: a bulk recording would pay that
    once per episode).
    """
    # The sequence lives in the log itself, not in ``meta``: restoring a
    # checkpoint rolls ``meta`` back, but the audit log is never rolled back.
    from core.errors import InvalidInput
    from core.privacy import current_tally, identifier_problem

    problem = identifier_problem(actor)
    if problem:  # MEMWORK_AGENT or an API caller's actor: stored as given, so checked
        raise InvalidInput("actor", problem)
    if seq is None:
        seq = last_seq(store) + 1

    tally = current_tally()
    redactions = tally.take_pending() if tally is not None else {}
    entry = {
        "action": action,
        "actor": actor,
        "id": ids.new_id("aud"),
        "record_id": record_id,
        "seq": seq,
        "summary": summary if len(summary) <= 200 else summary[:199] + "…",
        "table": table,
        "ts": iso(now),
    }
    if redactions:
        # What the scrubber removed from this change's input, by kind (never the text).
        entry["redactions"] = redactions
    store.put(shards.shard_of(BASE, seq), entry["id"], entry)
    return entry


def last_seq(store: Store) -> int:
    """The sequence number of the newest entry (0 for an empty log)."""
    names = shards.shard_names(store, BASE)
    if not names:
        return 0
    # The log is append-only and numbered without gaps, so the newest number
    # follows from the shard count and the last shard's size.
    return (len(names) - 1) * shards.SIZES[BASE] + len(store.docs(names[-1]))


def entries(store: Store, *, newest_first: bool = True) -> Iterator[dict[str, Any]]:
    """The audit log (call inside ``store.reading()``)."""
    return shards.iter_docs(store, BASE, newest_first=newest_first)
