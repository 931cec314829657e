"""Lesson effect: the task's mean score before a lesson was written and after it.

A hand-worked store: task ``deploy`` scores 0.2 and 0.4 before the lesson
(mean 0.30 over 2), then 0.8, 0.9 and 1.0 after it (mean 0.90 over 3): the
effect is +0.60. Episodes of another task never count.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memwork.core.domain import effect, episodes, lessons
from memwork.core.storage.store import Store

ACTOR = "test"


def _record(store: Store, task: str, score: float, when: datetime) -> None:
    item = {"task_id": task, "score": score, "steps": 3, "summary": f"{task} {score}"}
    episodes.record_episodes(store, [item], now=when, actor=ACTOR)


def _hand_worked(store: Store, now: datetime) -> dict:
    for hour, score in enumerate([0.2, 0.4]):
        _record(store, "deploy", score, now + timedelta(hours=hour))
    _record(store, "triage", 1.0, now + timedelta(hours=2))
    lesson = lessons.add_lesson(
        store, "Canary every deploy", scope="task:deploy", now=now + timedelta(hours=3), actor=ACTOR
    ).lesson
    for hour, score in enumerate([0.8, 0.9, 1.0], start=4):
        _record(store, "deploy", score, now + timedelta(hours=hour))
    _record(store, "triage", 0.0, now + timedelta(hours=8))
    return lesson


EXPECTED = {
    "task": "deploy",
    "before": {"episodes": 2, "mean_score": 0.3},
    "after": {"episodes": 3, "mean_score": 0.9},
    "change": 0.6,
}


def test_effect_on_a_hand_worked_store(store: Store, now: datetime) -> None:
    lesson = _hand_worked(store, now)
    shown = lessons.get_lesson(store, lesson["id"], now + timedelta(hours=9))["effect"]
    assert shown == {**EXPECTED, "basis": "recorded"}


def test_a_lesson_without_a_base_is_compared_by_timestamps(store: Store, now: datetime) -> None:
    lesson = _hand_worked(store, now)
    # As if stored before effects existed (or imported): no base to subtract.
    with store.transaction():
        store.put(
            "lessons", lesson["id"], {**store.get("lessons", lesson["id"]), "effect_base": None}
        )
    shown = lessons.get_lesson(store, lesson["id"], now + timedelta(hours=9))["effect"]
    assert shown == {**EXPECTED, "basis": "timestamps"}


def test_nothing_to_compare_is_null(store: Store, now: datetime) -> None:
    general = lessons.add_lesson(store, "Be terse", now=now, actor=ACTOR).lesson
    first = lessons.add_lesson(store, "Read the runbook", scope="task:triage", now=now, actor=ACTOR)
    _record(store, "triage", 0.5, now + timedelta(hours=1))
    # Global: no task to measure. No episode before it: nothing to compare with.
    assert lessons.get_lesson(store, general["id"], now)["effect"] is None
    assert lessons.get_lesson(store, first.lesson["id"], now)["effect"] is None
    # Episodes before, none after yet: null too, until one is recorded.
    later = lessons.add_lesson(
        store,
        "Check recent deploys",
        scope="task:triage",
        now=now + timedelta(hours=2),
        actor=ACTOR,
    ).lesson
    assert lessons.get_lesson(store, later["id"], now)["effect"] is None
    _record(store, "triage", 0.9, now + timedelta(hours=3))
    assert lessons.get_lesson(store, later["id"], now)["effect"] == {
        "task": "triage",
        "before": {"episodes": 1, "mean_score": 0.5},
        "after": {"episodes": 1, "mean_score": 0.9},
        "change": 0.4,
        "basis": "recorded",
    }


def test_list_and_cli_show_carry_it(cli) -> None:  # noqa: ANN001
    import json

    def record(score: float, at: str) -> None:
        item = {"task_id": "deploy", "score": score, "steps": 1, "summary": "s"}
        assert cli("record-episode", stdin=json.dumps(item), now=at).code == 0

    record(0.2, "2026-11-01T10:00:00Z")
    record(0.4, "2026-11-01T11:00:00Z")
    lid = cli(
        "lesson", "add", "Canary every deploy", "--scope", "task:deploy", now="2026-11-01T12:00:00Z"
    ).out.strip()
    record(1.0, "2026-11-01T13:00:00Z")
    shown = cli("lesson", "show", lid, "--json").json()
    assert shown["effect"]["change"] == pytest.approx(0.7)
    [listed] = cli("lesson", "list", "--json").json()
    assert listed["effect"] == shown["effect"]
    text = cli("lesson", "show", lid).out
    assert "effect on deploy: +0.70 (mean 0.30 over 2 episodes before, 1.00 over 1 after)" in text


def test_effects_for_many_lessons_scan_once(store: Store, now: datetime) -> None:
    lesson = _hand_worked(store, now)
    other = lessons.add_lesson(store, "Be terse", now=now, actor=ACTOR).lesson
    found = effect.effects(store, [lesson, other])
    assert found == {lesson["id"]: {**EXPECTED, "basis": "recorded"}, other["id"]: None}
