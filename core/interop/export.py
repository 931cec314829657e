"""``memwork export``: the whole store as one JSON document, by logical table."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.clock import iso
from core.privacy import scrub
from core.storage import schema
from core.storage.store import Store
from core.tables import DERIVED_TABLES, INTERNAL_TABLES, LOCAL_TABLES, USER_TABLES, logical_name

FORMAT = "memwork-export"
ORDER_KEYS = {"episodes": "index", "audit": "seq", "observations": "seq"}
# Per-session tables read best grouped by session, then in order.
GROUP_FIRST = {"observations", "working_memory"}


# Identifiers, labels and hashes are the store's own keys, not agent text:
# scrubbing them could break a round trip (a slot labelled ``/home/alice``).
_KEEP = {"id", "label", "fingerprint", "scope", "session_id", "task_id", "record_id"}


def _scrub_any(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [_scrub_any(v) for v in value]
    if isinstance(value, dict):
        return _scrub_doc(value)
    return value


def _scrub_doc(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v if k in _KEEP or k.endswith(("_id", "_ids")) else _scrub_any(v) for k, v in doc.items()
    }


def export_store(store: Store, *, now: datetime) -> dict[str, Any]:
    """Every record of every table; import of this document restores the store."""
    with store.reading():
        grouped: dict[str, list[dict[str, Any]]] = {
            t: [] for t in (*USER_TABLES, *INTERNAL_TABLES) if t not in LOCAL_TABLES
        }
        kept_out = {*LOCAL_TABLES, *DERIVED_TABLES}  # store-local, or rebuilt by an import
        for name in store.table_names():
            if logical_name(name) not in kept_out:
                grouped.setdefault(logical_name(name), []).extend(store.docs(name).values())
    for table, docs in grouped.items():
        key = ORDER_KEYS.get(table)
        if table in GROUP_FIRST:
            docs.sort(key=lambda d, k=key: (d["session_id"], d[k] if k else 0, d["id"]))
        else:
            docs.sort(key=lambda d, k=key: (d[k] if k else 0, d["id"]))
    return {
        "exported_at": iso(now),
        "format": FORMAT,
        "schema_version": schema.SCHEMA_VERSION,
        "tables": {t: [_scrub_doc(d) for d in docs] for t, docs in grouped.items()},
    }
