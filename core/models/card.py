"""Mistake cards: structured mistakes merged across episodes."""

from __future__ import annotations

from pydantic import Field

from core.models.base import Identifier, Record
from core.models.limits import MAX_INT

DEFAULT_LESSON = "Avoid repeating this failure."
TEXT_CAP = 300


class MistakeCard(Record):
    """One kind of mistake, counted every time an episode reports it again."""

    mistake_type: str = "unknown_mistake"
    task_id: Identifier
    worker_id: Identifier | None = None
    bad_decision: str = ""
    correct_decision: str = ""
    evidence: str = Field(default="", max_length=TEXT_CAP)
    lesson: str = Field(default=DEFAULT_LESSON, max_length=TEXT_CAP)
    seen_count: int = Field(default=1, ge=1, le=MAX_INT)
    first_seen_episode: int = Field(ge=0, le=MAX_INT)
    last_seen_episode: int = Field(ge=0, le=MAX_INT)
    merged_from: list[str] = Field(default_factory=list)
    #: Merge keys of absorbed cards: later sightings under them count here.
    merged_keys: list[list[str]] = Field(default_factory=list)
