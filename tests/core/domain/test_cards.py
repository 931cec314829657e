"""Mistake cards: normalisation, merge key, counts, ranking, curation.

Described in docs/MEMORY.md, Records.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.base.errors import Conflict, InvalidInput, NotFound
from memwork.core.domain import cards, episodes
from memwork.core.domain.ranking import ranked_cards
from memwork.core.ledger import audit
from memwork.core.models.card import DEFAULT_LESSON
from memwork.core.models.card_text import plain_text
from memwork.core.storage.store import Store

ACTOR = "test"


def _record(store: Store, now: datetime, *items: dict) -> list[dict]:
    return episodes.record_episodes(store, list(items), now=now, actor=ACTOR)


def _episode(task: str, *card_list: dict, score: float = 0.3) -> dict:
    return {"task_id": task, "score": score, "mistake_cards": list(card_list)}


def _cards(store: Store) -> list[dict]:
    with store.reading():
        return cards.all_cards(store)


def _audit(store: Store) -> list[dict]:
    with store.reading():
        return list(audit.entries(store, newest_first=False))


# -- normalisation ---------------------------------------------------------------------
def test_defaults_of_a_bare_card(store: Store, now: datetime) -> None:
    _record(store, now, _episode("deploy", {}))
    (card,) = _cards(store)
    assert card["mistake_type"] == "unknown_mistake"
    assert card["task_id"] == "deploy"
    assert card["worker_id"] is None
    assert (card["bad_decision"], card["correct_decision"], card["evidence"]) == ("", "", "")
    assert card["lesson"] == DEFAULT_LESSON == "Avoid repeating this failure."
    assert (card["seen_count"], card["first_seen_episode"], card["last_seen_episode"]) == (1, 1, 1)
    assert card["id"].startswith("card_")


def test_normalise_input_defaults_trims_and_cuts() -> None:
    got = cards.normalise_input(
        {
            "mistake_type": "  ",
            "task_id": "",
            "worker_id": " ",
            "bad_decision": "  rushed ",
            "evidence": "e" * 400,
            "lesson": " " + "l" * 301,
        },
        task_id="ep-task",
    )
    assert got == {
        "mistake_type": "unknown_mistake",
        "task_id": "ep-task",
        "worker_id": None,
        "bad_decision": "rushed",
        "correct_decision": "",
        "evidence": "e" * 299 + "…",
        "lesson": "l" * 299 + "…",
        "cut_chars": {"evidence": "e", "lesson": "l"},
    }
    assert cards.normalise_input({"lesson": None}, task_id="t")["lesson"] == ""


def test_evidence_and_lesson_are_cut_to_300_with_an_ellipsis(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"evidence": "x" * 301, "lesson": "y" * 299 + "Z" + "y"}))
    (card,) = _cards(store)
    assert card["evidence"] == "x" * 299 + "…" and card["lesson"] == "y" * 299 + "…"
    # The episodic layout cuts plainly at 300, as the episodic library does.
    assert card["cut_chars"] == {"evidence": "x", "lesson": "Z"}
    assert plain_text(card, "lesson") == "y" * 299 + "Z"
    # A later sighting with a short lesson replaces the text and forgets the cut.
    _record(store, now, _episode("t", {"lesson": "short"}))
    (card,) = _cards(store)
    assert card["lesson"] == "short" and card["cut_chars"] == {"evidence": "x"}
    assert plain_text(card, "evidence") == "x" * 300


def test_card_text_is_scrubbed(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _episode(
            "t",
            {
                "bad_decision": "pasted sk-" + "k" * 30,
                "correct_decision": "ask ops@example.com",
                "evidence": "from /home/dave/logs",
                "lesson": "<private>x</private>never again",
            },
        ),
    )
    (card,) = _cards(store)
    assert card["bad_decision"] == "pasted [redacted:api_key]"
    assert card["correct_decision"] == "ask [redacted:email]"
    assert card["evidence"] == "from [redacted:home_path]/logs"
    assert card["lesson"] == "never again"


def test_an_explicit_card_task_wins_over_the_episode_task(store: Store, now: datetime) -> None:
    _record(store, now, _episode("ep", {"task_id": "other"}))
    assert _cards(store)[0]["task_id"] == "other"


# -- merge key and counts ---------------------------------------------------------------
def test_merge_key() -> None:
    card = {"mistake_type": "m", "task_id": "t", "worker_id": None, "correct_decision": ""}
    assert cards.merge_key(card) == ("m", "t", "", "")
    assert cards.merge_key({**card, "worker_id": "w", "correct_decision": "c"}) == (
        "m",
        "t",
        "w",
        "c",
    )


def test_same_key_merges_and_counts(store: Store, now: datetime) -> None:
    card = {"mistake_type": "flaky", "correct_decision": "retry", "evidence": "e1"}
    _record(store, now, _episode("t", card), _episode("other", {}), _episode("t", card))
    _record(store, now, _episode("t", {**card, "bad_decision": "ignored"}))
    flaky = [c for c in _cards(store) if c["mistake_type"] == "flaky"]
    assert len(flaky) == 1
    assert flaky[0]["seen_count"] == 3
    assert (flaky[0]["first_seen_episode"], flaky[0]["last_seen_episode"]) == (1, 4)


@pytest.mark.parametrize(
    "change",
    [
        {"mistake_type": "other"},
        {"task_id": "elsewhere"},
        {"worker_id": "w2"},
        {"correct_decision": "something else"},
    ],
)
def test_each_key_part_separates_cards(store: Store, now: datetime, change: dict) -> None:
    base = {"mistake_type": "m", "worker_id": "w1", "correct_decision": "do x"}
    _record(store, now, _episode("t", base), _episode("t", {**base, **change}))
    assert sorted(c["seen_count"] for c in _cards(store)) == [1, 1]


def test_missing_worker_and_decision_match_empty_ones(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _episode("t", {}),
        _episode("t", {"mistake_type": "", "worker_id": "", "correct_decision": ""}),
        _episode("t", {"mistake_type": None, "worker_id": None, "correct_decision": None}),
        _episode("t", {"bad_decision": None, "evidence": None, "lesson": None}),
    )
    (card,) = _cards(store)
    assert card["mistake_type"] == "unknown_mistake"
    assert card["seen_count"] == 4


def test_fields_outside_the_key_do_not_separate(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _episode("t", {"mistake_type": "m", "bad_decision": "a", "evidence": "1", "lesson": "L1"}),
        _episode("t", {"mistake_type": "m", "bad_decision": "b", "evidence": "2", "lesson": "L2"}),
    )
    (card,) = _cards(store)
    assert card["seen_count"] == 2
    assert card["bad_decision"] == "a"


def test_the_same_card_twice_in_one_episode_counts_twice(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m"}, {"mistake_type": "m"}))
    (card,) = _cards(store)
    assert (card["seen_count"], card["first_seen_episode"], card["last_seen_episode"]) == (2, 1, 1)
    assert episodes.get_episode(store, "1")["card_ids"] == [card["id"], card["id"]]


def test_a_card_without_a_lesson_keeps_the_existing_lesson(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m", "lesson": "Check the lock first."}))
    _record(store, now, _episode("t", {"mistake_type": "m"}))
    _record(store, now, _episode("t", {"mistake_type": "m", "lesson": ""}))
    _record(store, now, _episode("t", {"mistake_type": "m", "lesson": None}))
    (card,) = _cards(store)
    assert card["lesson"] == "Check the lock first."
    assert card["seen_count"] == 4


def test_a_new_lesson_replaces_the_old_one(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m"}))
    assert _cards(store)[0]["lesson"] == DEFAULT_LESSON
    _record(store, now, _episode("t", {"mistake_type": "m", "lesson": "Newer lesson."}))
    assert _cards(store)[0]["lesson"] == "Newer lesson."


def test_evidence_is_replaced_only_when_given(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m", "evidence": "first log line"}))
    _record(store, now, _episode("t", {"mistake_type": "m"}))
    assert _cards(store)[0]["evidence"] == "first log line"
    _record(store, now, _episode("t", {"mistake_type": "m", "evidence": "second"}))
    assert _cards(store)[0]["evidence"] == "second"


def test_last_seen_is_the_index_of_the_recording_episode(store: Store, now: datetime) -> None:
    _record(store, now, *[{"score": 0.5} for _ in range(4)])
    _record(store, now, _episode("t", {"mistake_type": "m"}))
    _record(store, now, {"score": 0.5}, _episode("t", {"mistake_type": "m"}))
    (card,) = _cards(store)
    assert (card["first_seen_episode"], card["last_seen_episode"]) == (5, 7)


def test_merge_updates_updated_at_only(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m"}))
    _record(store, now + timedelta(hours=2), _episode("t", {"mistake_type": "m"}))
    (card,) = _cards(store)
    assert card["created_at"] == "2026-11-01T12:00:00.000000Z"
    assert card["updated_at"] == "2026-11-01T14:00:00.000000Z"


def test_invalid_card_input_writes_nothing(store: Store, now: datetime) -> None:
    # A field a card does not have is ignored (as the episodic library ignores it); what
    # no reading can save is refused, and the whole batch with it.
    with pytest.raises(InvalidInput, match=r"item 2: mistake_cards\.0\.mistake_type"):
        _record(store, now, _episode("t", {}), _episode("t", {"mistake_type": ["x"]}))
    assert _cards(store) == []


# -- ranking -----------------------------------------------------------------------------
def test_ranking_seen_count_then_last_seen(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _episode("t", {"mistake_type": "a"}),  # 1: a
        _episode("t", {"mistake_type": "b"}),  # 2: b
        _episode("t", {"mistake_type": "c"}),  # 3: c
        _episode("t", {"mistake_type": "a"}),  # 4: a seen 2x, last 4
        _episode("t", {"mistake_type": "b"}),  # 5: b seen 2x, last 5
        _episode("t", {"mistake_type": "d"}),  # 6: d seen 1x, last 6
    )
    assert [c["mistake_type"] for c in _cards(store)] == ["b", "a", "d", "c"]
    with store.reading():
        assert [c["mistake_type"] for c in cards.top_cards(store)] == ["b", "a", "d"]


def test_ranking_ties_keep_creation_order() -> None:
    docs = [
        {"id": "card_2", "seen_count": 1, "last_seen_episode": 3, "first_seen_episode": 3},
        {"id": "card_1", "seen_count": 1, "last_seen_episode": 3, "first_seen_episode": 3},
        {"id": "card_0", "seen_count": 1, "last_seen_episode": 3, "first_seen_episode": 1},
    ]
    assert [c["id"] for c in ranked_cards(docs)] == ["card_0", "card_1", "card_2"]


# -- curation ---------------------------------------------------------------------------
def test_merge_cards_adds_counts_and_widens_the_range(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        _episode("t", {"mistake_type": "timeout", "evidence": ""}),
        _episode("t", {"mistake_type": "time-out", "evidence": "30 s"}),
        _episode("t", {"mistake_type": "time-out"}),
        _episode("t", {"mistake_type": "timeout"}),
        _episode("t", {"mistake_type": "timeout"}),
    )
    keep = next(c for c in _cards(store) if c["mistake_type"] == "timeout")
    absorb = next(c for c in _cards(store) if c["mistake_type"] == "time-out")
    merged = cards.merge_cards(
        store, keep["id"], absorb["id"], now=now + timedelta(minutes=1), actor="tui"
    )
    assert merged["seen_count"] == 5
    assert (merged["first_seen_episode"], merged["last_seen_episode"]) == (1, 5)
    assert merged["evidence"] == "30 s"
    assert merged["merged_from"] == [absorb["id"]]
    assert [c["id"] for c in _cards(store)] == [keep["id"]]
    entry = _audit(store)[-1]
    assert (entry["action"], entry["actor"], entry["record_id"]) == ("merge", "tui", keep["id"])
    assert absorb["id"] in entry["summary"]
    # A later sighting of the absorbed kind counts toward the card that absorbed it.
    _record(store, now, _episode("t", {"mistake_type": "time-out"}))
    assert [(c["id"], c["seen_count"]) for c in _cards(store)] == [(keep["id"], 6)]
    # The absorbed id still resolves (episodes keep pointing at it).
    with store.reading():
        assert cards.resolve(store, absorb["id"])["id"] == keep["id"]


def test_merge_cards_refuses_self_and_unknown(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m"}))
    (card,) = _cards(store)
    with pytest.raises(Conflict):
        cards.merge_cards(store, card["id"], card["id"], now=now, actor=ACTOR)
    with pytest.raises(NotFound):
        cards.merge_cards(store, card["id"], "card_nope", now=now, actor=ACTOR)
    assert _cards(store) == [card]


def test_edit_card_lesson_and_evidence(store: Store, now: datetime) -> None:
    _record(store, now, _episode("t", {"mistake_type": "m", "evidence": "old"}))
    (card,) = _cards(store)
    later = now + timedelta(hours=1)
    edited = cards.edit_card(store, card["id"][:12], now=later, actor=ACTOR, lesson="L" * 400)
    assert edited["lesson"] == "L" * 299 + "…" and edited["evidence"] == "old"
    assert edited["cut_chars"] == {"lesson": "L"}
    assert edited["updated_at"] == "2026-11-01T13:00:00.000000Z"
    edited = cards.edit_card(store, card["id"], now=later, actor=ACTOR, evidence="mail a@b.io")
    assert edited["evidence"] == "mail [redacted:email]"
    assert _cards(store)[0] == edited
    with pytest.raises(InvalidInput, match="lesson: must not be empty"):
        cards.edit_card(store, card["id"], now=later, actor=ACTOR, lesson="   ")
    assert [e["action"] for e in _audit(store)] == ["record", "edit", "edit"]


def test_cards_are_never_silently_deleted(store: Store, now: datetime) -> None:
    """Recording never removes a card; the only removal (merge) is audited and linked."""
    for n in range(30):
        _record(store, now, _episode(f"t{n % 4}", {"mistake_type": f"m{n % 7}"}))
    before = {c["id"] for c in _cards(store)}
    assert len(before) == len({(n % 7, n % 4) for n in range(30)})
    assert sum(c["seen_count"] for c in _cards(store)) == 30
    a, b = sorted(before)[:2]
    cards.merge_cards(store, a, b, now=now, actor=ACTOR)
    after = {c["id"] for c in _cards(store)}
    assert before - after == {b}
    merges = [e for e in _audit(store) if e["action"] == "merge"]
    assert len(merges) == 1 and b in merges[0]["summary"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.lists(
            st.fixed_dictionaries(
                {
                    "mistake_type": st.sampled_from(["a", "b", ""]),
                    "worker_id": st.sampled_from([None, "", "w"]),
                    "correct_decision": st.sampled_from(["", "x"]),
                }
            ),
            max_size=3,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_reported_card_is_counted(batches: list[list[dict]]) -> None:
    """However cards are grouped, each report counts once and merging is by key only."""
    store = Store.in_memory()
    now = datetime(2026, 11, 1)
    for batch in batches:
        episodes.record_episodes(store, [_episode("t", *batch)], now=now, actor=ACTOR)
    stored = _cards(store)
    reported = [c for batch in batches for c in batch]
    assert sum(c["seen_count"] for c in stored) == len(reported)
    keys = {
        (c["mistake_type"] or "unknown_mistake", c["worker_id"] or "", c["correct_decision"])
        for c in reported
    }
    assert len(stored) == len(keys)
