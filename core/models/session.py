"""Sessions (one run of an agent) and the observations made inside them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from .base import Identifier, Record, Timestamp
from .limits import MAX_INT

MAX_OBSERVATIONS = 500


def check_session_id(value: str) -> str:
    """A session id names the session's tables (``observations.<id>``): the one naming
    rule of :func:`core.base.names.check_id` applies wherever it is stored."""
    from ..base.errors import InvalidInput
    from ..base.names import check_id

    try:
        return check_id(value, "session_id")
    except InvalidInput as exc:
        raise ValueError(exc.rule) from None


#: A session's id, wherever it is stored (it becomes part of table file names).
SessionId = Annotated[Identifier, AfterValidator(check_session_id)]


class Session(Record):
    """One run of an agent."""

    id: SessionId

    agent_id: Identifier = Field(default="", max_length=200)
    project: str = ""
    title: str = ""
    started_at: Timestamp
    ended_at: Timestamp | None = None
    status: Literal["active", "ended"] = "active"
    summary: str = ""
    observation_count: int = Field(default=0, ge=0, le=MAX_INT)
    dropped_observations: int = Field(default=0, ge=0, le=MAX_INT)
    max_observations: int = Field(default=MAX_OBSERVATIONS, ge=1, le=MAX_INT)
    #: Observations deleted for good (``observation delete``): counted, their words gone.
    forgotten_observations: int = Field(default=0, ge=0, le=MAX_INT)
    #: Created on first use of an id an agent named (``wm --session run-42 …``),
    #: not by ``session start``.
    implicit: bool = False


class Observation(Record):
    """Something an agent saw or did inside a session."""

    session_id: SessionId
    kind: str = Field(default="note", min_length=1, max_length=50)
    content: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    seq: int = Field(default=0, ge=0, le=MAX_INT)
    #: Logged after the session had ended (agents may flush late); kept, and marked.
    after_end: bool = False
