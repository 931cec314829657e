"""Every line of ``memwork context --format json`` names the records it came from,
and the store can record which lessons and slots a context injected.

Described in core/services/context/sources.py and core/services/context/log.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.storage.store import Store
from tests.conftest import folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOW = "2026-11-01T12:00:00Z"


def _store_with_everything(cli) -> dict:  # noqa: ANN001
    cli("slot", "set", "persona", "You are terse.\nYou cite sources.", now=NOW)
    failed = {
        "task_id": "deploy",
        "score": 0.2,
        "steps": 9,
        "summary": "Rolled back after failed health checks",
        "mistakes": ["Skipped the canary stage"],
        "mistake_cards": [
            {"mistake_type": "skipped_step", "lesson": "Run the canary", "evidence": "4% errors"}
        ],
        "errors": [{"error_type": "HealthCheckFailed", "message": "2 pods failed readiness"}],
    }
    good = {
        "task_id": "deploy",
        "score": 0.95,
        "steps": 4,
        "summary": "Canary, then promoted",
        "successes": ["Watched the canary dashboard"],
    }
    first = cli("record-episode", stdin=json.dumps(failed), now=NOW).out.strip()
    second = cli("record-episode", stdin=json.dumps(good), now=NOW).out.strip()
    # The same mistake again: the rule and the card name both episodes.
    third = cli("record-episode", stdin=json.dumps(failed), now=NOW).out.strip()
    lesson = cli("lesson", "add", "Canary every deploy", "--scope", "task:deploy", now=NOW)
    rule = cli("--json", "rule", "add", "Deploy from main only", now=NOW).json()
    assert cli("consolidate", now=NOW).code == 0  # [HIGH SCORE 0.95] from the good episode
    return {
        "episodes": [first, second, third],
        "lesson": lesson.out.strip(),
        "manual_rule": rule["id"],
    }


def _lines(record: dict) -> dict[str, list[tuple[str, list[dict]]]]:
    return {s["name"]: list(zip(s["lines"], s["sources"], strict=True)) for s in record["sections"]}


def test_every_section_of_the_default_context_has_sources(cli) -> None:  # noqa: ANN001
    made = _store_with_everything(cli)
    first, second, third = made["episodes"]
    record = cli("context", "--task", "deploy", "--format", "json", now=NOW).json()
    lines = _lines(record)
    assert set(lines) == {
        "slots",
        "task_rules",
        "global",
        "mistake_cards",
        "failures",
        "episodes",
        "mean_score",
    }
    for name, pairs in lines.items():
        assert pairs and all(sources for _, sources in pairs), name
    slot_id = cli("--json", "slot", "show", "persona").json()["id"]
    assert [s for _, s in lines["slots"]] == [
        [{"kind": "slot", "id": slot_id, "label": "persona"}]
    ] * 3
    task_rules = dict(lines["task_rules"])
    avoid = task_rules["- [AVOID] Skipped the canary stage"]
    assert avoid[0]["kind"] == "rule" and avoid[1:] == [
        {"kind": "episode", "id": first},
        {"kind": "episode", "id": third},
    ]
    works = task_rules["- [WORKS] Watched the canary dashboard"]
    assert works[1:] == [{"kind": "episode", "id": second}]
    general = dict(lines["global"])
    assert general["- Deploy from main only"] == [{"kind": "rule", "id": made["manual_rule"]}]
    high = general["- [HIGH SCORE 0.95] Canary, then promoted"]
    assert high[1:] == [{"kind": "episode", "id": second}]
    # A lesson scoped to the task is listed under the task.
    assert task_rules["- Canary every deploy"] == [{"kind": "lesson", "id": made["lesson"]}]
    [(_, card)] = lines["mistake_cards"]
    assert card[0]["kind"] == "card"
    assert card[1:] == [{"kind": "episode", "id": first}, {"kind": "episode", "id": third}]
    # Both failures, newest first, each line naming its failed episode.
    assert [(line[:20], s) for line, s in lines["failures"]] == [
        ("- HealthCheckFailed:", [{"kind": "episode", "id": third, "index": 3}]),
        ("- HealthCheckFailed:", [{"kind": "episode", "id": first, "index": 1}]),
    ]
    assert [s for _, s in lines["episodes"]] == [
        [{"kind": "episode", "id": third, "index": 3}],
        [{"kind": "episode", "id": second, "index": 2}],
        [{"kind": "episode", "id": first, "index": 1}],
    ]
    assert lines["mean_score"][0][1] == [{"kind": "task", "id": "deploy"}]


def test_every_section_of_the_episodic_context_has_sources(cli) -> None:  # noqa: ANN001
    made = _store_with_everything(cli)
    first, second, third = made["episodes"]
    record = cli(
        "context", "--task", "deploy", "--style", "episodic", "--format", "json", now=NOW
    ).json()
    lines = _lines(record)
    assert set(lines) == {
        "task_rules",
        "global_rules",
        "mistakes",
        "mistake_cards",
        "episodes",
        "mean_score",
    }
    for name, pairs in lines.items():
        assert pairs and all(sources for _, sources in pairs), name
    # A distinct mistake names the episode that first reported it.
    assert lines["mistakes"] == [
        ("  - AVOID: Skipped the canary stage", [{"kind": "episode", "id": first, "index": 1}])
    ]
    assert [s[0]["id"] for _, s in lines["episodes"]] == [first, second, third]


def test_dropped_lines_keep_their_sources(cli) -> None:  # noqa: ANN001
    made = _store_with_everything(cli)
    record = cli("context", "--task", "deploy", "--format", "json", "--budget", "60").json()
    assert record["dropped"]
    for item in record["dropped"]:
        assert item["sources"], item
    lesson = [d for d in record["dropped"] if d["line"] == "- Canary every deploy"]
    assert lesson[0]["sources"] == [{"kind": "lesson", "id": made["lesson"]}]


def test_rules_and_cards_keep_the_newest_twenty_episodes(cli) -> None:  # noqa: ANN001
    item = {
        "task_id": "t",
        "score": 0.1,
        "steps": 1,
        "summary": "s",
        "mistakes": ["m"],
        "mistake_cards": [{"mistake_type": "x"}],
    }
    ids = cli("record-episode", stdin="\n".join(json.dumps(item) for _ in range(25))).out.split()
    record = cli("context", "--task", "t", "--format", "json").json()
    lines = _lines(record)
    [(_, rule)] = lines["task_rules"]
    [(_, card)] = lines["mistake_cards"]
    assert [s["id"] for s in rule[1:]] == ids[-20:]
    assert [s["id"] for s in card[1:]] == ids[-20:]


# -- recording what was injected ------------------------------------------------------
def _inject_entries(db: Path) -> list[dict]:
    from memwork.core.ledger import audit

    store = Store(db, create=False)
    with store.reading():
        return [e for e in audit.entries(store, newest_first=False) if e["action"] == "inject"]


def test_context_log_records_injected_lessons_and_slots(cli, db: Path) -> None:  # noqa: ANN001
    made = _store_with_everything(cli)
    cli("context", "--task", "deploy", now=NOW)
    assert _inject_entries(db) == []  # off by default
    cli("config", "set", "context_log", "on")
    out = cli("context", "--task", "deploy", now=NOW).out
    assert "Canary every deploy" in out
    entries = _inject_entries(db)
    slot_id = cli("--json", "slot", "show", "persona").json()["id"]
    assert [(e["table"], e["record_id"]) for e in entries] == [
        ("slots", slot_id),
        ("lessons", made["lesson"]),
    ]
    assert (
        entries[0]["summary"] == "injected into context: slot persona (task deploy, default style)"
    )
    assert entries[0]["actor"] == "cli"
    # A budget that keeps the slot (whole, heading included) and drops the lesson.
    cli("context", "--task", "deploy", "--budget", "21", now=NOW)
    assert [e["table"] for e in _inject_entries(db)[2:]] == ["slots"]


def _counts(db: Path) -> dict:
    from memwork.core.services.context.log import injection_counts

    store = Store(db, create=False)
    with store.reading():
        return injection_counts(store)


def test_an_injected_lesson_is_named_in_its_entry_and_counted(cli, db: Path) -> None:  # noqa: ANN001
    made = _store_with_everything(cli)
    cli("config", "set", "context_log", "on")
    assert _counts(db) == {}
    for hour in ("12", "13", "14"):
        cli("context", "--task", "deploy", now=f"2026-11-01T{hour}:00:00Z")
    lesson_entry = next(e for e in _inject_entries(db) if e["table"] == "lessons")
    # The entry says which lesson, not only that one was injected.
    assert lesson_entry["summary"] == (
        "injected into context: lesson “Canary every deploy” (task deploy, default style)"
    )
    counts = _counts(db)
    assert counts[made["lesson"]] == {"count": 3, "last": "2026-11-01T14:00:00.000000Z"}
    slot_id = cli("--json", "slot", "show", "persona").json()["id"]
    assert counts[slot_id]["count"] == 3
    # A context whose budget drops the lesson counts only what it injected.
    cli("context", "--task", "deploy", "--budget", "16", now=NOW)
    assert _counts(db)[made["lesson"]]["count"] == 3
    assert _counts(db)[slot_id]["count"] == 4


@pytest.mark.folder_only
def test_injections_logged_before_the_counts_existed_are_counted(cli, db: Path) -> None:  # noqa: ANN001
    from memwork.core.services.context.log import COUNTS_ID, META

    made = _store_with_everything(cli)
    cli("config", "set", "context_log", "on")
    cli("context", "--task", "deploy", now=NOW)
    cli("context", "--task", "deploy", now=NOW)
    store = Store(db, create=False)
    with store.transaction():  # as a store written by an older memwork holds it
        store.delete(META, [COUNTS_ID])
    assert _counts(db) == {}
    cli("context", "--task", "deploy", now=NOW)
    assert _counts(db)[made["lesson"]]["count"] == 3


def test_context_without_the_log_writes_nothing(cli, db: Path) -> None:  # noqa: ANN001
    _store_with_everything(cli)
    before = folder_digest(db)
    cli("context", "--task", "deploy", "--format", "json")
    assert folder_digest(db) == before


def test_a_store_that_cannot_take_the_log_still_gets_its_context(
    cli, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    _store_with_everything(cli)
    cli("config", "set", "context_log", "on")
    from memwork.core.base.errors import StoreWriteFailed
    from memwork.core.storage.store import Store as RealStore

    def refuse(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        raise StoreWriteFailed("the store at x is read-only for this user; nothing was written")

    monkeypatch.setattr(RealStore, "transaction", refuse)
    done = cli("context", "--task", "deploy")
    assert done.code == 0 and "Canary every deploy" in done.out
    assert done.err.startswith("memwork: context not logged: the store at x is read-only")
