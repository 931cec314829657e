"""``memwork export``: the whole store as one JSON document, by logical table."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.clock import iso
from core.privacy import scrub_value
from core.storage import schema
from core.storage.store import Store
from core.tables import INTERNAL_TABLES, USER_TABLES, logical_name

FORMAT = "memwork-export"
ORDER_KEYS = {"episodes": "index", "audit": "seq", "observations": "seq"}


def export_store(store: Store, *, now: datetime) -> dict[str, Any]:
    """Every record of every table; import of this document restores the store."""
    with store.reading():
        grouped: dict[str, list[dict[str, Any]]] = {t: [] for t in (*USER_TABLES, *INTERNAL_TABLES)}
        for name in store.table_names():
            grouped.setdefault(logical_name(name), []).extend(store.docs(name).values())
    for table, docs in grouped.items():
        key = ORDER_KEYS.get(table)
        docs.sort(key=lambda d, k=key: (d[k] if k else 0, d.get("session_id") or "", d["id"]))
    return {
        "exported_at": iso(now),
        "format": FORMAT,
        "schema_version": schema.SCHEMA_VERSION,
        "tables": scrub_value(grouped),
    }
