"""Lesson confidence over time: pure functions of a lesson document and an instant.

Kept apart from ``core.domain.lessons`` (which validates and writes) so the context
export can rank lessons without importing pydantic or rapidfuzz.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base.clock import parse_instant

FORGET_AT = 0.1
REINFORCE_STEP = 0.1
SECONDS_PER_WEEK = 7 * 24 * 3600


def weeks_since(start: str, now: datetime) -> int:
    """Whole weeks from ``start`` to ``now`` (0 when ``start`` is in the future)."""
    seconds = (now - parse_instant(start)).total_seconds()
    return max(0, int(seconds // SECONDS_PER_WEEK))


def effective_confidence(lesson: dict[str, Any], now: datetime) -> float:
    """Confidence minus decay per whole week since the last reinforcement."""
    confidence = float(lesson["confidence"])
    if lesson.get("pinned"):
        return confidence
    decayed = confidence - float(lesson["decay_rate"]) * weeks_since(
        lesson["last_reinforced_at"], now
    )
    return max(0.0, round(decayed, 10))


def decayed_away(lesson: dict[str, Any], now: datetime) -> bool:
    """Never reinforced and faded to <= 0.1: forgotten by decay (restorable)."""
    return _may_fade(lesson) and effective_confidence(lesson, now) <= FORGET_AT


def _may_fade(lesson: dict[str, Any]) -> bool:
    """Whether decay can forget the lesson: never pinned, never reinforced."""
    return not lesson.get("pinned") and int(lesson.get("reinforcements", 0)) == 0


def is_forgotten(lesson: dict[str, Any], now: datetime) -> bool:
    """Forgotten by the user (``forget``) or by decay."""
    return bool(lesson.get("deleted")) or decayed_away(lesson, now)


def is_live(lesson: dict[str, Any], now: datetime) -> bool:
    """Shown by default and used in the context: not forgotten, not superseded."""
    return not is_forgotten(lesson, now) and not lesson.get("superseded_by")


def live_confidence(lesson: dict[str, Any], now: datetime) -> float | None:
    """The effective confidence of a live lesson (:func:`is_live`), None for any other:
    what ranking needs, its decay worked out once (a context ranks every lesson)."""
    if lesson.get("deleted") or lesson.get("superseded_by"):
        return None
    confidence = effective_confidence(lesson, now)
    return None if _may_fade(lesson) and confidence <= FORGET_AT else confidence


def reinforced_confidence(confidence: float) -> float:
    """One reinforcement closes a tenth of the gap to 1."""
    return round(confidence + REINFORCE_STEP * (1.0 - confidence), 10)


def state_of(lesson: dict[str, Any], now: datetime) -> str:
    """A one-word state for lists: pinned, live, fading, forgotten, deleted, superseded."""
    if lesson.get("superseded_by"):
        return "superseded"
    if lesson.get("deleted"):
        return "deleted"
    if decayed_away(lesson, now):
        return "forgotten"
    if lesson.get("pinned"):
        return "pinned"
    if effective_confidence(lesson, now) < float(lesson["confidence"]):
        return "fading"
    return "live"


def view(lesson: dict[str, Any], now: datetime) -> dict[str, Any]:
    """The record plus the computed fields the CLI and UI show."""
    return {
        **lesson,
        "effective_confidence": round(effective_confidence(lesson, now), 4),
        "forgotten": is_forgotten(lesson, now),
        "state": state_of(lesson, now),
    }
