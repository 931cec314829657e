"""`memwork history`: the audit log, newest first, filtered by table, record and actor."""

from __future__ import annotations

import json

from memwork.core.services import history
from memwork.core.storage.store import Store
from tests.conftest import NOW

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"


def test_history_lists_the_newest_first_and_filters(cli, monkeypatch) -> None:  # noqa: ANN001
    lesson = cli("lesson", "add", "Read the logs first", now=T0).out.strip()
    cli("lesson", "reinforce", lesson, now=T0)
    monkeypatch.setenv("MEMWORK_AGENT", "planner")
    cli("slot", "set", "persona", "Be terse.", now=T0)
    monkeypatch.delenv("MEMWORK_AGENT")
    cli("record-episode", stdin=json.dumps({"task_id": "t", "score": 0.9}), now=T0)

    everything = cli("--json", "history", now=T0).json()
    assert [e["seq"] for e in everything] == [4, 3, 2, 1]
    assert [e["table"] for e in everything] == ["episodes", "slots", "lessons", "lessons"]
    about = cli("--json", "history", "--record", lesson, now=T0).json()
    assert [e["action"] for e in about] == ["reinforce", "add"]
    assert cli("--json", "history", "--record", lesson[-6:], now=T0).json() == about
    assert [e["seq"] for e in cli("--json", "history", "--table", "lessons", now=T0).json()] == [
        2,
        1,
    ]
    by_cli = cli("--json", "history", "--actor", "cli", now=T0).json()
    assert len(by_cli) == 4  # "cli" also names "cli:planner"
    assert [e["actor"] for e in cli("--json", "history", "--actor", "cli:planner").json()] == [
        "cli:planner"
    ]
    assert len(cli("--json", "history", "--limit", "2", now=T0).json()) == 2
    text = cli("history", "--limit", "1", now=T0).out
    assert text.startswith("#4") and "episodes" in text and "record" in text


def test_a_bad_limit_is_refused(cli) -> None:  # noqa: ANN001
    done = cli("history", "--limit", "0")
    assert done.code == 2 and done.err.strip() == "memwork: limit: must be >= 1 (got 0)"


def test_history_reaches_past_a_shard(store: Store) -> None:
    from memwork.core.ledger import audit

    with store.transaction():
        for n in range(1205):
            audit.record(
                store,
                actor="cli" if n % 2 else "tui",
                action="edit",
                table="lessons" if n % 3 else "slots",
                record_id=f"les_{n:05d}",
                summary=f"entry {n}",
                now=NOW,
            )
    newest = history.query(store, limit=3)
    assert [e["seq"] for e in newest] == [1205, 1204, 1203]
    slots = history.query(store, table="slots", actor="tui", limit=None)
    assert len(slots) == len([n for n in range(1205) if n % 3 == 0 and n % 2 == 0])
    assert [e["record_id"] for e in history.query(store, record="les_00007")] == ["les_00007"]
    assert [e["record_id"] for e in history.query(store, record="01204")] == ["les_01204"]
