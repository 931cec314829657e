"""The audit log: every mutation appends one entry, in the same transaction."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ..base import ids
from ..base.clock import iso
from ..base.errors import InvalidInput
from ..privacy import current_tally, identifier_problem
from ..storage import shards
from ..storage.store import Store

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
    problem = identifier_problem(actor)
    if problem:  # MEMWORK_AGENT or an API caller's actor: stored as given, so checked
        raise InvalidInput("actor", problem)
    if seq is None:
        seq = last_seq(store) + 1

    tally = current_tally()
    redactions = tally.take_pending() if tally is not None else {}
    entry: dict[str, Any] = {
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
    """The sequence number of the newest entry (0 for an empty log).

    Costs a few dictionary lookups and the size of the newest shard, whatever the
    length of the log: it used to list (and sort) every table name of the store on
    every audit entry, which made bulk recording slow down linearly with history.
    """
    newest = newest_shard(store)
    if newest == 0:
        return 0
    # The log is append-only and numbered without gaps, so the newest number
    # follows from the newest shard's number and its size.
    return (newest - 1) * shards.SIZES[BASE] + len(store.docs(_shard(newest)))


def newest_shard(store: Store) -> int:
    """The number of the newest audit shard (0 when the log is empty).

    Shards ``1 … n`` all exist (the log never loses an entry), so the newest one is
    found by doubling and then bisecting on whether shard ``k`` exists: about
    ``2 log2(n)`` lookups, none of which reads a file.
    """
    # Most calls come from a process that just wrote: its last answer, checked with
    # two lookups, is usually still right.
    hint = _NEWEST.get(id(store), 0)
    if hint and store.has_table(_shard(hint)) and not store.has_table(_shard(hint + 1)):
        return hint
    if not store.has_table(_shard(1)):
        return 0
    low, high = 1, 2  # shard ``low`` exists; look for one that does not
    while store.has_table(_shard(high)):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if store.has_table(_shard(middle)):
            low = middle
        else:
            high = middle
    _NEWEST[id(store)] = low
    return low


#: The newest shard each store (by ``id``) had when last looked at: a hint, always checked.
_NEWEST: dict[int, int] = {}


def _shard(number: int) -> str:
    return shards.shard_of(BASE, (number - 1) * shards.SIZES[BASE] + 1)


def entries(store: Store, *, newest_first: bool = True) -> Iterator[dict[str, Any]]:
    """The audit log (call inside ``store.reading()``)."""
    return shards.iter_docs(store, BASE, newest_first=newest_first)
