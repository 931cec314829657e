"""Logical tables and the physical table files that hold them.

Append-heavy or per-session data is split over several physical tables
(``episodes.000003``, ``observations.<session>``); everything above storage
talks about logical tables and lets this module place documents.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..base import names
from . import shards

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(value: str) -> str:
    """A file-name-safe, readable and unique form of a scope or task id."""
    readable = _UNSAFE.sub("_", value).strip("_")[:40] or "x"
    if readable == value:
        return value
    import hashlib

    return f"{readable}-{hashlib.sha1(value.encode('utf-8')).hexdigest()[:8]}"


#: Tables with a fixed name.
SINGLE = (
    "sessions",
    "lessons",
    "mistake_cards",
    "slots",
    "checkpoints",
    "imports",
    "meta",
    "proposals",
    "actions",
    "profiles",
    "crashes",
    "wm_scopes",
    "agent_tokens",
)


_SCOPE_SLUGS: dict[str, str] = {}


def rule_scope_slug(scope: str) -> str:
    """How a rule scope appears in table names: ``task:deploy`` → ``task.deploy``."""
    scoped = _SCOPE_SLUGS.get(scope)
    if scoped is None:  # recording asks for the same few scopes thousands of times
        scoped = _SCOPE_SLUGS[scope] = slug(scope.replace(":", ".", 1))
    return scoped


def rule_table(scope: str) -> str:
    """``rules.<scope>``: the active rules of a scope (inactive: core/domain/rule_archive.py)."""
    return f"rules.{rule_scope_slug(scope)}"


def _place_rule(doc: dict[str, Any]) -> str:
    if not doc.get("active", True):
        # Which archive chunk an inactive rule joins depends on the archive's state.
        raise ValueError(
            "an inactive rule is placed by core.domain.rule_archive, not by its fields"
        )
    return rule_table(doc["scope"])


#: Logical table → where one of its documents lives.
PLACEMENT: dict[str, Callable[[dict[str, Any]], str]] = {
    "episodes": lambda d: shards.shard_of("episodes", int(d["index"])),
    "audit": lambda d: shards.shard_of("audit", int(d["seq"])),
    # A session id becomes part of a file name: it must pass the naming rule.
    "observations": lambda d: f"observations.{names.check_id(d['session_id'], 'session_id')}",
    "working_memory": lambda d: f"working_memory.{names.check_id(d['session_id'], 'session_id')}",
    "distinct": lambda d: f"distinct.{d['id'][:2]}",
    # One table per scope / task: deriving a rule or updating a task's numbers
    # reads and writes only that scope's or task's file. Inactive rules move to
    # the scope's archive (core/domain/rule_archive.py), so the active table (what the
    # context reads) stays at its 10 or 20 rules however many history has produced.
    "rules": _place_rule,
    "task_stats": lambda d: f"task_stats.{slug(d['task_id'])}",
    # A link lives beside the record it starts from (core/ledger/links.py).
    "links": lambda d: f"links.{d['home']}",
}

#: What users see as tables (internal bookkeeping last).
USER_TABLES = (
    "sessions",
    "observations",
    "working_memory",
    "wm_scopes",
    "episodes",
    "mistake_cards",
    "rules",
    "lessons",
    "slots",
    "proposals",
    "actions",
    "profiles",
    "links",
    "checkpoints",
    "audit",
)
INTERNAL_TABLES = ("distinct", "task_stats", "meta", "crashes")

#: Indexes kept in step with other tables' records: snapshotted with them, never
#: exported (an import rebuilds them as it writes the records).
DERIVED_TABLES = ("rule_index",)

#: Store-local: not exported (snapshots do not travel in a JSON document; agent tokens'
#: digests stay with the store that issued them).
LOCAL_TABLES = ("checkpoints", "imports", "agent_tokens")

#: Tables a store checkpoint snapshots and restores. The audit log is left out
#: on purpose: it records what happened, including restores, so it never rewinds.
SNAPSHOT_TABLES = tuple(
    t
    for t in (*USER_TABLES, *INTERNAL_TABLES, *DERIVED_TABLES)
    if t not in ("checkpoints", "audit")
)


def logical_name(physical: str) -> str:
    """``episodes.000003`` → ``episodes``."""
    return physical.split(".", 1)[0]


def physical_name(logical: str, doc: dict[str, Any]) -> str:
    """The physical table a document of ``logical`` belongs in."""
    place = PLACEMENT.get(logical)
    return place(doc) if place else logical


def physical_tables(names: list[str], logical: str) -> list[str]:
    """The physical tables among ``names`` that hold ``logical``."""
    return [n for n in names if logical_name(n) == logical]
