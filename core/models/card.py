"""Mistake cards: structured mistakes merged across episodes."""

from __future__ import annotations

from pydantic import Field

from .base import Identifier, Record
from .card_text import TEXT_CAP
from .limits import MAX_INT
from .plain import DEFAULT_LESSON

__all__ = ["DEFAULT_LESSON", "TEXT_CAP", "MistakeCard"]


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
    #: Merge keys of absorbed cards: later sightings under them count here.
    merged_keys: list[list[str]] = Field(default_factory=list)
    #: For ``evidence`` or ``lesson`` cut at 300 with an ellipsis: the character the
    #: ellipsis stands in for. The episodic layout shows the text as the episodic
    #: library cuts it (plainly, at 300), so it needs that character back.
    cut_chars: dict[str, str] = Field(default_factory=dict)
