"""The review queue: agents' lesson adds and slot edits wait for a person while review is on.

Described in core/services/review.py and docs/CONCEPTS.md (Curation).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from memwork.core.domain import lessons, slots
from memwork.core.ledger import config
from memwork.core.services import review
from memwork.core.storage.store import Store
from tests.conftest import curator_args, curator_for, folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOW = "2026-11-01T12:00:00Z"


def _on(cli) -> None:  # noqa: ANN001
    assert cli("config", "set", "review", "on").code == 0


def _pending(cli) -> list[dict]:  # noqa: ANN001
    return cli("review", "list", "--json").json()


def _audit(db: Path) -> list[dict]:
    store = Store(db, create=False)
    from memwork.core.ledger import audit

    with store.reading():
        return list(audit.entries(store, newest_first=False))


def test_off_by_default_agents_write_live(cli) -> None:  # noqa: ANN001
    added = cli("lesson", "add", "Pin the image digest")
    assert added.code == 0 and added.out.startswith("les_")
    assert cli("config", "get", "review").out == "off\n"
    assert cli("review", "list", "--json").json() == []


def test_a_lesson_from_an_agent_becomes_a_proposal(cli, db: Path) -> None:  # noqa: ANN001
    _on(cli)
    done = cli("lesson", "add", "Pin the image digest", "--scope", "task:deploy", now=NOW)
    assert done.code == 0
    [proposal] = _pending(cli)
    assert done.out == f"proposed {proposal['id']}, waiting for review\n"
    assert proposal["kind"] == "lesson" and proposal["op"] == "add"
    assert proposal["target"] == "task:deploy" and proposal["proposed_by"] == "cli"
    assert proposal["change"] == "add lesson (task:deploy): Pin the image digest"
    assert proposal["created_at"].startswith("2026-11-01T12:00:00")
    # Not a lesson, not in the context.
    assert cli("lesson", "list", "--all", "--json").json() == []
    assert cli("context", "--task", "deploy").out == ""
    # The agent's id is who proposed it.
    done = cli("lesson", "add", "Roll back at the first failed check", now=NOW)
    assert done.code == 0
    entries = _audit(db)
    assert [e["action"] for e in entries] == ["curator", "config", "propose", "propose"]


def test_json_of_a_proposed_write(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    _on(cli)
    monkeypatch.setenv("MEMWORK_AGENT", "deployer")
    record = cli("--json", "lesson", "add", "Pin the image digest").json()
    assert record["proposed"] is True and record["status"] == "pending"
    assert record["proposed_by"] == "cli:deployer" and record["id"].startswith("prop_")


def test_slot_writes_become_proposals_with_a_diff(cli) -> None:  # noqa: ANN001
    assert cli("slot", "set", "persona", "You are terse.\nYou cite sources.").code == 0
    _on(cli)
    for args in (
        ("slot", "set", "persona", "You are terse.\nYou cite sources.\nYou ask first."),
        ("slot", "append", "persona", "You ask first."),
        ("slot", "replace", "persona", "terse", "brief"),
        ("slot", "set", "goals", "Ship v2"),
    ):
        done = cli(*args)
        assert done.code == 0 and done.out.startswith("proposed prop_"), done
    assert cli("slot", "show", "persona").out == "You are terse.\nYou cite sources.\n"
    assert cli("slot", "show", "goals").code == 2  # not created
    first, second, third, fourth = _pending(cli)
    assert [p["op"] for p in (first, second, third, fourth)] == ["set", "append", "replace", "set"]
    assert first["diff"] == [
        "@@ -1,2 +1,3 @@",
        " You are terse.",
        " You cite sources.",
        "+You ask first.",
    ]
    assert second["after"] == "You are terse.\nYou cite sources.\nYou ask first."
    assert third["diff"] == [
        "@@ -1,2 +1,2 @@",
        "-You are terse.",
        "+You are brief.",
        " You cite sources.",
    ]
    assert fourth["before"] == "" and fourth["flags"] == ["creates slot goals"]
    context = cli("context").out
    assert "ask first" not in context and "brief" not in context and "Ship v2" not in context


def test_a_proposal_the_store_would_refuse_is_refused_at_once(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("slot", "set", "persona", "short", "--limit", "10").code == 0
    _on(cli)
    before = folder_digest(db)
    for args, message in (
        (("lesson", "add", "   "), "memwork: content: must not be empty\n"),
        (("lesson", "add", "x", "--scope", "team:a"), "scope"),
        (("lesson", "add", "x", "--confidence", "2"), "confidence"),
        (("slot", "append", "persona", "far too long for it"), "over the slot's limit of 10"),
        (("slot", "replace", "persona", "absent", "x"), "does not occur in slot persona"),
        (("slot", "append", "nothing-here", "x"), "slot not found: nothing-here"),
        (("slot", "set", "bad label!", "x"), "label"),
    ):
        done = cli(*args)
        assert done.code == 2, args
        assert message in done.err and done.err.count("\n") == 1, done.err
    assert folder_digest(db) == before


def test_approve_makes_it_live_and_is_audited(cli, db: Path) -> None:  # noqa: ANN001
    _on(cli)
    cli("lesson", "add", "Pin the image digest", "--scope", "task:deploy", "--tag", "infra")
    [proposal] = _pending(cli)
    done = cli(*curator_args(), "review", "approve", proposal["id"][-6:])
    assert done.code == 0
    [lesson] = cli("lesson", "list", "--json").json()
    assert done.out == f"approved {proposal['id']}: created lesson {lesson['id']}\n"
    assert lesson["content"] == "Pin the image digest" and lesson["scope"] == "task:deploy"
    assert lesson["tags"] == ["infra"]
    assert "Pin the image digest" in cli("context", "--task", "deploy").out
    assert _pending(cli) == []
    [decided] = cli("review", "list", "--all", "--json").json()
    assert decided["status"] == "approved" and decided["result_id"] == lesson["id"]
    assert decided["decided_by"] == "cli" and decided["edited"] is False
    actions = [(e["action"], e["table"]) for e in _audit(db)]
    assert actions[-3:] == [("propose", "proposals"), ("add", "lessons"), ("approve", "proposals")]
    assert "proposed by cli" in _audit(db)[-1]["summary"]
    # Decided once: a second decision is refused and changes nothing.
    before = folder_digest(db)
    again = cli(*curator_args(), "review", "approve", proposal["id"])
    assert (
        again.code == 2
        and again.err == f"memwork: proposal {proposal['id']} was already approved\n"
    )
    assert cli(*curator_args(), "review", "reject", proposal["id"]).code == 2
    assert folder_digest(db) == before


def test_approve_with_an_edit(cli) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "You are terse.")
    _on(cli)
    cli("lesson", "add", "pin digests")
    cli("slot", "append", "persona", "You ask frist.")
    lesson_p, slot_p = _pending(cli)
    done = cli(
        *curator_args(),
        "review",
        "approve",
        lesson_p["id"],
        "--edit",
        "Pin image digests in every deploy",
    )
    assert done.code == 0 and "(edited)" in done.out
    assert [x["content"] for x in cli("lesson", "list", "--json").json()] == [
        "Pin image digests in every deploy"
    ]
    assert (
        cli(*curator_args(), "review", "approve", slot_p["id"], "--edit", "You ask first.").code
        == 0
    )
    assert cli("slot", "show", "persona").out == "You are terse.\nYou ask first.\n"
    decided = {p["id"]: p for p in cli("review", "list", "--all", "--json").json()}
    assert decided[slot_p["id"]]["edited"] is True
    assert decided[slot_p["id"]]["args"]["text"] == "You ask first."
    assert cli(*curator_args(), "review", "approve", "nope-not-here").code == 2


def test_reject_keeps_the_reason_and_changes_nothing_else(cli, db: Path) -> None:  # noqa: ANN001
    _on(cli)
    cli("lesson", "add", "Skip the canary for hotfixes")
    [proposal] = _pending(cli)
    done = cli(
        *curator_args(), "review", "reject", proposal["id"], "--why", "canaries are never optional"
    )
    assert done.code == 0 and done.out == f"rejected {proposal['id']}\n"
    assert cli("lesson", "list", "--all", "--json").json() == []
    [decided] = cli("review", "list", "--all", "--json").json()
    assert decided["status"] == "rejected" and decided["why"] == "canaries are never optional"
    assert _audit(db)[-1]["action"] == "reject"
    assert "canaries are never optional" in _audit(db)[-1]["summary"]


def test_a_long_reason_is_kept_whole_but_listed_on_one_line(cli) -> None:  # noqa: ANN001
    _on(cli)
    cli("lesson", "add", "Skip the canary for hotfixes")
    [proposal] = _pending(cli)
    why = "canaries catch what tests miss; " * 200
    assert cli(*curator_args(), "review", "reject", proposal["id"], "--why", why).code == 0
    listed = cli("review", "list", "--all").out.splitlines()
    assert max(len(line) for line in listed) < 200
    assert why.strip() in cli("review", "show", proposal["id"]).out
    assert cli("review", "list", "--all", "--json").json()[0]["why"] == why.strip()


def test_merge_reinforces_a_lesson_instead(cli) -> None:  # noqa: ANN001
    live = cli("--json", "lesson", "add", "Run the canary for fifteen minutes").json()
    _on(cli)
    cli("lesson", "add", "Keep the canary running 15 minutes", "--tag", "deploy")
    [proposal] = _pending(cli)
    done = cli(*curator_args(), "review", "merge", proposal["id"], live["id"])
    assert (
        done.code == 0 and done.out == f"merged {proposal['id']}: reinforced lesson {live['id']}\n"
    )
    [lesson] = cli("lesson", "list", "--json").json()
    assert lesson["id"] == live["id"] and lesson["reinforcements"] == 1
    assert lesson["confidence"] == pytest.approx(0.55)
    assert lesson["wordings"] == ["Keep the canary running 15 minutes"]
    assert lesson["tags"] == ["deploy"]
    [decided] = cli("review", "list", "--all", "--json").json()
    assert decided["status"] == "merged" and decided["result_id"] == live["id"]
    # Only lessons merge.
    cli("slot", "set", "persona", "x")
    [slot_p] = _pending(cli)
    refused = cli(*curator_args(), "review", "merge", slot_p["id"], live["id"])
    assert refused.code == 2 and "only proposed lessons can be merged" in refused.err


def test_list_flags_a_near_duplicate_and_names_the_nearest_lesson(cli) -> None:  # noqa: ANN001
    live = cli("--json", "lesson", "add", "Always run the tests before deploying").json()
    _on(cli)
    cli("lesson", "add", "Always run all the tests before deploying")
    [proposal] = _pending(cli)
    assert proposal["duplicate_of"] == live["id"]
    assert proposal["flags"] == [f"near-duplicate (100) of {live['id']}"]
    assert proposal["nearest"]["id"] == live["id"]
    text = cli("review", "list").out
    assert f"! near-duplicate (100) of {live['id']}" in text
    # Approving keeps both (similar words may be new advice) unless the agent asked to
    # reinforce; the same text reinforces.
    assert proposal["approve_reinforces"] is False
    cli("lesson", "add", "Always run all the tests before deploying", "--on-duplicate", "reinforce")
    cli("lesson", "add", "always run the TESTS before deploying")
    asked, same = _pending(cli)[1:]
    assert asked["approve_reinforces"] is True and same["approve_reinforces"] is True
    assert cli(*curator_args(), "review", "approve", proposal["id"]).code == 0
    assert len(cli("--json", "lesson", "list").json()) == 2


def test_a_stale_slot_proposal_stays_pending_when_approval_fails(cli, db: Path) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "You are terse.")
    _on(cli)
    cli("slot", "replace", "persona", "terse", "brief")
    [proposal] = _pending(cli)
    cli(*curator_args(), "config", "set", "review", "off")
    cli("slot", "set", "persona", "You are kind.")  # an agent changed it meanwhile
    [listed] = _pending(cli)
    assert listed["stale"] == "old: 'terse' does not occur in slot persona"
    before = folder_digest(db)
    done = cli(*curator_args(), "review", "approve", proposal["id"])
    assert done.code == 2 and "does not occur" in done.err
    assert folder_digest(db) == before
    assert _pending(cli)[0]["status"] == "pending"


def test_a_stale_slot_proposal_can_be_approved_as_a_whole_slot_edit(cli, db: Path) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "You are terse.")
    _on(cli)
    cli("slot", "replace", "persona", "terse", "brief")
    [proposal] = _pending(cli)
    cli(*curator_args(), "config", "set", "review", "off")
    cli("slot", "set", "persona", "You are kind.")  # the text it replaces is gone
    [listed] = _pending(cli)
    # The reviewer sees what the slot says now, to write the whole of it.
    assert listed["stale"] and listed["before"] == "You are kind."
    # An edit of the replacement alone would fail the same way; the whole slot does not.
    assert cli(*curator_args(), "review", "approve", proposal["id"], "--edit", "brief").code == 2
    before = folder_digest(db)
    assert (
        cli(*curator_args(), "review", "approve", proposal["id"], "--whole-slot").code == 2
    )  # no text
    assert folder_digest(db) == before
    done = cli(
        *curator_args(),
        "review",
        "approve",
        proposal["id"],
        "--edit",
        "You are kind and brief.",
        "--whole-slot",
    )
    assert done.code == 0, done.err
    assert "the whole slot, instead of the proposed replace" in done.out
    assert cli("slot", "show", "persona").out == "You are kind and brief.\n"
    decided = cli("review", "show", proposal["id"], "--json").json()
    assert decided["status"] == "approved" and decided["edited"] is True
    assert decided["args"] == {"label": "persona", "content": "You are kind and brief."}
    # A lesson cannot become a slot edit.
    _on(cli)
    cli("lesson", "add", "pin digests")
    [lesson_p] = _pending(cli)
    refused = cli(
        *curator_args(), "review", "approve", lesson_p["id"], "--edit", "x", "--whole-slot"
    )
    assert refused.code == 2 and "whole_slot" in refused.err


def test_read_verbs_create_no_store(cli, db: Path) -> None:  # noqa: ANN001
    for args in (
        ("review", "list"),
        ("review", "show", "prop_x"),
        ("config", "get", "review"),
        ("config", "list"),
        ("lint",),
    ):
        done = cli(*args)
        assert done.code == 2 and done.err == f"memwork: no memwork store at {db}\n", args
    assert folder_digest(db) == {}  # nothing at all was created (no folder, no keys)


def test_the_curator_writes_live_agents_propose(store: Store, now: datetime) -> None:
    key = curator_for(store, now)
    config.set_value(store, "review", "on", now=now, actor="tui")
    # Naming oneself is no claim: "tui" without the key is an agent like any other.
    for actor in ("cli", "cli:builder", "mcp", "mcp:claude", "api", "api:harness", "tui"):
        assert review.submit_lesson(store, f"Lesson from {actor}", now=now, actor=actor).proposed
    direct = review.submit_lesson(store, "Written by a person", now=now, actor="tui", curator=key)
    assert not direct.proposed and direct.result.lesson["content"] == "Written by a person"
    slot = review.submit_slot(
        store, "set", "persona", content="hi", now=now, actor="tui", curator=key
    )
    assert not slot.proposed and slots.get_slot(store, "persona")["content"] == "hi"
    assert [x["content"] for x in lessons.list_lessons(store, now)] == ["Written by a person"]
    assert review.pending_count(store) == 7
