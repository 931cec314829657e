"""The workbench's edits as CLI verbs: cards, lesson edit and merge, rules on/off, slot
create/move/lock, and any record read whole by the id a search names it by."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import curator_args, folder_digest

NOW = "2026-11-01T12:00:00Z"
FAILED = {
    "task_id": "deploy-api",
    "score": 0.2,
    "steps": 4,
    "summary": "Rolled back after failed health checks",
    "mistakes": ["Skipped the canary stage"],
    "mistake_cards": [
        {
            "mistake_type": "skipped_canary",
            "bad_decision": "deployed to all pods",
            "correct_decision": "canary first",
            "lesson": "Canary every deploy",
        },
        {
            "mistake_type": "no_canary",
            "bad_decision": "deployed at once",
            "correct_decision": "canary",
            "lesson": "Start with a canary",
        },
    ],
}


def _cards(cli) -> list[dict]:  # noqa: ANN001
    return cli("--json", "card", "list", now=NOW).json()


def test_cards_can_be_listed_shown_edited_and_merged(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("record-episode", stdin=json.dumps(FAILED), now=NOW).code == 0
    cards = _cards(cli)
    assert {c["mistake_type"] for c in cards} == {"skipped_canary", "no_canary"}
    keep, absorb = cards[0]["id"], cards[1]["id"]
    shown = cli("card", "show", keep, now=NOW)
    assert shown.code == 0 and "correct_decision" in shown.out

    edited = cli("--json", "card", "edit", keep, "--lesson", "Canary, then widen", now=NOW)
    assert edited.json()["lesson"] == "Canary, then widen"
    merged = cli("--json", "card", "merge", keep, absorb, now=NOW).json()
    assert merged["seen_count"] == 2 and merged["merged_from"] == [absorb]
    assert [c["id"] for c in _cards(cli)] == [keep]
    # The absorbed card's id still finds the card that absorbed it.
    assert cli("--json", "card", "show", absorb, now=NOW).json()["id"] == keep
    history = cli("--json", "history", "--table", "mistake_cards", now=NOW).json()
    assert [e["action"] for e in history[:2]] == ["merge", "edit"]


def test_a_card_merged_into_itself_is_refused_and_nothing_changes(cli, db: Path) -> None:  # noqa: ANN001
    cli("record-episode", stdin=json.dumps(FAILED), now=NOW)
    keep = _cards(cli)[0]["id"]
    before = folder_digest(db)
    done = cli("card", "merge", keep, keep, now=NOW)
    assert done.code == 2 and done.err == "memwork: cannot merge a card into itself\n"
    assert folder_digest(db) == before


def test_lessons_can_be_edited_and_near_duplicates_merged(cli) -> None:  # noqa: ANN001
    first = cli("lesson", "add", "Canary every deploy for fifteen minutes", now=NOW).out.strip()
    second = cli(
        "lesson", "add", "Canary each deploy", "--on-duplicate", "keep-both", now=NOW
    ).out.strip()
    edited = cli(
        "--json", "lesson", "edit", first, "--text", "Canary every deploy for 15 min", now=NOW
    ).json()
    assert edited["content"] == "Canary every deploy for 15 min"
    assert edited["wordings"] == ["Canary every deploy for fifteen minutes"]
    merged = cli("--json", "lesson", "merge", first, second, now=NOW).json()
    assert merged["id"] == first and "Canary each deploy" in merged["wordings"]
    live = cli("--json", "lesson", "list", now=NOW).json()
    assert [x["id"] for x in live] == [first]
    assert cli("--json", "lesson", "show", second, now=NOW).json()["superseded_by"] == first


def test_pinning_and_editing_an_unknown_lesson_is_not_found(cli) -> None:  # noqa: ANN001
    done = cli("lesson", "edit", "les_nope", "--text", "x", now=NOW)
    assert done.code == 2 and done.err == "memwork: lesson not found: les_nope\n"


def test_rules_can_be_switched_off_and_on(cli) -> None:  # noqa: ANN001
    rule = cli("--json", "rule", "add", "Read the runbook first", now=NOW).json()
    off = cli("--json", "rule", "deactivate", rule["id"], now=NOW).json()
    assert off["active"] is False
    assert cli("--json", "rule", "list", now=NOW).json() == []
    assert "Read the runbook first" not in cli("context", now=NOW).out
    on = cli("--json", "rule", "activate", rule["id"], now=NOW).json()
    assert on["active"] is True
    assert "Read the runbook first" in cli("context", now=NOW).out


def test_slots_can_be_created_moved_and_locked(cli, db: Path) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "Be terse.", now=NOW)
    created = cli("--json", "slot", "create", "rules", "--limit", "100", now=NOW).json()
    assert created["content"] == "" and created["limit"] == 100
    again = cli("slot", "create", "rules", now=NOW)
    assert again.code == 2 and "already exists" in again.err
    moved = cli("--json", "slot", "move", "rules", "0", now=NOW).json()
    assert moved["position"] == 0
    assert [s["label"] for s in cli("--json", "slot", "list", now=NOW).json()] == [
        "rules",
        "persona",
    ]
    assert cli("--json", "slot", "lock", "persona", now=NOW).json()["read_only"] is True
    before = folder_digest(db)
    refused = cli("slot", "append", "persona", "More.", now=NOW)
    assert refused.code == 2 and folder_digest(db) == before
    assert cli("--json", "slot", "unlock", "persona", now=NOW).json()["read_only"] is False
    assert cli("slot", "append", "persona", "More.", now=NOW).code == 0


def test_every_kind_of_search_hit_can_be_read_whole(cli) -> None:  # noqa: ANN001
    sid = cli("session", "start", "--title", "canary rollout", now=NOW).out.strip()
    cli("observe", "--session", sid, "checked the canary dashboard", now=NOW)
    cli("wm", "--session", sid, "set", "canary_pods", "3", now=NOW)
    cli("wm", "--session", sid, "task", "--id", "canary-task", "--description", "canary", now=NOW)
    cli("wm", "--session", sid, "scratch", "add", "canary looks fine", now=NOW)
    cli("record-episode", stdin=json.dumps(FAILED), now=NOW)
    cli("lesson", "add", "Canary every deploy", now=NOW)
    cli("rule", "add", "Watch the canary", now=NOW)
    cli("slot", "set", "canary-notes", "The canary runs on pod 7.", now=NOW)
    cli("checkpoint", "create", "-m", "before the canary", now=NOW)
    hits = cli("--json", "search", "canary", "--limit", "50", now=NOW).json()
    kinds = {h["kind"] for h in hits}
    assert kinds >= {"lesson", "rule", "card", "episode", "observation", "slot", "wm", "session"}
    assert "checkpoint" in kinds
    for hit in hits:
        got = cli("--json", "get", hit["id"], now=NOW)
        assert got.code == 0, (hit, got.err)
        record = got.json()
        assert record["kind"] == hit["kind"] and record["id"] == hit["id"], hit
        assert record["record"], hit
    session = cli("get", sid, now=NOW).json()["record"]
    assert session["observations"][0]["content"] == "checked the canary dashboard"
    task = cli("get", f"{sid}/task", now=NOW).json()["record"]
    assert task["task"]["task_id"] == "canary-task"


def test_reading_an_unknown_id_is_not_found(cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "x y z", now=NOW)
    for key in ("les_nope", "nothing-like-it", "ses_nope/obs_nope", "run-1/scratch/9"):
        done = cli("get", key, now=NOW)
        assert done.code == 2 and "not found" in done.err, key


def test_agents_edits_of_words_wait_for_review(cli, db: Path) -> None:  # noqa: ANN001
    lesson = cli("lesson", "add", "Canary every deploy", now=NOW).out.strip()
    cli("record-episode", stdin=json.dumps(FAILED), now=NOW)
    card = _cards(cli)[0]["id"]
    cli("config", "set", "review", "on", now=NOW)

    proposed = cli("--json", "lesson", "edit", lesson, "--text", "Never canary", now=NOW).json()
    assert proposed["proposed"] is True and proposed["op"] == "edit"
    assert proposed["before"] == "Canary every deploy" and proposed["after"] == "Never canary"
    assert cli("--json", "lesson", "show", lesson, now=NOW).json()["content"] == (
        "Canary every deploy"
    )
    # Tags and confidence change no words the context shows: they go live.
    tagged = cli("--json", "lesson", "edit", lesson, "--tag", "ops", now=NOW).json()
    assert tagged["tags"] == ["ops"] and "proposed" not in tagged
    card_edit = cli("--json", "card", "edit", card, "--lesson", "Deploy all at once", now=NOW)
    assert card_edit.json()["proposed"] is True
    text = cli("card", "edit", card, "--evidence", "pods 1-40", now=NOW)
    assert text.out.startswith("proposed prop_")

    pending = cli("--json", "review", "list", now=NOW).json()
    assert [p["change"] for p in pending] == [
        f"edit lesson {lesson}: Never canary",
        f"edit card {card}: Deploy all at once",
        f"edit card {card}: pods 1-40",
    ]
    approved = cli(
        *curator_args(),
        "--json",
        "review",
        "approve",
        pending[0]["id"],
        "--edit",
        "Canary, then widen",
        now=NOW,
    ).json()
    assert approved["result"] == f"edited lesson {lesson}" and approved["edited"] is True
    assert cli("--json", "lesson", "show", lesson, now=NOW).json()["content"] == (
        "Canary, then widen"
    )
    cli(*curator_args(), "review", "approve", pending[1]["id"], now=NOW)
    assert cli("--json", "card", "show", card, now=NOW).json()["lesson"] == "Deploy all at once"
    merged = cli(*curator_args(), "review", "merge", pending[2]["id"], lesson, now=NOW)
    assert merged.code == 2 and "only proposed lessons can be merged" in merged.err
