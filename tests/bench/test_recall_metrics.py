"""The recall benchmark's arithmetic, on hand-made rankings (bench/recall_metrics.py),
and the LongMemEval loader on a hand-made file (bench/recall_sets.py): the figures
bench/bench_recall.py prints can only be trusted if these hold."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import recall_metrics as m  # noqa: E402
import recall_sets  # noqa: E402


def test_recall_at_k_is_the_share_of_answers_in_the_first_k() -> None:
    ranked = ["a", "x", "b", "y", "z", "c"]
    answers = {"a", "b", "c", "d"}
    assert m.recall_at(ranked, answers, 1) == 0.25
    assert m.recall_at(ranked, answers, 3) == 0.5
    assert m.recall_at(ranked, answers, 6) == 0.75  # "d" is never found
    assert m.recall_at(ranked, answers, 100) == 0.75
    assert m.recall_at([], answers, 10) == 0.0


def test_reciprocal_rank_counts_the_first_answer_up_to_the_depth() -> None:
    assert m.reciprocal_rank(["a", "b"], {"a"}) == 1.0
    assert m.reciprocal_rank(["x", "y", "b", "a"], {"a", "b"}) == pytest.approx(1 / 3)
    late = [f"x{i}" for i in range(20)] + ["a"]
    assert m.reciprocal_rank(late, {"a"}) == 0.0  # rank 21: past the depth of 20
    assert m.reciprocal_rank(late, {"a"}, depth=21) == pytest.approx(1 / 21)


def test_a_session_ranks_where_its_best_turn_first_appears() -> None:
    session_of = {"t1": "A", "t2": "B", "t3": "A", "t4": "C", "t5": "B"}.get
    assert m.session_ranking(["t3", "t5", "t1", "t4", "t2"], session_of) == ["A", "B", "C"]
    assert m.session_ranking(["t4", "t1"], session_of) == ["C", "A"]


def test_a_tally_averages_over_questions() -> None:
    tally = m.Tally()
    tally.add(["a", "b"], {"a"})  # found at 1
    tally.add(["x", "y", "z", "w", "v", "b"], {"b", "c"})  # half found, at 6
    r1, r5, r10, r20, mrr = tally.row()
    assert (r1, r5, r10, r20) == (0.5, 0.5, 0.75, 0.75)
    assert mrr == pytest.approx((1 + 1 / 6) / 2)


def test_a_paired_gap_is_the_mean_difference_with_an_interval_around_it() -> None:
    ahead, behind = m.Tally(), m.Tally()
    for n in range(40):
        # The same questions: one system finds the answer first on every other one, the
        # other never ranks it above second.
        ahead.add(["a", "x"] if n % 2 else ["x", "a"], {"a"})
        behind.add(["x", "a"], {"a"})
    gap, low, high = m.paired_gap(ahead, behind, 1)
    assert gap == pytest.approx(0.25)  # (1 - 1/2) on half of the questions
    assert low <= gap <= high
    assert 0 < low and high < 0.5
    assert m.paired_gap(ahead, behind, 0) == (0.0, 0.0, 0.0)  # both find it by rank 10
    assert m.paired_gap(ahead, behind, 1) == (gap, low, high)  # a fixed seed repeats


def test_a_board_counts_each_question_in_its_category_and_in_all() -> None:
    board = m.Board()
    board.add("turn", "temporal", "s", ["a"], {"a"})
    board.add("turn", "multi-hop", "s", ["x", "a"], {"a"})
    board.add("turn", "multi-hop", "s", ["x"], set())  # no evidence at this level: not counted
    assert board.categories("turn") == [m.ALL, "multi-hop", "temporal"]
    assert board.get("turn", m.ALL, "s").n == 2
    assert board.get("turn", m.ALL, "s").row()[-1] == 0.75
    assert board.get("turn", "multi-hop", "s").row() == [0.0, 1.0, 1.0, 1.0, 0.5]


def _item(qid: str, kind: str) -> dict:
    return {
        "question_id": qid,
        "question_type": kind,
        "question": "Where did I park?",
        "haystack_session_ids": ["s1", "answer_1"],
        "haystack_sessions": [
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
            [
                {"role": "user", "content": "I parked on level 3.", "has_answer": True},
                {"role": "assistant", "content": "  "},
                {"role": "assistant", "content": "Noted: level 3."},
            ],
        ],
        "answer_session_ids": ["answer_1"],
    }


def test_longmemeval_splits_whole_questions_and_reads_the_evidence(tmp_path: Path) -> None:
    items = [_item(f"q{n}", "multi-session" if n % 2 else "temporal-reasoning") for n in range(40)]
    items.append(_item("q99_abs", "temporal-reasoning"))  # abstention: no evidence, left out
    (tmp_path / "longmemeval_s_cleaned.json").write_text(json.dumps(items))
    parts = recall_sets.load("longmemeval", tmp_path, per_category=3)
    tune, held = parts[recall_sets.TUNING], parts[recall_sets.HELD_OUT]
    assert len(tune) == len(held) == 6  # 3 of each type in each slice
    names = [c.name for c in tune + held]
    assert len(set(names)) == 12 and "q99_abs" not in names
    assert parts == recall_sets.load("longmemeval", tmp_path, per_category=3)  # stable
    conv = tune[0]
    assert [u for u, _, _ in conv.turns] == ["s1#0", "s1#1", "answer_1#0", "answer_1#2"]
    (q,) = conv.questions
    assert q.turns == {"answer_1#0"} and q.sessions == {"answer_1"}


def test_locomo_evidence_ranges_and_lists_are_read() -> None:
    assert recall_sets.evidence_ids(["D1:3", "D2:4-D2:6", "D3:1; D3:2"]) == [
        "D1:3",
        "D2:4",
        "D2:5",
        "D2:6",
        "D3:1",
        "D3:2",
    ]


def test_a_wide_haystack_adds_other_questions_sessions_that_answer_nothing(
    tmp_path: Path,
) -> None:
    items = []
    for n in range(12):
        item = _item(f"q{n}", "multi-session")
        # Each question's own sessions, distinct ids: a filler and its answer.
        item["haystack_session_ids"] = [f"f{n}", f"answer_{n}"]
        item["answer_session_ids"] = [f"answer_{n}"]
        item["haystack_dates"] = ["2023/05/01 (Mon) 10:00", f"2023/05/{n + 2:02d} (Tue) 10:00"]
        item["question_date"] = "2023/06/01 (Thu) 10:00"
        items.append(item)
    (tmp_path / "longmemeval_s.json").write_text(json.dumps(items))
    pool = recall_sets._filler_pool(items)
    assert set(pool) == {f"f{n}" for n in range(12)}  # no session that answers a question
    wide = recall_sets.widened(items[0], pool, 6)
    ids = wide["haystack_session_ids"]
    assert ids[:2] == ["f0", "answer_0"] and len(ids) == 6 == len(set(ids))
    assert all(s.startswith("f") for s in ids[2:])
    assert set(wide["haystack_dates"]) <= set(items[0]["haystack_dates"])  # none after
    parts = recall_sets.load("longmemeval-wide", tmp_path, per_category=20)
    convs = parts[recall_sets.TUNING] + parts[recall_sets.HELD_OUT]
    assert len(convs) == 12
    for conv in convs:
        (q,) = conv.questions
        assert q.sessions == {f"answer_{conv.name[1:]}"}  # the evidence is unchanged
        assert len({s for _, s, _ in conv.turns}) == 13  # its answer and every filler
    assert parts == recall_sets.load("longmemeval-wide", tmp_path, per_category=20)
