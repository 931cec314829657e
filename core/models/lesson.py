"""Lessons: distilled knowledge whose confidence decays unless reinforced."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from .base import Record, Timestamp, check_identifier
from .limits import MAX_INT

_LESSON_SCOPE = re.compile(r"^(global|task:.+|project:.+)$")
DEFAULT_CONFIDENCE = 0.5
DEFAULT_DECAY_RATE = 0.05


def check_lesson_scope(value: str) -> str:
    """A lesson's scope is ``global``, ``task:<id>`` or ``project:<id>``."""
    if not _LESSON_SCOPE.fullmatch(value):
        raise ValueError(f"must be 'global', 'task:<id>' or 'project:<id>' (got {value!r})")
    return check_identifier(value)


class Lesson(Record):
    """A lesson and the state its confidence is computed from."""

    content: str = Field(min_length=1, max_length=4000)
    fingerprint: str
    confidence: float = Field(default=DEFAULT_CONFIDENCE, ge=0.0, le=1.0)
    reinforcements: int = Field(default=0, ge=0, le=MAX_INT)
    scope: str = "global"
    tags: list[str] = Field(default_factory=list)
    source: str = "agent"
    decay_rate: float = Field(default=DEFAULT_DECAY_RATE, ge=0.0, le=1.0)
    last_reinforced_at: Timestamp
    pinned: bool = False
    deleted: bool = False
    wordings: list[str] = Field(default_factory=list)
    #: The task's running totals when a task-scoped lesson was created
    #: (``{"task", "episodes", "score_sum"}``): what its effect is measured against.
    effect_base: dict[str, Any] | None = None

    @field_validator("scope")
    @classmethod
    def _check_scope(cls, value: str) -> str:
        return check_lesson_scope(value)
