"""``memwork stats``: counts per table, per-task scores, the top mistake cards."""

from __future__ import annotations

from typing import Any

from . import aggregates, audit, cards, tables
from .storage.store import Store


def table_counts(store: Store) -> dict[str, int]:
    """Records per user-facing table, from aggregates where a table is sharded."""
    names = store.table_names()
    glob = aggregates.read_global(store)
    counts: dict[str, int] = {}
    for logical in tables.USER_TABLES:
        if logical == "episodes":
            counts[logical] = int(glob["stored_episodes"])
        elif logical == "audit":
            counts[logical] = audit.last_seq(store)
        elif logical == "working_memory":
            counts[logical] = len(tables.physical_tables(names, logical))
        else:
            counts[logical] = sum(
                len(store.docs(n)) for n in tables.physical_tables(names, logical)
            )
    return counts


def store_stats(store: Store, *, top: int = 3) -> dict[str, Any]:
    """The JSON document ``memwork stats`` prints."""
    with store.reading():
        return {
            "counts": table_counts(store),
            "tasks": {
                t["task_id"]: {
                    "episodes": t["episodes"],
                    "mean_score": round(t["mean_score"], 4),
                }
                for t in aggregates.all_tasks(store)
            },
            "top_mistake_cards": cards.top_cards(store, top),
            "total_episodes": int(aggregates.read_global(store)["total_episodes"]),
        }
