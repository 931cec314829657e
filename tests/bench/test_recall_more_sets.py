"""The loaders of the smaller public sets (bench/recall_memdaily.py,
bench/recall_madial.py, bench/recall_locomo_facts.py) on hand-made files: what they call
a question, its answers, its query and its slice is what bench/bench_recall.py's figures
for them mean."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_recall  # noqa: E402
import recall_sets  # noqa: E402


def _trajectory(tid: int) -> dict:
    return {
        "tid": tid,
        "message_list": [
            {"mid": 0, "message": "我的上司就只有高中学历。", "time": "2024年04月01日 周一 08:39"},
            {"mid": 1, "message": "我的上司名叫赵雅琳。", "time": "2024年04月02日 周二 08:04"},
            {"mid": 2, "message": "我表妹学历是硕士。", "time": "2024年04月04日 周四 07:08"},
        ],
        "question_list": [
            {
                "qid": 0,
                "question": "那我的上司是什么学历呢？",
                "target_step_id": [0],
                "time": "2024年04月05日 周五 11:59",
            }
        ],
    }


def test_memdaily_makes_each_trajectory_a_dated_conversation_split_whole(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memdaily"
    folder.mkdir()
    (folder / "01_simple_roles.json").write_text(
        json.dumps([_trajectory(n) for n in range(30)], ensure_ascii=False), encoding="utf-8"
    )
    parts = recall_sets.load("memdaily", tmp_path, per_category=3)
    tune, held = parts[recall_sets.TUNING], parts[recall_sets.HELD_OUT]
    assert len(tune) == len(held) == 12  # at most 4 x 3 of each file in each slice
    assert not {c.name for c in tune} & {c.name for c in held}
    conv = tune[0]
    assert [u for u, _, _ in conv.turns] == ["m0", "m1", "m2"]
    assert conv.turns[1][1] == "2024-04-02"  # a day is a session
    assert conv.times and conv.times[0] == datetime(2024, 4, 1, 8, 39, tzinfo=UTC)
    assert conv.asked == datetime(2024, 4, 5, 11, 59, tzinfo=UTC)
    (q,) = conv.questions
    assert q.turns == {"m0"} and q.category == "1 simple"
    assert not conv.session_level


def test_memdaily_leaves_out_a_question_its_generator_failed_to_write(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "memdaily"
    folder.mkdir()
    items = [_trajectory(n) for n in range(30)]
    for item in items[::2]:
        item["question_list"][0]["question"] = "[ERRORQ]"
    items[1]["question_list"][0]["answer"] = "[ERRORA]"
    (folder / "01_simple_roles.json").write_text(
        json.dumps(items, ensure_ascii=False), encoding="utf-8"
    )
    parts = recall_sets.load("memdaily", tmp_path, per_category=10)
    kept = {c.name for part in parts.values() for c in part}
    assert kept == {f"01_simple_roles#{n}" for n in range(3, 30, 2)}
    asked = [q.text for part in parts.values() for c in part for q in c.questions]
    assert asked and "[ERRORQ]" not in asked


def _madial(folder: Path) -> None:
    folder.mkdir()
    memories = [
        ("1", "Bart danced at the Christmas party and felt very happy.", 1),
        ("2", "Bart flew a red kite at the beach.", 1),
        ("3", "Lisa won the school painting competition.", 2),
    ]
    (folder / "MADial-Bench-en-memory.json").write_text(
        "\n".join(
            json.dumps({key: {"time": "2023-12-25", "event": text}}) for key, text, _ in memories
        )
    )
    (folder / "MADial-Bench-zh-memory.json").write_text(
        "\n".join(
            json.dumps({key: {"time": "2023-12-25", "event": "…", "user-id": user}})
            for key, _, user in memories
        )
    )
    dialogues = [
        {
            "dialogue": [
                "<BOD>\n",
                '<Bart>: "I will dance at the New Year party!"\n',
                '<Assistant>: "Do you remember the Christmas party?"\n',
                "<EOD>\n",
            ],
            "test-turn": [2],
            "relevant-id": [1, 99] if n % 2 == 0 else [3],
            "user-id": 1 + n % 2,
        }
        for n in range(20)
    ]
    (folder / "MADial-Bench-en-dialogue.json").write_text(
        "\n".join(json.dumps(d) for d in dialogues)
    )


def test_madial_asks_each_users_memories_with_the_dialogue_before_the_recall(
    tmp_path: Path,
) -> None:
    _madial(tmp_path / "madial")
    parts = recall_sets.load("madial", tmp_path)
    tune, held = parts[recall_sets.TUNING], parts[recall_sets.HELD_OUT]
    asked = [q.qid for c in tune + held for q in c.questions]
    assert len(asked) == len(set(asked)) == 20  # each dialogue once, in one slice
    bart = next(c for c in tune + held if c.turns[0][0] == "1")
    assert [u for u, _, _ in bart.turns] == ["1", "2"]  # Lisa's memory is not his
    q = bart.questions[0]
    assert q.text == '<Bart>: "I will dance at the New Year party!"'
    assert q.turns == {"1"}  # an id no memory has is left out
    assert recall_sets.load("madial-zh", tmp_path) == {}  # its dialogues are missing


def test_a_set_without_a_session_level_reports_turns_only() -> None:
    question = recall_sets.Question("q1", "Which kite did Bart fly?", {"2"}, {"2"}, "dialogue")
    conv = recall_sets.Conversation(
        "c",
        [("1", "1", "Bart danced at the party"), ("2", "2", "Bart flew a red kite")],
        [question],
        session_level=False,
    )
    board, _ = bench_recall.conversations([conv], bench_recall.Clock(), ("memwork",))
    assert board.levels() == ["turn"]


def _locomo_sample(n: int) -> dict:
    return {
        "sample_id": f"conv-{n}",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [{"speaker": "B", "dia_id": "D2:1", "text": "hello"}],
        },
        "observation": {
            "session_2_observation": {"B": [["B adopted a beagle.", "D2:5"]]},
            "session_1_observation": {
                "A": [["A ran a marathon.", "D1:9"], ["A likes tea.", ["D1:2", "D1:3"]]],
                "B": [["B paints lakes.", "D1:4, D1:6"]],
            },
        },
        "qa": [
            {
                "question": "What does A drink?",
                "answer": "tea",
                "evidence": ["D1:3"],
                "category": 4,
            },
            {"question": "Which pet?", "answer": "beagle", "evidence": ["D2:5"], "category": 1},
            {"question": "Nothing cites this", "answer": "x", "evidence": ["D2:9"], "category": 4},
        ],
    }


def test_locomo_facts_are_the_records_and_answer_through_the_turns_they_cite(
    tmp_path: Path,
) -> None:
    (tmp_path / "locomo10.json").write_text(json.dumps([_locomo_sample(n) for n in range(3)]))
    parts = recall_sets.load("locomo-facts", tmp_path)
    assert [c.name for c in parts[recall_sets.TUNING]] == ["conv-0-facts", "conv-2-facts"]
    assert [c.name for c in parts[recall_sets.HELD_OUT]] == ["conv-1-facts"]
    conv = parts[recall_sets.TUNING][0]
    # Session by session, and within one in the order of the turns each fact cites.
    assert [t for _, _, t in conv.turns] == [
        "A likes tea.",
        "B paints lakes.",
        "A ran a marathon.",
        "B adopted a beagle.",
    ]
    assert [s for _, s, _ in conv.turns] == ["1", "1", "1", "2"]
    assert conv.times and conv.times[3] == datetime(2023, 6, 27, 10, 37, tzinfo=UTC)
    drink, pet = conv.questions  # the question no fact cites is left out
    assert drink.turns == {"f0"} and drink.category == "4 single-hop"
    assert pet.turns == {"f3"} and pet.sessions == {"2"}
    assert conv.session_level
