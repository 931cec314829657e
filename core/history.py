"""Reading the audit log: newest first, filtered by table, record and actor.

The log is append-only and sharded by sequence number, so the newest entries
sit in the last shard: a query walks the shards from the newest and stops as
soon as it has ``limit`` matches, reading one shard for a plain "what happened
last" and the whole log only for a filter that matches little.
"""

from __future__ import annotations

from typing import Any

from core import audit, shards
from core.errors import InvalidInput
from core.storage.store import Store

DEFAULT_LIMIT = 50


def _actor_matches(actor: str, wanted: str) -> bool:
    # "cli" names every CLI entry, with or without an agent id ("cli:agent-7").
    return actor == wanted or actor.startswith(wanted + ":")


def _record_matches(record_id: str, wanted: str) -> bool:
    # Ids are typed by hand: the whole id, its start or its random tail all work.
    return record_id == wanted or record_id.startswith(wanted) or record_id.endswith(wanted)


def _table_matches(table: str, wanted: str) -> bool:
    # Per-session tables are logged under their logical name; a physical name works too.
    return table == wanted or table == wanted.split(".", 1)[0]


def query(
    store: Store,
    *,
    table: str | None = None,
    record: str | None = None,
    actor: str | None = None,
    limit: int | None = DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """Audit entries newest first that match every filter given (at most ``limit``).

    ``table`` is the table an entry names (``lessons``, ``episodes``, ...);
    ``record`` a record id, its prefix or its tail; ``actor`` an actor kind
    (``cli`` also matches ``cli:<agent>``) or a full actor. ``None`` means no
    limit.
    """
    if limit is not None and limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {limit})")
    wanted = [
        (key, value.strip(), test)
        for key, value, test in (
            ("table", table, _table_matches),
            ("record_id", record, _record_matches),
            ("actor", actor, _actor_matches),
        )
        if value is not None and value.strip()
    ]
    found: list[dict[str, Any]] = []
    with store.reading():
        for name in reversed(shards.shard_names(store, audit.BASE)):
            entries = sorted(store.docs(name).values(), key=_seq, reverse=True)
            for entry in entries:
                if all(test(str(entry.get(key, "")), value) for key, value, test in wanted):
                    found.append(dict(entry))
                    if limit is not None and len(found) >= limit:
                        return found
    return found


def _seq(entry: dict[str, Any]) -> int:
    return int(entry["seq"])
