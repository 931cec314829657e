"""Lesson decay as the context ranks it: which lessons are live, and how confident."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memwork.core.base.clock import iso
from memwork.core.domain.decay import (
    FORGET_AT,
    effective_confidence,
    is_live,
    live_confidence,
)
from memwork.core.domain.ranking import SCOPE_WEIGHT, ranked_lessons

NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)


@st.composite
def _lesson(draw: st.DrawFn) -> dict:
    weeks = draw(st.integers(-2, 60))
    return {
        "id": f"les_{draw(st.integers(0, 10**6)):07d}",
        "content": "read the logs first",
        "scope": draw(st.sampled_from(["global", "task:deploy", "task:other", "project:p"])),
        "confidence": draw(st.sampled_from([0.1, 0.2, 0.35, 0.5, 0.9, 1.0])),
        "decay_rate": draw(st.sampled_from([0.0, 0.01, 0.05, 0.1])),
        "reinforcements": draw(st.integers(0, 2)),
        "pinned": draw(st.booleans()),
        "deleted": draw(st.booleans()),
        "superseded_by": draw(st.sampled_from([None, None, "les_newer"])),
        "last_reinforced_at": iso(NOW - timedelta(weeks=weeks, hours=1)),
        "created_at": iso(NOW - timedelta(weeks=70)),
    }


@given(lesson=_lesson())
def test_a_live_lessons_confidence_is_its_decayed_one_and_others_have_none(lesson: dict) -> None:
    found = live_confidence(lesson, NOW)
    if is_live(lesson, NOW):
        assert found == effective_confidence(lesson, NOW)
    else:
        assert found is None


def test_a_lesson_fades_out_of_the_ranking_once_decayed_to_the_threshold() -> None:
    base = {
        "content": "x",
        "scope": "global",
        "confidence": 0.5,
        "decay_rate": 0.1,
        "reinforcements": 0,
        "pinned": False,
        "deleted": False,
        "created_at": iso(NOW),
    }
    fresh = {**base, "id": "les_a", "last_reinforced_at": iso(NOW - timedelta(weeks=1))}
    faded = {**base, "id": "les_b", "last_reinforced_at": iso(NOW - timedelta(weeks=4))}
    kept = {**faded, "id": "les_c", "reinforcements": 1}  # reinforced once: never forgotten
    assert effective_confidence(faded, NOW) <= FORGET_AT
    ranked = ranked_lessons([fresh, faded, kept], None, NOW)
    assert [lesson["id"] for _, lesson in ranked] == ["les_a", "les_c"]
    weight = SCOPE_WEIGHT["global"]
    assert [score for score, _ in ranked] == [round(0.4 * weight, 6), round(0.1 * weight, 6)]
