"""Distinct mistakes and successes over all episodes, in first-seen order.

Stored in hash buckets (``distinct.<xx>``) so checking whether a text was
seen before reads one small table, whatever the size of history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from ..storage import counters
from ..storage.store import Store
from ..storage.tables import physical_name

if TYPE_CHECKING:  # _sha1 has no stubs; it has hashlib's sha1 interface
    from hashlib import sha1
else:
    try:  # CPython's own SHA-1: hashlib would load OpenSSL (~2 ms) on every recorded episode
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - other Pythons
        from hashlib import sha1

Kind = Literal["mistake", "success"]
LOGICAL = "distinct"


def doc_id(kind: Kind, text: str) -> str:
    """``m3fa9…`` / ``s09b1…``: kind letter, then the text's hash (the bucket is id[:2])."""
    digest = sha1(text.encode("utf-8")).hexdigest()[:20]
    return f"{kind[0]}{digest}"


def note_texts(
    store: Store, kind: Kind, texts: list[str], *, episode_index: int, recorded_at: str
) -> list[str]:
    """Record texts not seen before; return the new ones in order."""
    fresh = []
    for text in texts:
        if not text:
            continue
        key = doc_id(kind, text)
        table = physical_name(LOGICAL, {"id": key})
        if key in store.docs(table):
            continue
        doc: dict[str, Any] = {
            "first_seen_episode": episode_index,
            "first_seen_at": recorded_at,
            "id": key,
            "kind": kind,
            "seq": counters.take(store, f"distinct_{kind}"),
            "text": text,
        }
        store.put(table, key, doc)
        fresh.append(text)
    return fresh


def all_texts(store: Store, kind: Kind) -> list[str]:
    """Every distinct text of ``kind`` in first-seen order (reads every bucket)."""
    docs = [
        d
        for name in store.table_names(LOGICAL)
        for d in store.docs(name).values()
        if d["kind"] == kind
    ]
    return [d["text"] for d in sorted(docs, key=lambda d: d["seq"])]
