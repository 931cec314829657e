"""The recall benchmark's ``--harness`` ways of storing a conversation
(bench/bench_recall.py's ``Memwork``, bench/recall_sets.py's ``with_speakers``): each
must store what it says, or the figures it prints measure something else."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_recall  # noqa: E402
import recall_sets  # noqa: E402

from memwork.core.domain import sessions  # noqa: E402

CHAT = [(f"u{n}", str(n // 300), f"line {n} about the weather") for n in range(700)]
CHAT[0] = ("u0", "0", "I adopted a greyhound called Pixel")


def _observations(store: object) -> list[dict]:
    return [
        o
        for s in sessions.list_sessions(store)  # type: ignore[arg-type]
        for o in sessions.observations(store, s["id"])  # type: ignore[arg-type]
    ]


def test_by_default_each_set_session_is_a_session_and_keeps_its_cap() -> None:
    memwork = bench_recall.Memwork(CHAT)
    assert len(sessions.list_sessions(memwork.store)) == 3  # turns 0-299, 300-599, 600-699
    assert len(_observations(memwork.store)) == 700


def test_one_session_holds_a_whole_chat_past_the_default_cap() -> None:
    memwork = bench_recall.Memwork(CHAT, harness=frozenset({"one-session"}))
    assert len(sessions.list_sessions(memwork.store)) == 1
    assert len(_observations(memwork.store)) == 700  # none of the oldest dropped at 500
    assert memwork.search("what is the name of my greyhound", 5)[0] == 0


def test_turn_sessions_give_every_turn_its_own_session() -> None:
    memwork = bench_recall.Memwork(CHAT[:40], harness=frozenset({"turn-sessions"}))
    found = sessions.list_sessions(memwork.store)
    assert len(found) == 40
    assert all(len(sessions.observations(memwork.store, s["id"])) == 1 for s in found)


def test_undated_stores_the_turns_at_the_bench_clock_not_the_set_dates() -> None:
    said = [datetime(2023, 5, 8, tzinfo=UTC) + timedelta(days=n) for n in range(10)]
    dated = bench_recall.Memwork(CHAT[:10], said)
    undated = bench_recall.Memwork(CHAT[:10], said, harness=frozenset({"undated"}))
    assert {o["created_at"][:4] for o in _observations(dated.store)} == {"2023"}
    assert {o["created_at"][:10] for o in _observations(undated.store)} == {
        bench_recall.NOW.date().isoformat()
    }


def test_speakers_begin_each_turn_with_who_said_it() -> None:
    item = {
        "question_id": "q1",
        "question_type": "single-session-user",
        "question": "Where did I park?",
        "haystack_session_ids": ["a"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "I parked on level 3.", "has_answer": True},
                {"role": "assistant", "content": "Noted."},
            ]
        ],
        "answer_session_ids": ["a"],
    }
    conv = recall_sets.with_speakers(recall_sets.haystack(item))
    assert [t for _, _, t in conv.turns] == ["user: I parked on level 3.", "assistant: Noted."]
    assert conv.questions[0].turns == {"a#0"}  # the evidence is the same turn

    dialogue = {
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group."},
            {"speaker": "Mel", "dia_id": "D1:2", "text": "How was it?"},
        ],
    }
    chat = recall_sets._dialogue("c", dialogue, [], recall_sets.LOCOMO_CATEGORIES)
    long = recall_sets.with_speakers(recall_sets.long_replies(chat))
    assert [t.split(":")[0] for _, _, t in long.turns] == [
        "Caroline",
        "assistant",
        "Mel",
        "assistant",
    ]


def test_session_docs_make_each_session_one_record_with_its_evidence_mapped() -> None:
    said = [datetime(2023, 5, 8, tzinfo=UTC) + timedelta(days=n // 2) for n in range(4)]
    question = recall_sets.Question("q1", "What is my dog called?", {"u1"}, {"b"}, "single")
    conv = recall_sets.Conversation(
        "c",
        [("u0", "a", "Morning run"), ("u1", "b", "I adopted a greyhound"), ("u2", "b", "Pixel")],
        [question],
        said[1:],
    )
    docs = recall_sets.as_session_documents(conv)
    assert docs.turns == [
        ("session:a", "a", "Morning run"),
        ("session:b", "b", "I adopted a greyhound\nPixel"),
    ]
    assert docs.questions[0].turns == {"session:b"} and docs.questions[0].sessions == {"b"}
    assert docs.times == [said[1], said[2]]  # each session dated by its first turn
    memwork = bench_recall.Memwork(docs.turns, docs.times)
    assert [
        len(sessions.observations(memwork.store, s["id"]))
        for s in sessions.list_sessions(memwork.store)
    ] == [1, 1]
    assert memwork.search("greyhound called Pixel", 2)[0] == 1


def test_session_docs_report_the_session_level_only() -> None:
    question = recall_sets.Question("q1", "Which greyhound did I adopt?", {"u1"}, {"b"}, "single")
    conv = recall_sets.Conversation(
        "c", [("u0", "a", "Morning run"), ("u1", "b", "I adopted a greyhound")], [question]
    )
    board, size = bench_recall.conversations(
        [conv], bench_recall.Clock(), ("memwork",), frozenset({"session-docs"})
    )
    assert board.levels() == ["session"]
    assert size["turns"] == 2
