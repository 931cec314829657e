"""Append-heavy tables are split into numbered shards of fixed size.

Recording one episode rewrites one shard of at most ``SIZE`` documents, so a
write costs the same at 100k episodes as at 1k. Shard ``n`` holds sequence
numbers ``(n - 1) * SIZE + 1 … n * SIZE``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .store import Store

SIZES = {"episodes": 500, "audit": 1000}
#: The field that orders documents inside a sharded table.
ORDER = {"episodes": "index", "audit": "seq"}


def shard_of(base: str, seq: int) -> str:
    """The shard table that holds sequence number ``seq`` of ``base``."""
    return f"{base}.{(seq - 1) // SIZES[base] + 1:06d}"


def shard_names(store: Store, base: str) -> list[str]:
    """Every shard of ``base``, oldest first."""
    return [n for n in store.table_names(base) if n != base]


def iter_docs(store: Store, base: str, *, newest_first: bool = False) -> Iterator[dict[str, Any]]:
    """Documents of every shard in sequence order."""
    names = shard_names(store, base)
    if newest_first:
        names.reverse()
    for name in names:
        key = ORDER[base]
        docs = sorted(store.docs(name).values(), key=lambda d: d[key], reverse=newest_first)
        yield from docs
