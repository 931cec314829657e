"""How a Redis store lays out its keys, and how documents are encoded in them.

Keys (``P`` is the prefix ``memwork:``): ``P..meta`` (hash: format, schema_version,
generation, txid), ``P..tables`` (hash: table → version), ``P..t:<table>`` (hash:
document id → compact JSON with sorted keys), ``P..lock`` (the lease),
``P..snaps`` (set of checkpoint snapshot ids), ``P..snap:<id>`` (hash: table →
version) and ``P..snap:<id>:t:<table>`` (the table as it was).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..base.errors import StoreUnreadable
from .backend import Docs

PREFIX = "memwork:"
META = PREFIX + "meta"
TABLES = PREFIX + "tables"
LOCK = PREFIX + "lock"
SNAPS = PREFIX + "snaps"
#: Where a migration copies the store before it changes anything.
BACKUP_PREFIX = PREFIX + "backup:"
#: Where a restore keeps the tables it found damaged (never expiring, never deleted).
DAMAGED_PREFIX = PREFIX + "damaged:"
#: Big tables decode faster with orjson; small ones stay on the stdlib (no import).
ORJSON_FROM_BYTES = 128 * 1024
#: Redis keeps a session's working memory this long past its last key's expiry
#: before it reclaims it (client clocks drift from the server's).
EXPIRY_GRACE_S = 60


def table_key(name: str) -> str:
    """The hash that holds table ``name``."""
    return f"{PREFIX}t:{name}"


def snapshot_key(key: str, name: str | None = None) -> str:
    """The index of snapshot ``key`` (table → version), or the copy of one of its tables."""
    base = f"{PREFIX}snap:{key}"
    return base if name is None else f"{base}:t:{name}"


def encode(doc: dict[str, Any]) -> bytes:
    """One document as stored: compact JSON with sorted keys."""
    import orjson

    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


def decode_pairs(raw: list[bytes], where: str) -> tuple[Docs, dict[str, int]]:
    """An ``HGETALL`` reply as documents, with a digest of each document's bytes."""
    loads: Callable[[bytes], Any] = json.loads
    if sum(len(v) for v in raw[1::2]) >= ORJSON_FROM_BYTES:
        import orjson

        loads = orjson.loads
    docs: Docs = {}
    digests: dict[str, int] = {}
    # In id order, as a folder store's table file keeps them (a hash has no order of
    # its own): whatever iterates a table sees the same sequence on both backends.
    for i in sorted(range(0, len(raw), 2), key=raw.__getitem__):
        doc_id = raw[i].decode("utf-8")
        value = raw[i + 1]
        try:
            doc = loads(value)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise StoreUnreadable(
                f"document {doc_id[:60]!r} of {where} is not a JSON object; it was left untouched"
            )
        docs[doc_id] = doc
        digests[doc_id] = hash(value)
    return docs, digests


def wm_expiry_ms(docs: Docs) -> int:
    """When Redis may reclaim a session's working memory (unix ms; 0: never).

    Only a working memory that holds nothing but keys with a TTL (no task, no
    scratchpad, no checkpoint) goes away by itself, a grace period after its
    last key expires, and only when the writer runs on the real clock: under
    ``MEMWORK_NOW`` (a replay, a test) the store's own clock rule alone decides.
    """
    import os

    from ..base import clock

    if os.environ.get(clock.ENV_NOW) or set(docs) != {"state"}:
        return 0
    state = docs["state"]
    kv = state.get("kv") or {}
    if not kv or state.get("task") or state.get("scratchpad"):
        return 0
    stamps = [entry.get("expires_at") for entry in kv.values()]
    if not all(stamps):
        return 0
    latest = max(clock.parse_instant(s) for s in stamps)
    # The clock may be fixed (MEMWORK_NOW): turn the store's instant into the wall clock's.
    offset = clock.now() - datetime.now(UTC)
    return int(((latest - offset).timestamp() + EXPIRY_GRACE_S) * 1000)
