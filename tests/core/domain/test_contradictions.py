"""Contradicting memory is flagged: in lint, on both lessons' detail, in the review queue.

Described in core/domain/contradictions.py. Each case stores two live lessons (the second
kept beside the first, never merged into it) and checks whether the pair is
flagged, from both sides.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memwork.core.domain import contradictions, lessons, rules
from memwork.core.ledger import config
from memwork.core.services import lint, review
from memwork.core.storage.store import Store

ACTOR = "tui"

#: (first lesson, its scope, second lesson, its scope, flagged?)
CASES = [
    # Negations of each other, in scopes that reach the same context: flagged.
    (
        "Always run the unit tests before deploying",
        "global",
        "Never run the unit tests before deploying",
        "global",
        True,
    ),
    ("Use sudo in build scripts", "global", "Do not use sudo in build scripts", "global", True),
    ("Retry on timeout", "task:fetch", "Don't retry on timeout", "task:fetch", True),
    ("Log request bodies", "global", "Never log request bodies", "global", True),
    (
        "Use global state in request handlers",
        "global",
        "Avoid global state in request handlers",
        "global",
        True,
    ),
    (
        "Cache API responses in tests",
        "global",
        "Do not cache API responses in tests",
        "global",
        True,
    ),
    (
        "You must push to main on Fridays",
        "project:web",
        "You must not push to main on Fridays",
        "project:web",
        True,
    ),
    ("The cache is thread-safe", "global", "The cache isn\u2019t thread-safe", "global", True),
    ("Keep retrying failed uploads", "global", "Stop retrying failed uploads", "global", True),
    # Short texts, where the markers weigh so much that the words are under 90 similar.
    ("Always pin dependency versions", "global", "Never pin dependency versions", "global", True),
    ("Never force-push to main", "global", "Force-push to main when CI is red", "global", True),
    # A global lesson reaches every task's context, a task's meets a project's.
    ("Pin the image digest", "global", "Never pin the image digest", "task:deploy", True),
    (
        "Squash commits before merging",
        "task:review",
        "Don't squash commits before merging",
        "project:web",
        True,
    ),
    # Same sense (paraphrases, both positive or both negative): never flagged.
    ("Never commit secrets to git", "global", "Do not commit secrets to git", "global", False),
    ("Avoid sudo in build scripts", "global", "Never use sudo in build scripts", "global", False),
    (
        "Never deploy without running the tests",
        "global",
        "Always run the tests before deploying",
        "global",
        False,
    ),
    (
        "Stop the server before migrating",
        "global",
        "Stop the server before migrating the database",
        "global",
        False,
    ),
    ("Not only lint but also test", "global", "Lint and also test", "global", False),
    (
        "Run as non-root in containers",
        "global",
        "Run as non-root in the containers",
        "global",
        False,
    ),
    # A refinement is not a negation.
    ("Retry on timeout", "global", "Retry on timeout, not on auth errors", "global", False),
    # Unrelated lessons, whatever their polarity.
    ("Always write a failing test first", "global", "Never deploy on Fridays", "global", False),
    # Scopes that never meet in one context.
    ("Retry on timeout", "task:fetch", "Don't retry on timeout", "task:upload", False),
    ("Use tabs", "project:web", "Never use tabs", "project:api", False),
]


def _pair(store: Store, now: datetime, case: tuple) -> tuple[dict, dict]:
    first_text, first_scope, second_text, second_scope, _ = case
    first = lessons.add_lesson(store, first_text, scope=first_scope, now=now, actor=ACTOR)
    second = lessons.add_lesson(
        store, second_text, scope=second_scope, on_duplicate="keep-both", now=now, actor=ACTOR
    )
    assert second.action in ("created", "kept-both"), "both lessons must be stored"
    return first.lesson, second.lesson


def test_the_table_has_twenty_pairs_both_ways() -> None:
    assert len(CASES) >= 20
    assert {flagged for *_, flagged in CASES} == {True, False}


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0][:24]}|{c[2][:24]}" for c in CASES])
def test_pair_is_flagged_in_lint_and_on_both_lessons(store: Store, now: datetime, case) -> None:
    first, second = _pair(store, now, case)
    flagged = case[-1]
    found = [f for f in lint.lint(store, now) if f["kind"] == "contradiction"]
    assert (
        found
        == [
            {
                "kind": "contradiction",
                "records": [first["id"], second["id"]],
                "message": found[0]["message"] if found else "",
            }
        ]
    ) is flagged
    if flagged:
        assert f"{first['id']}" in found[0]["message"] and "contradicts" in found[0]["message"]
    # The detail of each lesson names the other (and only when flagged).
    assert lessons.get_lesson(store, first["id"], now)["contradicts"] == (
        [second["id"]] if flagged else []
    )
    assert lessons.get_lesson(store, second["id"], now)["contradicts"] == (
        [first["id"]] if flagged else []
    )


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0][:24]}|{c[2][:24]}" for c in CASES])
def test_a_proposal_is_flagged_as_contradicting_the_live_lesson(
    store: Store, now: datetime, case
) -> None:
    first_text, first_scope, second_text, second_scope, flagged = case
    live = lessons.add_lesson(store, first_text, scope=first_scope, now=now, actor=ACTOR).lesson
    config.set_value(store, "review", "on", now=now, actor=ACTOR)
    proposed = review.submit_lesson(
        store, second_text, scope=second_scope, on_duplicate="keep-both", now=now, actor="cli"
    ).proposal
    assert proposed is not None
    listed = review.list_proposals(store, now)[0]
    assert listed["contradicts"] == ([live["id"]] if flagged else [])
    assert (f"contradicts {live['id']}" in listed["flags"]) is flagged


def test_forgotten_and_superseded_lessons_contradict_nothing(store: Store, now: datetime) -> None:
    always = lessons.add_lesson(store, "Always pin dependency versions", now=now, actor=ACTOR)
    never = lessons.add_lesson(store, "Never pin dependency versions", now=now, actor=ACTOR)
    assert len(contradictions.lesson_pairs(lessons.all_lessons(store), now)) == 1
    lessons.forget(store, never.lesson["id"], now=now, actor=ACTOR)
    assert contradictions.lesson_pairs(lessons.all_lessons(store), now) == []
    assert lessons.get_lesson(store, always.lesson["id"], now)["contradicts"] == []
    lessons.restore(store, never.lesson["id"], now=now, actor=ACTOR)
    assert len(contradictions.lesson_pairs(lessons.all_lessons(store), now)) == 1
    # Superseded by a rewording that agrees: the contradiction is gone.
    lessons.add_lesson(
        store, "Never pin the dependency versions", on_duplicate="supersede", now=now, actor=ACTOR
    )
    pairs = contradictions.lesson_pairs(lessons.all_lessons(store), now)
    assert [(a["content"], b["content"]) for a, b in pairs] == [
        ("Always pin dependency versions", "Never pin the dependency versions")
    ]


def test_a_lesson_that_decayed_away_contradicts_nothing(store: Store, now: datetime) -> None:
    lessons.add_lesson(store, "Always pin dependency versions", now=now, actor=ACTOR)
    lessons.add_lesson(store, "Never pin dependency versions", confidence=0.3, now=now, actor=ACTOR)
    later = now + timedelta(weeks=5)  # 0.3 - 5 x 0.05 = 0.05: forgotten by decay
    assert len(contradictions.lesson_pairs(lessons.all_lessons(store), now)) == 1
    assert contradictions.lesson_pairs(lessons.all_lessons(store), later) == []


#: (rule text, rule scope, lesson, lesson scope, flagged?)
AVOID_CASES = [
    (
        "[AVOID] Skipped the canary stage",
        "task:deploy",
        "Skip the canary stage for hotfixes",
        "task:deploy",
        True,
    ),
    ("[AVOID] Skipped the canary stage", "task:deploy", "Skip the canary stage", "global", True),
    (
        "[AVOID] Silenced the alert without a ticket",
        "task:triage",
        "Silence noisy alerts without a ticket",
        "task:triage",
        True,
    ),
    # Irregular past tenses: the rule reports what was done, the lesson says to do it.
    (
        "[AVOID] Ran the migration without a backup",
        "task:migrate",
        "Run the migration without a backup when it is small",
        "task:migrate",
        True,
    ),
    ("[AVOID] Forgot the image tag", "global", "Forget the image tag on hotfixes", "global", True),
    (
        "[AVOID] Ran the migration without a backup",
        "task:migrate",
        "Never run the migration without a backup",
        "task:migrate",
        False,
    ),
    (
        "[AVOID] Skipped the canary stage",
        "task:deploy",
        "Never skip the canary stage",
        "task:deploy",
        False,
    ),
    (
        "[AVOID] Skipped the canary stage",
        "task:deploy",
        "Skip the canary stage for hotfixes",
        "task:triage",
        False,
    ),
    (
        "[AVOID] Skipped the canary stage",
        "task:deploy",
        "Run the smoke tests after deploying",
        "task:deploy",
        False,
    ),
    (
        "[WORKS] Skipped the canary stage",
        "task:deploy",
        "Skip the canary stage for hotfixes",
        "task:deploy",
        False,
    ),
]


@pytest.mark.parametrize("case", AVOID_CASES, ids=[f"{c[0][:20]}|{c[2][:24]}" for c in AVOID_CASES])
def test_avoid_rule_contradicted_by_a_lesson(store: Store, now: datetime, case) -> None:
    rule_text, rule_scope, lesson_text, lesson_scope, flagged = case
    rule, _ = rules.add_rule(store, rule_text, scope=rule_scope, now=now, actor=ACTOR)
    lesson = lessons.add_lesson(store, lesson_text, scope=lesson_scope, now=now, actor=ACTOR)
    found = [f for f in lint.lint(store, now) if f["kind"] == "avoid_contradicts_lesson"]
    assert [f["records"] for f in found] == ([[rule["id"], lesson.lesson["id"]]] if flagged else [])
    if flagged:
        # Switched off, the rule no longer reaches the agent: nothing to flag.
        rules.set_active(store, rule["id"], False, now=now, actor=ACTOR)
        assert not [f for f in lint.lint(store, now) if f["kind"] == "avoid_contradicts_lesson"]


def test_only_pairs_with_a_negation_are_compared(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lint and the workbench's header run this over every live lesson: fifty positive
    # lessons about the same things need no comparison among themselves.
    for i in range(50):
        lessons.add_lesson(
            store,
            f"Pin the image digest in deploy {i}",
            on_duplicate="keep-both",
            now=now,
            actor=ACTOR,
        )
    never = lessons.add_lesson(
        store,
        "Never pin the image digest in deploy 7",
        on_duplicate="keep-both",
        now=now,
        actor=ACTOR,
    ).lesson
    compared: list[tuple[str, str]] = []
    real = contradictions._contradict

    def counting(a, b):  # noqa: ANN001, ANN202
        compared.append((a.text, b.text))
        return real(a, b)

    monkeypatch.setattr(contradictions, "_contradict", counting)
    with store.reading():
        docs = list(store.docs("lessons").values())
    pairs = contradictions.lesson_pairs(docs, now)
    assert [b["id"] for _, b in pairs] == [never["id"]] * len(pairs) and pairs
    assert "Pin the image digest in deploy 7" in {a["content"] for a, _ in pairs}
    assert len(compared) <= 50 and all(never["content"] in pair for pair in compared)
