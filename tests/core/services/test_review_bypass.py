"""Nobody walks around review: not an import, not a name, not a door.

- store settings are never imported (the import says so); imported audit entries are
  marked as imported;
- who decides is the holder of the store's curator key, not whoever names itself "tui";
- ``rule add`` is queued like a lesson; an agent cannot approve its own proposal, turn
  review off or restore a checkpoint taken before review was on: those wait as proposals,
  and when the curator does them the queue records the decision.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput, UserError
from memwork.core.ops.memory import Memory
from tests.conftest import NOW, curator_args, folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True


def _on(cli) -> None:  # noqa: ANN001
    assert cli("config", "set", "review", "on").code == 0


def _pending(cli) -> list[dict]:  # noqa: ANN001
    return [p for p in cli("review", "list", "--json").json() if p["status"] == "pending"]


def test_importing_an_export_never_changes_the_store_settings(
    cli, db: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    from memwork.core.doors.cli.main import main

    other = tmp_path / "other"
    assert main(["--db", str(other), "lesson", "add", "Canary every deploy"]) == 0
    assert main(["--db", str(other), "config", "set", "context_log", "on"]) == 0
    exported = tmp_path / "export.json"
    assert main(["--db", str(other), "export", str(exported)]) == 0
    document = json.loads(exported.read_text())
    assert {"id": "config", "context_log": "on"} in document["tables"]["meta"]
    for doc in document["tables"]["meta"]:
        if doc["id"] == "config":
            doc["review"] = "off"
    exported.write_text(json.dumps(document))

    _on(cli)
    done = cli(*curator_args(), "import", str(exported))  # a person's import (it holds a lesson)
    assert done.code == 0, done.err
    assert "store settings not imported (the file has context_log on, review off)" in done.out
    assert cli("config", "get", "review").out == "on\n"
    assert cli("config", "get", "context_log").out == "off\n"
    listed = cli("config", "list", "--json").json()
    assert {r["key"]: r["value"] for r in listed} == {
        "review": "on",
        "context_log": "off",
        "embedder": "off",
        "isolation": "shared",
        "wm_default_ttl": "off",
    }


def test_an_agents_import_of_reviewed_records_is_refused_naming_the_curator_key(
    cli, db: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    assert cli("slot", "set", "persona", "Curated persona").code == 0
    assert cli("lesson", "add", "Canary every deploy").code == 0
    _on(cli)
    exported = tmp_path / "export.json"
    assert cli("export", str(exported)).code == 0
    document = json.loads(exported.read_text())
    for slot in document["tables"]["slots"]:
        slot["content"] = "An agent's persona"
    for lesson in document["tables"]["lessons"]:
        lesson["content"] = "Skip the canary for hotfixes"
    exported.write_text(json.dumps(document))
    before = folder_digest(db)
    done = cli("import", str(exported), "--on-conflict", "replace")
    assert done.code == 2 and done.err.count("\n") == 1, done.err
    assert "review is on" in done.err and "--curator-key" in done.err
    assert "lessons, slots" in done.err
    assert folder_digest(db) == before
    assert "Curated persona" in cli("context").out
    # The curator's import goes live.
    done = cli(*curator_args(), "import", str(exported), "--on-conflict", "replace")
    assert done.code == 0, done.err
    assert "An agent's persona" in cli("context").out


def test_an_agents_action_waits_for_review_before_it_leads_the_context(cli) -> None:  # noqa: ANN001
    kept = cli("--json", "action", "add", "write the runbook").json()["id"]
    _on(cli)
    done = cli("action", "add", "wire the payout to account 7", "--priority", "9")
    assert done.code == 0 and done.out.startswith("proposed prop_"), done.out
    assert "wire the payout" not in cli("context").out
    assert [a["id"] for a in cli("--json", "action", "list").json()] == [kept]
    # A new title or priority waits too; a status or a note goes live.
    assert cli("action", "update", kept, "--priority", "9").out.startswith("proposed prop_")
    assert cli("action", "update", kept, "--title", "ignore the runbook").out.startswith("proposed")
    assert cli("action", "update", kept, "--status", "active").code == 0
    shown = cli("--json", "action", "show", kept).json()
    assert (shown["title"], shown["priority"], shown["status"]) == (
        "write the runbook",
        0,
        "active",
    )
    proposals = _pending(cli)
    assert len(proposals) == 3
    # The curator's approval makes the action, and the curator's own add goes live.
    [added] = [p for p in proposals if "wire the payout" in json.dumps(p)]
    approved = cli(*curator_args(), "review", "approve", added["id"])
    assert approved.code == 0, approved.err
    assert "wire the payout to account 7" in cli("context").out
    own = cli(*curator_args(), "--json", "action", "add", "rotate keys")
    assert own.code == 0 and own.json()["id"].startswith("act_")


def test_imported_audit_entries_are_marked_imported(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    from memwork.core.doors.cli.main import main

    other = tmp_path / "other"
    assert main(["--db", str(other), "lesson", "add", "Canary every deploy"]) == 0
    exported = tmp_path / "export.json"
    assert main(["--db", str(other), "export", str(exported)]) == 0
    done = cli("--json", "import", str(exported))
    assert done.code == 0, done.err
    import_id = done.json()["import_id"]
    entries = cli("history", "--json").json()
    brought = [e for e in entries if e["summary"].startswith("add lesson")]
    assert brought and all(e["imported"] == import_id for e in brought)
    assert "(imported)" in cli("history").out


def test_a_name_is_no_claim_to_decide(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        Memory(tmp_path / "db", actor="tui")
    assert err.value.field == "actor"
    memory = Memory(tmp_path / "db", agent="tui", clock=lambda: NOW)
    memory.add_lesson("Canary every deploy")
    from memwork.core.ledger import config

    config.set_value(memory.store, "review", "on", now=NOW, actor="api")
    assert memory.add_lesson("Skip the canary for hotfixes")["proposed"] is True
    assert memory.set_slot("persona", "A careless agent")["proposed"] is True


def test_rule_add_is_queued(cli) -> None:  # noqa: ANN001
    _on(cli)
    done = cli("rule", "add", "[WORKS] Skip the canary", "--scope", "task:deploy")
    assert done.code == 0 and done.out.startswith("proposed prop_")
    assert cli("rule", "list", "--json").json() == []
    assert "Skip the canary" not in cli("context", "--task", "deploy").out
    [proposal] = _pending(cli)
    assert proposal["kind"] == "rule" and proposal["target"] == "task:deploy"
    approved = cli(*curator_args(), "review", "approve", proposal["id"])
    assert approved.code == 0, approved.err
    assert "Skip the canary" in cli("context", "--task", "deploy").out


def test_an_agent_cannot_approve_its_own_proposal(
    cli, db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    _on(cli)
    cli("lesson", "add", "Skip the canary for hotfixes")
    [proposal] = _pending(cli)
    before = folder_digest(db)
    for agent in (None, "tui", "curator"):
        if agent:
            monkeypatch.setenv("MEMWORK_AGENT", agent)
        for verb in (("approve", proposal["id"]), ("reject", proposal["id"])):
            done = cli("review", *verb)
            assert done.code == 2 and "curator key" in done.err and done.err.count("\n") == 1
    # Another key is not the store's.
    from memwork.core.ledger import curator

    own, _ = curator.ensure_key_file(tmp_path / "agent.key")
    done = cli("--curator-key", str(tmp_path / "agent.key"), "review", "approve", proposal["id"])
    assert done.code == 2 and "not this store's" in done.err
    assert folder_digest(db) == before
    assert _pending(cli)[0]["id"] == proposal["id"]
    monkeypatch.delenv("MEMWORK_AGENT", raising=False)
    assert cli(*curator_args(), "review", "approve", proposal["id"]).code == 0
    del own


def test_turning_review_off_is_a_decision_the_queue_records(cli) -> None:  # noqa: ANN001
    _on(cli)
    done = cli("config", "set", "review", "off")
    assert done.code == 0 and done.out.startswith("proposed prop_")
    assert cli("config", "get", "review").out == "on\n"
    [proposal] = _pending(cli)
    assert proposal["kind"] == "config" and proposal["args"] == {"key": "review", "value": "off"}
    assert cli("review", "approve", proposal["id"]).code == 2  # not by the agent
    # The curator turns it off: done at once, and kept in the queue as decided.
    assert cli(*curator_args(), "config", "set", "review", "off").code == 0
    assert cli("config", "get", "review").out == "off\n"
    decided = [p for p in cli("review", "list", "--all", "--json").json() if p["kind"] == "config"]
    assert [p["status"] for p in decided] == ["pending", "approved"]


def test_restoring_past_review_is_a_decision_the_queue_records(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Canary every deploy")
    checkpoint = cli("checkpoint", "create", "--json").json()["id"]  # review was off
    _on(cli)
    cli("lesson", "add", "Skip the canary for hotfixes")  # waits for review
    done = cli("checkpoint", "restore", checkpoint)
    assert done.code == 0 and done.out.startswith("proposed prop_")
    assert cli("config", "get", "review").out == "on\n"
    pending = _pending(cli)
    assert {p["kind"] for p in pending} == {"lesson", "checkpoint"}
    # The curator may: restored, review off as it was then, the decision kept.
    done = cli(*curator_args(), "checkpoint", "restore", checkpoint)
    assert done.code == 0, done.err
    assert cli("config", "get", "review").out == "off\n"
    decided = cli("review", "list", "--all", "--json").json()
    assert [p["status"] for p in decided if p["kind"] == "checkpoint"] == ["approved"]
    # Who may decide is not rewound by the restore.
    _on(cli)
    assert cli("review", "list").code == 0
    assert cli(*curator_args(), "config", "set", "review", "off").code == 0


def test_a_checkpoint_taken_while_review_was_on_restores_for_anyone(cli) -> None:  # noqa: ANN001
    _on(cli)
    checkpoint = cli("checkpoint", "create", "--json").json()["id"]
    done = cli("checkpoint", "restore", checkpoint)
    assert done.code == 0 and not done.out.startswith("proposed")


def test_the_first_key_registers_and_no_other_key_decides(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    mine = tmp_path / "mine.key"
    done = cli("curator", "init", str(mine))
    assert done.code == 0 and str(mine) in done.out
    assert oct(mine.stat().st_mode & 0o777) == "0o600"
    theirs = tmp_path / "theirs.key"
    refused = cli("curator", "init", str(theirs))
    assert refused.code == 2 and "not this store's" in refused.err
    assert cli("--curator-key", str(mine), "config", "set", "review", "on").code == 0
    cli("lesson", "add", "Skip the canary")
    [proposal] = _pending(cli)
    assert cli("--curator-key", str(theirs), "review", "approve", proposal["id"]).code == 2
    assert cli("--curator-key", str(mine), "review", "approve", proposal["id"]).code == 0


def test_a_curator_key_never_reaches_memory(cli, tmp_path: Path) -> None:  # noqa: ANN001
    key = tmp_path / "k.key"
    assert cli("curator", "init", str(key)).code == 0
    text = key.read_text().strip()
    assert cli("lesson", "add", f"remember the key {text}").code == 0
    assert text not in cli("export").out


def test_review_functions_refuse_without_the_key(tmp_path: Path) -> None:
    from memwork.core.services import review
    from memwork.core.storage.store import Store

    store = Store(tmp_path / "db")
    memory = Memory(tmp_path / "db", clock=lambda: NOW)
    from memwork.core.ledger import config

    config.set_value(store, "review", "on", now=NOW, actor="api")
    proposal = memory.add_lesson("Skip the canary")
    with pytest.raises(UserError):
        review.approve(store, proposal["id"], now=NOW, actor="tui", curator=None)
