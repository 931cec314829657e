"""The shapes of memwork's own bookkeeping records, for imports.

An export carries the incremental aggregates (``meta``, ``task_stats``,
``distinct``) so history survives a round trip. They are read on every
``memwork context``, so an imported one of the wrong shape would break the
store later; the importer validates them with these models first. Fields the
code reads are typed; unknown fields are kept.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .base import Identifier, Timestamp
from .episode import Outcome
from .limits import MAX_INT

_Count = Field(default=0, ge=0, le=MAX_INT)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class CompactEpisode(_Open):
    """What the aggregates keep of one episode."""

    id: Identifier
    index: int = Field(ge=0, le=MAX_INT)
    outcome: Outcome
    recorded_at: Timestamp
    score: float = Field(ge=0.0, le=1.0)
    steps: int = Field(ge=0, le=MAX_INT)
    summary: str = ""
    task_id: Identifier


class FailureError(_Open):
    """One error line of a recent failure."""

    error_type: str
    message: str = ""


class RecentFailure(_Open):
    """A failed episode as the failure block reads it."""

    episode_id: Identifier
    errors: list[FailureError] = Field(default_factory=list)
    index: int = Field(ge=0, le=MAX_INT)
    recorded_at: Timestamp
    task_id: Identifier


class GlobalAggregate(_Open):
    """``meta/episodes``: totals and the recent episodes the context reads."""

    id: Literal["episodes"]
    distinct_mistakes: int = _Count
    distinct_successes: int = _Count
    last_consolidated_at: int = _Count
    recent: list[CompactEpisode] = Field(default_factory=list)
    recent_failures: list[RecentFailure] = Field(default_factory=list)
    recent_mistakes: list[str] = Field(default_factory=list)
    recent_successes: list[str] = Field(default_factory=list)
    stored_episodes: int = _Count
    total_episodes: int = _Count


class Counters(BaseModel):
    """``meta/counters``: named sequence counters."""

    model_config = ConfigDict(extra="allow")

    id: Literal["counters"]

    @model_validator(mode="after")
    def _whole_numbers(self) -> Counters:
        for name, value in (self.__pydantic_extra__ or {}).items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"counter {name} must be a whole number >= 0 (got {value!r})")
        return self


def _no_outcomes() -> dict[Outcome, int]:
    return {"failure": 0, "partial": 0, "success": 0}


class TaskStats(_Open):
    """``task_stats/<task>``: one task's count, scores and recent episodes."""

    id: Identifier
    task_id: Identifier
    episodes: int = _Count
    score_sum: float = Field(default=0.0, ge=0.0)
    mean_score: float = Field(default=0.0, ge=0.0, le=1.0)
    outcomes: dict[Outcome, int] = Field(default_factory=_no_outcomes)
    recent: list[CompactEpisode] = Field(default_factory=list)
    score_tail: list[float] = Field(default_factory=list)
    last_recorded_at: Timestamp | None = None
    history_scores: int = _Count


class DistinctText(_Open):
    """One distinct mistake or success, in first-seen order."""

    id: Identifier
    kind: Literal["mistake", "success"]
    text: str
    seq: int = Field(ge=0, le=MAX_INT)
    first_seen_episode: int = Field(ge=0, le=MAX_INT)
    first_seen_at: Timestamp


class MetaRecord(_Open):
    """Any other ``meta`` record (such as the demo's clock): an id and JSON values."""

    id: Identifier
