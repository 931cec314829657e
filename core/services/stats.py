"""``memwork stats``: counts per table, per-task scores, the top mistake cards, and the
summary the episodic library gives (rule counts, mistake and card counts)."""

from __future__ import annotations

from typing import Any

from ..domain import aggregates, cards, readable, rule_archive
from ..ledger import audit
from ..storage import tables
from ..storage.store import Store


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


#: Mean scores are given to three decimals, as the episodic library's summary gives them.
MEAN_DECIMALS = 3


def active_rule_counts(store: Store) -> dict[str, int]:
    """Active rules per scope (the rules the library's files would hold), from the
    active tables only (the archive of inactive rules is never read)."""
    archived = rule_archive.ARCHIVE + "."
    counts: dict[str, int] = {}
    for name in store.table_names("rules"):
        if name.startswith(archived):
            continue
        for rule in readable.docs(store, name).values():
            if rule.get("active", True):
                counts[rule["scope"]] = counts.get(rule["scope"], 0) + 1
    return counts


def store_stats(store: Store, *, top: int = 5) -> dict[str, Any]:
    """The JSON document ``memwork stats`` prints.

    Besides counts per table and per-task scores: what the episodic library's summary
    gives — active rules (global and per task, ``rules``), distinct mistakes and
    successes, mistake cards, the top five cards, means to three decimals.
    """
    with store.reading():
        glob = aggregates.read_global(store)
        rules = active_rule_counts(store)
        task_rules = {
            scope.removeprefix("task:"): n
            for scope, n in sorted(rules.items())
            if scope.startswith("task:")
        }
        return {
            "counts": table_counts(store),
            "mistake_cards": len(readable.docs(store, cards.TABLE)),
            "mistakes": int(glob["distinct_mistakes"]),
            "rules": {"global": rules.get("global", 0), "tasks": task_rules},
            "successes": int(glob["distinct_successes"]),
            "tasks": {
                t["task_id"]: {
                    "episodes": t["episodes"],
                    "mean_score": round(t["mean_score"], MEAN_DECIMALS),
                    "rules": task_rules.get(t["task_id"], 0),
                }
                for t in aggregates.all_tasks(store)
            },
            "top_mistake_cards": cards.top_cards(store, top),
            "total_episodes": int(glob["total_episodes"]),
        }
