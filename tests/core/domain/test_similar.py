"""Curation's pairwise comparisons, found without comparing every pair: the same pairs
as comparing every pair (core/domain/similar.py, core/domain/contradictions.py,
core/domain/lessons.py)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from rapidfuzz import fuzz

from memwork.core.base.clock import iso
from memwork.core.base.text import normalise
from memwork.core.domain import contradictions, lessons, similar
from memwork.core.domain.similar import near_pairs
from tests.core.domain.test_contradictions import CASES

NOW = datetime(2026, 11, 20, 12, 0, 0).astimezone()
SCOPES = ("global", "global", "task:deploy", "task:fetch", "project:web", "project:api")
OPENERS = ("", "Always ", "Never ", "Do not ", "Avoid ", "Don't ", "You must ", "Stop ")
ENDS = (
    "",
    " before deploying",
    " after merging",
    " on Fridays",
    " in tests",
    ", not on auth errors",
)


def _texts(seed: int, n: int) -> list[str]:
    """Lesson texts built from the contradiction cases: their wordings, negated and
    affirmed, refined, reordered, with plurals and typos, so that many pairs are near
    duplicates, negations or orderings of one another."""
    rng = random.Random(seed)
    bodies = [
        normalise(text).removeprefix("always ").removeprefix("never ")
        for c in CASES
        for text in (c[0], c[2])
    ]
    out = []
    for _ in range(n):
        body = rng.choice(bodies)
        words = body.split()
        if rng.random() < 0.3 and len(words) > 2:  # a typo or a plural
            k = rng.randrange(len(words))
            words[k] = words[k] + "s" if rng.random() < 0.5 else words[k][:-1]
        if rng.random() < 0.2:
            words = words[::-1] if rng.random() < 0.3 else [*words, rng.choice(words)]
        out.append(f"{rng.choice(OPENERS)}{' '.join(words)}{rng.choice(ENDS)}".strip())
    return out


def _lessons(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed + 1)
    return [
        {
            "id": f"les_{i:04d}",
            "content": text,
            "scope": rng.choice(SCOPES),
            "confidence": 0.7,
            "created_at": iso(NOW - timedelta(minutes=n - i)),
            "updated_at": iso(NOW - timedelta(minutes=n - i)),
            "decay_rate": 0.0,
            "reinforcements": 0,
            "last_reinforced_at": iso(NOW - timedelta(minutes=n - i)),
        }
        for i, text in enumerate(_texts(seed, n))
    ]


def test_near_pairs_are_every_pair_as_similar_as_near_duplicates() -> None:
    texts = [normalise(t) for t in _texts(3, 700)]  # more than one block of rows
    every = [
        (i, j)
        for i in range(len(texts))
        for j in range(i + 1, len(texts))
        if fuzz.token_set_ratio(texts[i], texts[j]) >= 90
    ]
    assert len(every) > 1000
    assert near_pairs(texts, 90) == every
    # Few texts are compared one by one (no numpy): the same pairs.
    assert near_pairs(texts[:120], 90) == [(i, j) for i, j in every if j < 120]
    others = texts[:150]
    across = [
        (i, j)
        for i in range(len(texts))
        for j in range(len(others))
        if fuzz.token_set_ratio(texts[i], others[j]) >= 90
    ]
    assert sorted(near_pairs(texts, 90, others)) == across
    assert near_pairs(texts[:100], 90, others) == [(i, j) for i, j in across if i < 100]


def _every_contradicting_pair(docs: list[dict]) -> list[tuple[str, str]]:
    """Every pair compared, as lint compared them before (one that negates something,
    a content word shared, scopes that meet)."""
    live = contradictions._live(docs, NOW)
    parsed = [contradictions._Parsed(x) for x in live]
    found = []
    for i, a in enumerate(parsed):
        for b in parsed[i + 1 :]:
            if (
                (a.negates or b.negates)
                and a.words & b.words
                and contradictions.scopes_meet(a.doc["scope"], b.doc["scope"])
                and contradictions._contradict(a, b)
            ):
                found.append((a.doc["id"], b.doc["id"]))
    return found


def test_contradicting_pairs_are_those_comparing_every_pair_finds() -> None:
    for seed in (1, 2):
        docs = _lessons(seed, 400)
        expected = _every_contradicting_pair(docs)
        assert len(expected) > 100
        found = contradictions.lesson_pairs(docs, NOW)
        assert [(a["id"], b["id"]) for a, b in found] == expected


def test_near_duplicate_groups_are_those_comparing_every_pair_finds() -> None:
    docs = _lessons(5, 400)
    live = [x for x in docs if lessons.is_live(x, NOW)]
    parent = {x["id"]: x["id"] for x in live}

    def find(key: str) -> str:
        while parent[key] != key:
            key = parent[key]
        return key

    for i, a in enumerate(live):
        for b in live[i + 1 :]:
            if (
                a["scope"] == b["scope"]
                and fuzz.token_set_ratio(normalise(a["content"]), normalise(b["content"])) >= 90
                and not contradictions.texts_contradict(a["content"], b["content"])
            ):
                parent[find(a["id"])] = find(b["id"])
    groups: dict[str, set[str]] = {}
    for x in live:
        groups.setdefault(find(x["id"]), set()).add(x["id"])
    expected = sorted(sorted(g) for g in groups.values() if len(g) > 1)
    assert len(expected) > 10
    found = lessons.near_duplicate_clusters(docs, NOW)
    assert sorted(sorted(x["id"] for x in g) for g in found) == expected


def test_the_same_lessons_are_compared_once_and_a_changed_one_again(monkeypatch) -> None:
    # The workbench asks for the pairs from its header and two panes, and again after
    # every write an agent makes; only a change to the lessons makes them differ.
    docs = _lessons(7, 120)
    calls: list[int] = []
    real = similar.near_pairs

    def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(similar, "near_pairs", counted)
    first = contradictions.lesson_pairs(docs, NOW)
    groups = lessons.near_duplicate_clusters(docs, NOW)
    asked = len(calls)
    again = [dict(x) for x in docs]  # read again: equal records, other objects
    assert contradictions.lesson_pairs(again, NOW) == first
    assert lessons.near_duplicate_clusters(again, NOW) == groups
    assert len(calls) == asked
    again[0]["content"] = "Never " + again[0]["content"]
    changed = contradictions.lesson_pairs(again, NOW)
    assert len(calls) > asked
    assert changed == _pairs_of(again)


def _pairs_of(docs: list[dict]) -> list[tuple[dict, dict]]:
    ids = dict((x["id"], x) for x in docs)
    return [(ids[a], ids[b]) for a, b in _every_contradicting_pair(docs)]
