"""Work items: actions an agent (or a person) plans, with dependencies.

Their rules are in core/domain/actions.py.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import Identifier, Record, Timestamp

ActionStatus = Literal["pending", "active", "blocked", "done", "cancelled"]
STATUSES: tuple[str, ...] = ("pending", "active", "blocked", "done", "cancelled")
#: Statuses an action can be worked on in (when every dependency is done).
WORKABLE = ("pending", "active")
#: Statuses that close an action.
CLOSED = ("done", "cancelled")
TITLE_MAX = 500
NOTE_MAX = 4000
PRIORITY_LIMIT = 1_000_000


class ActionNote(BaseModel):
    """A timestamped note on an action."""

    model_config = ConfigDict(extra="forbid")

    ts: Timestamp
    text: str = Field(min_length=1, max_length=NOTE_MAX)
    by: str = ""


class Action(Record):
    """One work item: what to do, how urgent, where it stands."""

    title: str = Field(min_length=1, max_length=TITLE_MAX)
    status: ActionStatus = "pending"
    priority: int = Field(default=0, ge=-PRIORITY_LIMIT, le=PRIORITY_LIMIT)
    session_id: Identifier = Field(default="", max_length=128)
    project: str = Field(default="", max_length=200)
    agent_id: Identifier = Field(default="", max_length=200)
    notes: list[ActionNote] = Field(default_factory=list)
    #: When it last became done or cancelled (cleared when it opens again).
    closed_at: Timestamp | None = None
