"""Sessions (one run of an agent) and the observations made inside them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from core.models.base import Identifier, Record
from core.models.limits import MAX_INT

MAX_OBSERVATIONS = 500


class Session(Record):
    """One run of an agent."""

    agent_id: Identifier = Field(default="", max_length=200)
    project: str = ""
    title: str = ""
    started_at: str
    ended_at: str | None = None
    status: Literal["active", "ended"] = "active"
    summary: str = ""
    observation_count: int = Field(default=0, ge=0, le=MAX_INT)
    dropped_observations: int = Field(default=0, ge=0, le=MAX_INT)
    max_observations: int = Field(default=MAX_OBSERVATIONS, ge=1, le=MAX_INT)


class Observation(Record):
    """Something an agent saw or did inside a session."""

    session_id: Identifier
    kind: str = Field(default="note", min_length=1, max_length=50)
    content: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    seq: int = Field(default=0, ge=0, le=MAX_INT)
    #: Logged after the session had ended (agents may flush late); kept, and marked.
    after_end: bool = False
