"""``memwork export``: the whole store as one JSON document, by logical table."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from ...base.clock import iso
from ...privacy.fields import scrub_doc
from ...storage import schema
from ...storage.store import Store
from ...storage.tables import (
    DERIVED_TABLES,
    INTERNAL_TABLES,
    LOCAL_TABLES,
    USER_TABLES,
    logical_name,
)

FORMAT = "memwork-export"
ORDER_KEYS = {"episodes": "index", "audit": "seq", "observations": "seq"}
# Per-session tables read best grouped by session, then in order.
GROUP_FIRST = {"observations", "working_memory"}


def _sortable(value: Any) -> tuple[int, Any]:
    """``value`` as a sort key that never meets another type: an export keeps a record of
    the wrong type (a ``seq`` of ``"x"`` typed by hand), after the sound ones."""
    if type(value) in (int, float):
        return (0, value)
    return (1, str(value))


def _order(key: str | None, *, grouped: bool) -> Callable[[dict[str, Any]], tuple[Any, ...]]:
    """A table's export order: by ``key`` (when it has one) then id, per session if ``grouped``."""

    def field(d: dict[str, Any], name: str) -> tuple[int, Any]:
        return _sortable(d.get(name, 0))

    if grouped:
        return lambda d: (
            _sortable(d.get("session_id")),
            field(d, key or ""),
            _sortable(d.get("id")),
        )
    return lambda d: (field(d, key or ""), _sortable(d.get("id")))


def export_store(store: Store, *, now: datetime) -> dict[str, Any]:
    """Every record of every table; import of this document restores the store.

    An operator's tool: while agents are isolated an agent's door is refused
    (:func:`core.ledger.isolation.check_operator`), a caller with the curator key is not.
    """
    from ...ledger.isolation import check_operator

    with store.reading():
        check_operator(store, "export")
        grouped: dict[str, list[dict[str, Any]]] = {
            t: [] for t in (*USER_TABLES, *INTERNAL_TABLES) if t not in LOCAL_TABLES
        }
        kept_out = {*LOCAL_TABLES, *DERIVED_TABLES}  # store-local, or rebuilt by an import
        for name in store.table_names():
            if logical_name(name) not in kept_out:
                grouped.setdefault(logical_name(name), []).extend(store.docs(name).values())
        # Who may decide for this store (core/ledger/curator.py) stays with it.
        grouped["meta"] = [d for d in grouped.get("meta", []) if d.get("id") != "curator"]
    for table, docs in grouped.items():
        if table == "links":
            from ...ledger.links import order

            docs.sort(key=order)  # in the order they were made (their ids are digests)
            continue
        docs.sort(key=_order(ORDER_KEYS.get(table), grouped=table in GROUP_FIRST))
    return {
        "exported_at": iso(now),
        "format": FORMAT,
        "schema_version": schema.RECORDS_VERSION,
        # Scrubbed again on the way out (identifiers are kept; slots keep personal details).
        "tables": {t: [scrub_doc(t, d) for d in docs] for t, docs in grouped.items()},
    }
