"""Episodes: one attempt at a task, as an agent reports it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..base.numbers import shown_number
from .base import Identifier, Record
from .limits import MAX_INT
from .plain import FAILURE_BELOW, SUCCESS_AT, outcome_for
from .session import SessionId

Outcome = Literal["success", "failure", "partial"]
#: The most characters one text field of an episode holds. Agents put whole stack
#: traces in mistakes and errors: length alone never refuses an episode below this.
TEXT_MAX = 100_000
Text = Annotated[str, Field(max_length=TEXT_MAX)]

__all__ = ["FAILURE_BELOW", "SUCCESS_AT", "TEXT_MAX", "Episode", "EpisodeInput", "outcome_for"]


class ErrorEntry(BaseModel):
    """An error an episode ran into, and how it was resolved (if it was)."""

    model_config = ConfigDict(extra="forbid")

    error_type: str = Field(min_length=1, max_length=TEXT_MAX)
    message: Text = ""
    resolution: Text = ""


class MistakeCardInput(BaseModel):
    """A structured mistake as an agent reports it inside an episode."""

    model_config = ConfigDict(extra="forbid")

    mistake_type: Text = "unknown_mistake"
    task_id: Identifier | None = None
    worker_id: Identifier | None = None
    bad_decision: Text = ""
    correct_decision: Text = ""
    evidence: Text = ""
    lesson: Text | None = None

    @field_validator("mistake_type")
    @classmethod
    def _type_not_blank(cls, value: str) -> str:
        return value.strip() or "unknown_mistake"

    @field_validator("mistake_type", "bad_decision", "correct_decision", "evidence", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        # The merge key reads "correct_decision or ''": agents (and the episodic
        # library) send null for a field they do not know.
        return "" if value is None else value


def _text_list(value: Any) -> Any:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of strings")
    return value


class EpisodeInput(BaseModel):
    """What `record-episode` accepts; unknown keys are kept in ``metadata``."""

    model_config = ConfigDict(extra="allow")

    task_id: Identifier = Field(default="unknown", min_length=1, max_length=200)
    score: float
    steps: int = 0
    summary: Text = ""
    mistakes: list[Text] = Field(default_factory=list)
    successes: list[Text] = Field(default_factory=list)
    mistake_cards: list[MistakeCardInput] = Field(default_factory=list)
    errors: list[ErrorEntry] = Field(default_factory=list)
    outcome: Outcome | None = None
    session_id: SessionId | None = None
    worker_id: Identifier | None = Field(default=None, max_length=200)
    recorded_at: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        if isinstance(data, dict) and "trajectory_summary" in data:
            data = dict(data)
            alias = data.pop("trajectory_summary")
            if not data.get("summary"):
                data["summary"] = alias
        return data

    @field_validator("score", mode="before")
    @classmethod
    def _score_number(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number between 0.0 and 1.0 (got {value!r})")
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"must be between 0.0 and 1.0 (got {value!r})")
        return float(value)

    @field_validator("steps", mode="before")
    @classmethod
    def _steps_count(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ValueError(f"must be a whole number >= 0 (got {value!r})")
        if value < 0:
            raise ValueError(f"must be >= 0 (got {value})")
        if value > MAX_INT:
            raise ValueError(f"must be at most 2**53 ({MAX_INT}); got {shown_number(value)}")
        return value

    @field_validator("mistakes", "successes", mode="before")
    @classmethod
    def _lists(cls, value: Any) -> Any:
        return _text_list(value)

    @field_validator("mistakes", "successes")
    @classmethod
    def _no_blanks(cls, value: list[str]) -> list[str]:
        # Blank entries are dropped only after the length check, so an error names
        # the entry by its position in what the agent sent.
        return [v for v in value if v.strip()]

    @field_validator("task_id", mode="before")
    @classmethod
    def _task(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return "unknown"
        return value.strip() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _collect_extras(self) -> EpisodeInput:
        extra = self.__pydantic_extra__ or {}
        if extra:
            self.metadata = {**extra, **self.metadata}
            self.__pydantic_extra__ = {}
        return self


class Episode(Record):
    """A recorded episode with its position in the recording order."""

    index: int = Field(ge=1, le=MAX_INT)
    task_id: Identifier = Field(min_length=1, max_length=200)
    score: float = Field(ge=0.0, le=1.0)
    steps: int = Field(ge=0, le=MAX_INT)
    summary: str = ""
    mistakes: list[str] = Field(default_factory=list)
    successes: list[str] = Field(default_factory=list)
    mistake_cards: list[MistakeCardInput] = Field(default_factory=list)
    errors: list[ErrorEntry] = Field(default_factory=list)
    outcome: Outcome
    session_id: SessionId | None = None
    worker_id: Identifier | None = Field(default=None, max_length=200)
    metadata: dict[str, Any] = Field(default_factory=dict)
    card_ids: list[str] = Field(default_factory=list)
    #: The agent that recorded it (core/ledger/isolation.py); absent: a global episode.
    agent_id: Identifier = Field(default="", max_length=200)
