"""Recording episodes: input shapes, all-or-nothing, indexes, aggregates.

Described in docs/MEMORY.md, Records and Failure memory.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.domain import aggregates, distinct, episodes
from memwork.core.ledger import audit
from memwork.core.models.episode import outcome_for
from memwork.core.storage.store import Store
from tests.conftest import folder_digest

ACTOR = "test"


def _record(store: Store, now: datetime, *items: dict) -> list[dict]:
    return episodes.record_episodes(store, list(items), now=now, actor=ACTOR)


def _all(store: Store) -> list[dict]:
    with store.reading():
        return list(episodes.iter_all(store))


def _glob(store: Store) -> dict:
    with store.reading():
        return aggregates.read_global(store)


def _task(store: Store, task_id: str) -> dict | None:
    with store.reading():
        return aggregates.read_task(store, task_id)


# -- input shapes through the CLI -------------------------------------------------------
def test_cli_records_one_object_and_prints_its_id(cli, db: Path) -> None:  # noqa: ANN001
    done = cli("record-episode", stdin='{"task_id": "t", "score": 0.9, "summary": "ok"}')
    assert done.code == 0 and done.err == ""
    ids = done.out.splitlines()
    assert len(ids) == 1 and ids[0].startswith("ep_")
    stored = episodes.get_episode(Store(db), ids[0])
    assert (stored["index"], stored["task_id"], stored["summary"]) == (1, "t", "ok")


def test_cli_records_an_array_in_order(cli, db: Path) -> None:  # noqa: ANN001
    items = [{"task_id": "t", "score": s, "summary": f"n{i}"} for i, s in enumerate([0.1, 0.5, 1])]
    done = cli("record-episode", "-", stdin=json.dumps(items))
    assert done.code == 0
    ids = done.out.splitlines()
    assert len(ids) == 3
    got = [episodes.get_episode(Store(db), i) for i in ids]
    assert [(e["index"], e["summary"]) for e in got] == [(1, "n0"), (2, "n1"), (3, "n2")]


def test_cli_records_json_lines(cli, db: Path) -> None:  # noqa: ANN001
    lines = "\n".join(
        json.dumps({"task_id": "jl", "score": 0.6, "steps": n, "summary": f"line {n}"})
        for n in range(1, 4)
    )
    done = cli("record-episode", stdin=lines + "\n\n")
    assert done.code == 0
    assert len(done.out.splitlines()) == 3
    got = _all(Store(db))
    assert [(e["index"], e["steps"]) for e in got] == [(1, 1), (2, 2), (3, 3)]


def test_cli_reads_a_file_argument(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    source = tmp_path / "eps.json"
    source.write_text(json.dumps([{"score": 0.7}, {"score": 0.2}]))
    done = cli("record-episode", str(source))
    assert done.code == 0 and len(done.out.splitlines()) == 2
    assert [e["task_id"] for e in _all(Store(db))] == ["unknown", "unknown"]


def test_cli_json_prints_the_stored_documents(cli) -> None:  # noqa: ANN001
    done = cli("record-episode", "--json", stdin='{"score": 0.3, "task_id": "x"}')
    records = done.json()
    assert isinstance(records, list) and len(records) == 1
    assert records[0]["index"] == 1 and records[0]["outcome"] == "failure"


def test_api_records_and_returns_documents(store: Store, now: datetime) -> None:
    docs = _record(store, now, {"task_id": "a", "score": 0.9}, {"task_id": "b", "score": 0.1})
    assert [d["index"] for d in docs] == [1, 2]
    assert [d["created_at"] for d in docs] == ["2026-11-01T12:00:00.000000Z"] * 2
    assert episodes.count(store) == 2
    assert episodes.get_episode(store, "#2")["task_id"] == "b"
    assert episodes.get_episode(store, docs[0]["id"])["task_id"] == "a"


# -- all-or-nothing ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"score": 1.5}, "item 2: score: must be between 0.0 and 1.0 (got 1.5)"),
        ({"score": -0.01}, "item 2: score: must be between 0.0 and 1.0 (got -0.01)"),
        ({"score": "high"}, "item 2: score: must be a number between 0.0 and 1.0 (got 'high')"),
        ({"summary": "no score", "score": None}, "item 2: score: must be a number"),
        ({"score": 0.5, "steps": -1}, "item 2: steps: must be >= 0 (got -1)"),
        ({"score": 0.5, "outcome": "meh"}, "item 2: outcome: "),
        ({"score": 0.5, "errors": [{"message": "x"}]}, "item 2: errors.0.error_type: is required"),
        ("not an object", "item 2: record: must be a JSON object (got str)"),
    ],
)
def test_one_invalid_item_in_the_middle_writes_nothing(
    cli,  # noqa: ANN001
    db: Path,
    bad: object,
    message: str,
) -> None:
    assert cli("record-episode", stdin='{"task_id": "seed", "score": 0.9}').code == 0
    before = folder_digest(db)
    items = [{"task_id": "t", "score": 0.9}, bad, {"task_id": "t", "score": 0.2}]
    done = cli("record-episode", stdin=json.dumps(items))
    assert done.code == 2
    assert done.out == ""
    assert done.err.startswith(f"memwork: {message}")
    assert done.err.count("\n") == 1 and "Traceback" not in done.err
    assert folder_digest(db) == before


def test_json_lines_error_names_the_item_number(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("record-episode", stdin='{"score": 0.9}').code == 0
    before = folder_digest(db)
    lines = '{"score": 0.5}\n{"score": 0.5}\n{"score": 7}\n'
    done = cli("record-episode", stdin=lines)
    assert done.code == 2
    assert done.err == "memwork: item 3: score: must be between 0.0 and 1.0 (got 7)\n"
    assert folder_digest(db) == before


def test_broken_json_line_is_named_and_writes_nothing(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("record-episode", stdin='{"score": 0.9}').code == 0
    before = folder_digest(db)
    done = cli("record-episode", stdin='{"score": 0.5}\n{"score": \n')
    assert done.code == 2 and "line 2" in done.err
    assert folder_digest(db) == before


def test_empty_input_is_refused(cli) -> None:  # noqa: ANN001
    done = cli("record-episode", stdin="  \n")
    assert done.code == 2 and done.err.startswith("memwork: input: is empty")
    assert cli("record-episode", stdin="[]").code == 2


def test_api_refusal_names_the_item_and_writes_nothing(store: Store, now: datetime) -> None:
    _record(store, now, {"score": 0.9, "mistakes": ["m0"]})
    with store.reading():
        before = {n: dict(store.docs(n)) for n in store.table_names()}
    with pytest.raises(InvalidInput) as caught:
        _record(store, now, {"score": 0.1, "mistakes": ["m1"]}, {"score": 2})
    assert caught.value.item == 2 and caught.value.field == "score"
    with store.reading():
        assert {n: dict(store.docs(n)) for n in store.table_names()} == before


def test_a_failing_write_mid_batch_rolls_everything_back(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Validation passed, but the second item fails while writing: nothing lands."""
    _record(store, now, {"score": 0.9})
    with store.reading():
        before = {n: dict(store.docs(n)) for n in store.table_names()}
    real = episodes.rules.derive_from_episode
    calls = []

    def boom(store_, doc, now_):  # noqa: ANN001, ANN202
        calls.append(doc["index"])
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real(store_, doc, now_)

    monkeypatch.setattr(episodes.rules, "derive_from_episode", boom)
    with pytest.raises(RuntimeError):
        _record(store, now, {"score": 0.9, "successes": ["s"]}, {"score": 0.1})
    with store.reading():
        assert {n: dict(store.docs(n)) for n in store.table_names()} == before


# -- fields ------------------------------------------------------------------------------
def test_trajectory_summary_is_an_alias_of_summary(store: Store, now: datetime) -> None:
    first, second = _record(
        store,
        now,
        {"score": 0.5, "trajectory_summary": "via alias"},
        {"score": 0.5, "summary": "direct", "trajectory_summary": "ignored"},
    )
    assert first["summary"] == "via alias"
    assert second["summary"] == "direct"
    assert "trajectory_summary" not in first["metadata"]


def test_trajectory_summary_alias_through_the_cli(cli, db: Path) -> None:  # noqa: ANN001
    cli("record-episode", stdin='{"score": 0.5, "trajectory_summary": "cli alias"}')
    assert _all(Store(db))[0]["summary"] == "cli alias"


@pytest.mark.parametrize(
    ("score", "outcome"),
    [
        (1.0, "success"),
        (0.85, "success"),
        (0.849, "partial"),
        (0.5, "partial"),
        (0.4999, "failure"),
        (0.0, "failure"),
    ],
)
def test_outcome_is_derived_from_the_score(
    store: Store, now: datetime, score: float, outcome: str
) -> None:
    assert outcome_for(score) == outcome
    (doc,) = _record(store, now, {"score": score})
    assert doc["outcome"] == outcome
    assert episodes.get_episode(store, "1")["outcome"] == outcome


def test_a_given_outcome_wins_over_the_score(store: Store, now: datetime) -> None:
    a, b = _record(
        store, now, {"score": 0.95, "outcome": "failure"}, {"score": 0.1, "outcome": "success"}
    )
    assert (a["outcome"], b["outcome"]) == ("failure", "success")
    # An explicit failure is a failure: it carries an error like any other.
    assert a["errors"][0]["error_type"] == "IterationError"
    assert b["errors"] == []


def test_defaults_and_unknown_keys_go_to_metadata(store: Store, now: datetime) -> None:
    (doc,) = _record(store, now, {"score": 0.5, "phase": "build", "model": "m1"})
    assert (doc["task_id"], doc["steps"], doc["summary"]) == ("unknown", 0, "")
    assert doc["mistakes"] == doc["successes"] == doc["errors"] == []
    assert doc["metadata"] == {"phase": "build", "model": "m1"}
    assert doc["session_id"] is None and doc["worker_id"] is None


# -- indexes -----------------------------------------------------------------------------
def test_indexes_continue_across_calls(store: Store, now: datetime) -> None:
    got = []
    for batch in ([{"score": 0.5}], [{"score": 0.5}, {"score": 0.5}], [{"score": 0.5}]):
        got += [d["index"] for d in _record(store, now, *batch)]
    assert got == [1, 2, 3, 4]
    assert [e["index"] for e in _all(store)] == [1, 2, 3, 4]


def test_indexes_continue_across_two_store_instances(tmp_path: Path, now: datetime) -> None:
    first, second = Store(tmp_path / "s"), Store(tmp_path / "s")
    got = []
    for n in range(6):
        writer = first if n % 2 == 0 else second
        got += [d["index"] for d in _record(writer, now, {"score": 0.5, "summary": str(n)})]
    assert got == [1, 2, 3, 4, 5, 6]
    assert [e["summary"] for e in _all(Store(tmp_path / "s"))] == [str(n) for n in range(6)]


def test_indexes_continue_across_cli_calls(cli, db: Path) -> None:  # noqa: ANN001
    for _ in range(3):
        assert cli("record-episode", stdin='{"score": 0.5}').code == 0
    assert [e["index"] for e in _all(Store(db))] == [1, 2, 3]


# -- aggregates --------------------------------------------------------------------------
def test_per_task_count_and_mean(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        {"task_id": "a", "score": 0.2},
        {"task_id": "b", "score": 1.0},
        {"task_id": "a", "score": 0.5},
    )
    _record(store, now, {"task_id": "a", "score": 0.9})
    a = _task(store, "a")
    assert a["episodes"] == 3
    assert a["mean_score"] == pytest.approx((0.2 + 0.5 + 0.9) / 3)
    assert a["outcomes"] == {"failure": 1, "partial": 1, "success": 1}
    assert [e["score"] for e in a["recent"]] == [0.2, 0.5, 0.9]
    assert _task(store, "b")["episodes"] == 1
    assert _task(store, "nope") is None


def test_recent_episodes_keep_the_last_hundred(store: Store, now: datetime) -> None:
    _record(store, now, *[{"task_id": f"t{n % 3}", "score": 0.5} for n in range(105)])
    glob = _glob(store)
    assert glob["total_episodes"] == 105
    assert [e["index"] for e in glob["recent"]] == list(range(6, 106))
    task = _task(store, "t0")
    assert len(task["recent"]) == aggregates.TASK_RECENT
    assert [e["index"] for e in task["recent"]][-1] == 103


def test_distinct_mistakes_and_successes_in_first_seen_order(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        {"score": 0.2, "mistakes": ["b", "a", "b"], "successes": ["x"]},
        {"score": 0.2, "mistakes": ["c", "a"], "successes": ["y", "x"]},
    )
    _record(store, now, {"score": 0.9, "mistakes": ["a", "d"], "successes": ["x", "z"]})
    with store.reading():
        assert distinct.all_texts(store, "mistake") == ["b", "a", "c", "d"]
        assert distinct.all_texts(store, "success") == ["x", "y", "z"]
    glob = _glob(store)
    assert glob["recent_mistakes"] == ["b", "a", "c", "d"]
    assert glob["recent_successes"] == ["x", "y", "z"]
    assert (glob["distinct_mistakes"], glob["distinct_successes"]) == (4, 3)
    # The episode itself keeps what was reported.
    assert _all(store)[0]["mistakes"] == ["b", "a", "b"]


def test_recent_distinct_mistakes_keep_the_last_ten(store: Store, now: datetime) -> None:
    _record(store, now, {"score": 0.2, "mistakes": [f"m{n}" for n in range(15)]})
    assert _glob(store)["recent_mistakes"] == [f"m{n}" for n in range(5, 15)]
    assert _glob(store)["distinct_mistakes"] == 15


def test_recent_failures_newest_first_by_recorded_time(store: Store, now: datetime) -> None:
    _record(
        store,
        now,
        {"score": 0.1, "task_id": "a", "recorded_at": "2026-11-01T10:00:00Z"},
        {"score": 0.1, "task_id": "b", "recorded_at": "2026-11-01T11:00:00Z"},
        {"score": 0.9, "task_id": "ok"},
        {"score": 0.1, "task_id": "c", "recorded_at": "2026-11-01T09:00:00Z"},
    )
    failures = _glob(store)["recent_failures"]
    assert [f["task_id"] for f in failures] == ["b", "a", "c"]
    assert [f["index"] for f in failures] == [2, 1, 4]
    assert failures[0]["recorded_at"] == "2026-11-01T11:00:00.000000Z"


def test_recorded_at_is_validated(store: Store, now: datetime) -> None:
    with pytest.raises(InvalidInput, match="item 1: recorded_at: must be an ISO-8601"):
        _record(store, now, {"score": 0.1, "recorded_at": "yesterday"})
    assert episodes.count(store) == 0


def test_recording_is_audited(store: Store, now: datetime) -> None:
    docs = _record(store, now, {"task_id": "t", "score": 0.5, "summary": "did it"})
    with store.reading():
        entries = list(audit.entries(store, newest_first=False))
    assert [(e["action"], e["table"], e["record_id"]) for e in entries] == [
        ("record", "episodes", docs[0]["id"])
    ]
    assert entries[0]["summary"] == "episode #1 t score 0.50 (partial): did it"


# -- scrubbing ---------------------------------------------------------------------------
def test_agent_text_is_scrubbed_on_the_way_in(store: Store, now: datetime) -> None:
    key = "sk-" + "A" * 30
    (doc,) = _record(
        store,
        now,
        {
            "score": 0.1,
            "summary": f"used {key} from /home/alice/.env <private>pw=hunter2</private>",
            "mistakes": ["mailed bob@example.com"],
            "successes": ["reached 10.1.2.3"],
            "errors": [{"error_type": "AuthError", "message": "Bearer abc123def456"}],
            "mistake_cards": [
                {
                    "evidence": "token ghp_" + "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2QeX",
                    "lesson": "see /Users/carol",
                }
            ],
            "note": "call 10.0.0.7",
        },
    )
    stored = episodes.get_episode(store, doc["id"])
    text = json.dumps(stored)
    for secret in (key, "alice", "hunter2", "bob@", "10.1.2.3", "ghp_", "carol", "abc123"):
        assert secret not in text
    assert stored["summary"] == "used [redacted:api_key] from [redacted:home_path]/.env"
    assert stored["mistakes"] == ["mailed [redacted:email]"]
    assert stored["successes"] == ["reached [redacted:ipv4]"]
    assert stored["errors"][0]["message"] == "Bearer [redacted:bearer]"
    assert stored["metadata"]["note"] == "call [redacted:ipv4]"
    with store.reading():
        assert distinct.all_texts(store, "mistake") == ["mailed [redacted:email]"]
    assert "bob@example.com" not in json.dumps(_glob(store))


# -- failure memory (docs/MEMORY.md) ----------------------------------------------------------
def test_a_failure_without_errors_gets_a_synthesised_one(store: Store, now: datetime) -> None:
    (doc,) = _record(
        store,
        now,
        {
            "score": 0.2,
            "summary": "secret plan",
            "mistakes": ["leaked it"],
            "phase": "deploy",
            "exit_code": 3,
        },
    )
    assert doc["errors"] == [
        {"error_type": "IterationError", "message": "phase=deploy; exit=3", "resolution": ""}
    ]


def test_synthesised_error_without_phase_or_exit_uses_summary_and_first_mistake(
    store: Store, now: datetime
) -> None:
    docs = _record(
        store,
        now,
        {"score": 0.2, "summary": "deploy rolled back", "mistakes": ["", "skipped canary", "x"]},
        {"score": 0.2, "phase": "test", "summary": "not copied", "detail": "private stuff"},
        {"score": 0.2, "returncode": 137, "message": "free text"},
        {"score": 0.2, "exit": True, "phase": "", "steps": 4},
        {"score": 0.2, "summary": "only a summary"},
        {"score": 0.2, "mistakes": ["only a mistake"], "note": "free text"},
    )
    messages = [d["errors"][0]["message"] for d in docs]
    assert messages == [
        "deploy rolled back; mistake: skipped canary",
        "phase=test",
        "exit=137",
        "score=0.20; steps=4",
        "only a summary",
        "mistake: only a mistake",
    ]
    assert all(d["errors"][0]["error_type"] == "IterationError" for d in docs)
    # Free text beside the known metadata keys is never copied.
    assert not any("free" in m or "private" in m for m in messages)


def test_synthesised_message_is_cut_to_160_keeping_room_for_the_mistake(
    store: Store, now: datetime
) -> None:
    (doc,) = _record(
        store, now, {"score": 0.1, "summary": "S" * 500, "mistakes": ["forgot the lock " * 3]}
    )
    message = doc["errors"][0]["message"]
    assert len(message) == 160
    assert message.startswith("SSS") and "…; mistake: forgot the lock" in message
    (doc,) = _record(store, now, {"score": 0.1, "summary": "short", "mistakes": ["M" * 500]})
    message = doc["errors"][0]["message"]
    assert len(message) == 160 and message.startswith("short; mistake: MMM")
    assert message.endswith("M…")


def test_synthesised_message_comes_from_scrubbed_text(store: Store, now: datetime) -> None:
    (doc,) = _record(
        store,
        now,
        {"score": 0.1, "summary": "mailed bob@example.com", "mistakes": ["sk-" + "A" * 30]},
    )
    assert doc["errors"][0]["message"] == ("mailed [redacted:email]; mistake: [redacted:api_key]")


def test_given_errors_are_kept_and_nothing_is_synthesised(store: Store, now: datetime) -> None:
    (doc,) = _record(
        store,
        now,
        {"score": 0.1, "errors": [{"error_type": "Timeout", "message": "took 30 s"}]},
    )
    assert doc["errors"] == [{"error_type": "Timeout", "message": "took 30 s", "resolution": ""}]


def test_partial_and_success_episodes_get_no_synthesised_error(store: Store, now: datetime) -> None:
    docs = _record(store, now, {"score": 0.5}, {"score": 0.9})
    assert [d["errors"] for d in docs] == [[], []]
    assert _glob(store)["recent_failures"] == []


def test_failure_memory_off_turns_synthesis_off(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_FAILURE_MEMORY", "0")
    (doc,) = _record(store, now, {"score": 0.1, "phase": "x"})
    assert doc["outcome"] == "failure" and doc["errors"] == []
    monkeypatch.setenv("MEMWORK_FAILURE_MEMORY", "1")
    (doc,) = _record(store, now, {"score": 0.1, "phase": "x"})
    assert doc["errors"][0]["message"] == "phase=x"


def test_failure_memory_off_through_the_cli(cli, db: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MEMWORK_FAILURE_MEMORY", "0")
    assert cli("record-episode", stdin='{"score": 0.1}').code == 0
    assert _all(Store(db))[0]["errors"] == []


def test_memwork_now_stamps_new_episodes(cli, db: Path) -> None:  # noqa: ANN001
    cli("record-episode", stdin='{"score": 0.5}', now="2027-01-02T03:04:05Z")
    cli("record-episode", stdin='{"score": 0.5}', now="2027-01-02T03:04:06Z")
    stamps = [e["created_at"] for e in _all(Store(db))]
    assert stamps == ["2027-01-02T03:04:05.000000Z", "2027-01-02T03:04:06.000000Z"]


def test_recorded_at_overrides_the_clock(store: Store, now: datetime) -> None:
    (doc,) = _record(store, now, {"score": 0.5, "recorded_at": "2026-10-31T08:00:00+02:00"})
    assert doc["created_at"] == "2026-10-31T06:00:00.000000Z"
    (doc,) = _record(store, now + timedelta(hours=1), {"score": 0.5})
    assert doc["created_at"] == "2026-11-01T13:00:00.000000Z"
