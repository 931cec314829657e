"""Which model each table's records are: what an import and the doctor check them by."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from .action import Action
from .aggregates import (
    Counters,
    DistinctText,
    GlobalAggregate,
    MetaRecord,
    TaskStats,
)
from .audit import AuditEntry
from .card import MistakeCard
from .crash import Crash
from .episode import Episode
from .lesson import Lesson
from .link import Link
from .profile import Profile
from .proposal import Proposal, StoreConfig
from .rule import Rule
from .session import Observation, Session
from .slot import Slot
from .working_memory import WMCheckpoint, WMScope, WMState

#: The model of each table whose records all share one (``meta`` and ``working_memory``
#: hold several: :func:`model_for` tells them apart).
MODELS: dict[str, type[BaseModel]] = {
    "distinct": DistinctText,
    "task_stats": TaskStats,
    "crashes": Crash,
    "episodes": Episode,
    "mistake_cards": MistakeCard,
    "rules": Rule,
    "lessons": Lesson,
    "slots": Slot,
    "proposals": Proposal,
    "sessions": Session,
    "observations": Observation,
    "audit": AuditEntry,
    "links": Link,
    "actions": Action,
    "profiles": Profile,
    "wm_scopes": WMScope,
}


def model_for(table: str, doc: dict[str, Any]) -> type[BaseModel] | None:
    """The model a record of ``table`` is checked by; None for a store-local table
    (checkpoints, imports) that has none."""
    if table == "working_memory":
        return WMCheckpoint if doc.get("kind") == "checkpoint" else WMState
    if table == "meta":
        # Keyed by object: the id is whatever the file holds (check_doc vetted its shape).
        meta: dict[object, type[BaseModel]] = {
            "episodes": GlobalAggregate,
            "counters": Counters,
            "config": StoreConfig,
        }
        return meta.get(doc.get("id"), MetaRecord)
    return MODELS.get(table)
