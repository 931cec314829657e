"""Store checkpoints: create, list, diff, restore (undoable), delete; API and CLI.

Described in docs/MEMORY.md, Records.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput, NotFound
from memwork.core.domain import episodes, lessons, rules, slots
from memwork.core.ledger import audit
from memwork.core.services import checkpoints
from memwork.core.storage import tables
from memwork.core.storage.store import Store
from tests.conftest import folder_digest

ACTOR = "test"


def _state(store: Store) -> dict[str, dict]:
    """Every snapshotted table (what a restore must bring back exactly)."""
    with store.reading():
        return {
            name: dict(store.docs(name))
            for name in store.table_names()
            if tables.logical_name(name) in tables.SNAPSHOT_TABLES and store.docs(name)
        }


def _seed(store: Store, now: datetime) -> dict[str, str]:
    episodes.record_episodes(
        store,
        [
            {"task_id": "t", "score": 0.2, "mistakes": ["m"], "mistake_cards": [{}]},
            {"task_id": "t", "score": 0.9, "successes": ["s"]},
        ],
        now=now,
        actor=ACTOR,
    )
    lesson = lessons.add_lesson(store, "Check twice", now=now, actor=ACTOR).lesson
    rule, _ = rules.add_rule(store, "be kind", now=now, actor=ACTOR)
    slots.set_slot(store, "persona", "terse", now=now, actor=ACTOR)
    return {"lesson": lesson["id"], "rule": rule["id"]}


def _create(store: Store, now: datetime, description: str = "") -> dict:
    return checkpoints.create(store, description, now=now, actor=ACTOR)


def test_create_records_a_uuid4_and_counts(store: Store, now: datetime) -> None:
    _seed(store, now)
    doc = _create(store, now, "  before cleanup ")
    assert uuid.UUID(doc["id"]).version == 4 and str(uuid.UUID(doc["id"])) == doc["id"]
    assert doc["description"] == "before cleanup"
    assert doc["created_at"] == "2026-11-01T12:00:00.000000Z"
    assert doc["automatic"] is False
    assert doc["counts"]["episodes"] == 2
    assert doc["counts"]["lessons"] == doc["counts"]["slots"] == 1
    assert doc["counts"]["rules"] == 3
    assert "checkpoints" not in doc["counts"] and "audit" not in doc["counts"]
    with store.reading():
        assert list(audit.entries(store))[0]["action"] == "checkpoint"


def test_list_oldest_first(store: Store, now: datetime) -> None:
    a = _create(store, now + timedelta(minutes=2), "later")
    b = _create(store, now, "earlier")
    assert [c["id"] for c in checkpoints.list_checkpoints(store)] == [b["id"], a["id"]]


def test_diff_lists_added_removed_and_changed_fields(store: Store, now: datetime) -> None:
    ids = _seed(store, now)
    cp = _create(store, now)
    later = now + timedelta(hours=1)
    lessons.reinforce(store, ids["lesson"], now=later, actor=ACTOR)
    (new_ep,) = episodes.record_episodes(store, [{"score": 0.5}], now=later, actor=ACTOR)
    slots.delete_slot(store, "persona", now=later, actor=ACTOR)
    rules.set_active(store, ids["rule"], False, now=later, actor=ACTOR)
    result = checkpoints.diff(store, cp["id"])
    assert (result["from"], result["to"]) == (cp["id"], "now")
    changes = result["tables"]
    assert set(changes) == set(checkpoints.DIFF_TABLES)
    assert changes["episodes"] == {"added": [new_ep["id"]], "removed": [], "changed": []}
    assert changes["lessons"] == {
        "added": [],
        "removed": [],
        "changed": [
            {
                "id": ids["lesson"],
                "fields": ["confidence", "last_reinforced_at", "reinforcements"],
            }
        ],
    }
    assert changes["rules"]["changed"] == [{"id": ids["rule"], "fields": ["active"]}]
    assert len(changes["slots"]["removed"]) == 1 and changes["slots"]["added"] == []
    assert changes["mistake_cards"] == {"added": [], "removed": [], "changed": []}


def test_diff_between_two_checkpoints(store: Store, now: datetime) -> None:
    first = _create(store, now)
    rule, _ = rules.add_rule(store, "new rule", now=now, actor=ACTOR)
    second = _create(store, now)
    rules.add_rule(store, "after the second", now=now, actor=ACTOR)
    result = checkpoints.diff(store, first["id"], second["id"])
    assert (result["from"], result["to"]) == (first["id"], second["id"])
    assert result["tables"]["rules"] == {"added": [rule["id"]], "removed": [], "changed": []}
    # Nothing changed: every table is empty of changes.
    same = checkpoints.diff(store, second["id"], second["id"])["tables"]
    assert all(v == {"added": [], "removed": [], "changed": []} for v in same.values())


def test_restore_replaces_the_state_and_can_be_undone(store: Store, now: datetime) -> None:
    ids = _seed(store, now)
    cp = _create(store, now, "good state")
    good = _state(store)
    later = now + timedelta(hours=1)
    episodes.record_episodes(store, [{"task_id": "t", "score": 0.1}] * 3, now=later, actor=ACTOR)
    lessons.forget(store, ids["lesson"], now=later, actor=ACTOR)
    rules.add_rule(store, "[AVOID] x", now=later, actor=ACTOR)
    slots.set_slot(store, "notes", "n", now=later, actor=ACTOR)
    bad = _state(store)
    assert bad != good

    before = checkpoints.restore(store, cp["id"], now=later, actor=ACTOR)
    assert before["automatic"] is True and before["id"] != cp["id"]
    assert before["description"] == f"before restoring {cp['id'][:8]}"
    assert _state(store) == good
    # Aggregates came back too: the next episode continues from the checkpoint's count.
    (doc,) = episodes.record_episodes(store, [{"score": 0.5}], now=later, actor=ACTOR)
    assert doc["index"] == 3

    # Undo (a restore of the automatic checkpoint, without the episode recorded since).
    checkpoints.restore(store, before["id"], now=later, actor=ACTOR)
    assert _state(store) == bad


def test_a_restore_bigger_than_the_staging_threshold_brings_every_table_back(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past the threshold a folder store's transaction keeps the tables it wrote first on
    # disk until the commit; a restore drops each table before it writes the
    # checkpoint's copy back (a 100k-record restore lost 384 sessions' notes that way).
    monkeypatch.setenv("MEMWORK_STAGE_DOCUMENTS", "400")
    store = Store(tmp_path / "s")
    items = [{"task_id": f"t{k % 5}", "score": 0.5, "summary": f"try {k}"} for k in range(1200)]
    episodes.record_episodes(store, items, now=now, actor=ACTOR)
    cp = _create(store, now, "big")
    good = _state(store)
    assert sum(len(docs) for docs in good.values()) > 1200
    checkpoints.restore(store, cp["id"], now=now, actor=ACTOR)
    assert _state(store) == good
    assert _state(Store(tmp_path / "s")) == good  # as another process reads it


def test_a_restore_rewrites_only_the_tables_changed_since(store: Store, now: datetime) -> None:
    ids = _seed(store, now)
    cp = _create(store, now)
    good = _state(store)
    versions = {name: store.table_version(name) for name in good}
    later = now + timedelta(hours=1)
    lessons.forget(store, ids["lesson"], now=later, actor=ACTOR)
    with store.reading():
        changed = {n for n in good if store.table_version(n) != versions[n]}
    assert changed and changed != set(good)
    checkpoints.restore(store, cp["id"], now=later, actor=ACTOR)
    assert _state(store) == good
    left = {n for n in good if store.table_version(n) == versions[n]}
    assert left == set(good) - changed  # the rest were not written again


def test_restore_keeps_the_audit_log_and_the_checkpoints(store: Store, now: datetime) -> None:
    cp = _create(store, now)
    rules.add_rule(store, "r", now=now, actor=ACTOR)
    before = checkpoints.restore(store, cp["id"], now=now, actor=ACTOR)
    with store.reading():
        actions = [e["action"] for e in audit.entries(store, newest_first=False)]
    assert actions == ["checkpoint", "add", "restore"]
    listed = [c["id"] for c in checkpoints.list_checkpoints(store)]
    assert set(listed) == {cp["id"], before["id"]}


def test_delete(store: Store, now: datetime) -> None:
    cp = _create(store, now)
    other = _create(store, now)
    assert checkpoints.delete(store, cp["id"][:8], now=now, actor=ACTOR)["id"] == cp["id"]
    assert [c["id"] for c in checkpoints.list_checkpoints(store)] == [other["id"]]
    with pytest.raises(NotFound):
        checkpoints.diff(store, cp["id"])
    with pytest.raises(NotFound):
        checkpoints.delete(store, cp["id"], now=now, actor=ACTOR)
    with pytest.raises(NotFound):
        checkpoints.restore(store, cp["id"], now=now, actor=ACTOR)


def test_ambiguous_or_short_prefix(store: Store, now: datetime) -> None:
    cp = _create(store, now)
    with pytest.raises(NotFound):
        checkpoints.diff(store, cp["id"][:3])
    assert checkpoints.diff(store, cp["id"][:4])["from"] == cp["id"]
    with store.transaction():
        store.put("checkpoints", cp["id"][:4] + "-x", {**cp, "id": cp["id"][:4] + "-x"})
    with pytest.raises(InvalidInput):
        checkpoints.diff(store, cp["id"][:4])


def test_delete_removes_the_snapshot_files(tmp_path: Path, now: datetime) -> None:
    store = Store(tmp_path / "s")
    cp = _create(store, now)
    folder = tmp_path / "s" / "snapshots" / cp["id"]
    assert folder.is_dir()
    checkpoints.delete(store, cp["id"], now=now, actor=ACTOR)
    assert not folder.exists()


# -- CLI ---------------------------------------------------------------------------------
def test_cli_checkpoint_round_trip(cli, db: Path) -> None:  # noqa: ANN001
    cli("rule", "add", "first rule")
    created = cli("checkpoint", "create", "-m", "baseline")
    assert created.code == 0 and created.err == ""
    cp = created.out.strip()
    assert uuid.UUID(cp).version == 4
    listed = cli("checkpoint", "list", "--json").json()
    assert [c["id"] for c in listed] == [cp] and listed[0]["description"] == "baseline"
    line = cli("checkpoint", "list").out
    assert line.startswith(cp) and "baseline" in line and "1 records" in line

    added = cli("rule", "add", "second rule").out.strip()
    diff = cli("checkpoint", "diff", cp, "--json").json()
    assert diff["tables"]["rules"]["added"] == [added]
    text = cli("checkpoint", "diff", cp).out
    assert f"rules: +1 added, -0 removed, ~0 changed\n  + {added}\n" in text

    restored = cli("checkpoint", "restore", cp)
    assert restored.code == 0
    undo = restored.out.strip()
    assert uuid.UUID(undo).version == 4 and undo != cp
    assert restored.err == f"restored; undo with: memwork checkpoint restore {undo}\n"
    assert [r["text"] for r in cli("rule", "list", "--json").json()] == ["first rule"]
    assert cli("checkpoint", "restore", undo).code == 0
    assert [r["text"] for r in cli("rule", "list", "--json").json()] == [
        "first rule",
        "second rule",
    ]
    assert cli("checkpoint", "diff", undo).out.endswith("no changes\n")

    assert cli("checkpoint", "delete", cp).out.strip() == cp
    ids = [c["id"] for c in cli("checkpoint", "list", "--json").json()]
    assert cp not in ids and undo in ids


def test_cli_checkpoint_errors(cli, db: Path) -> None:  # noqa: ANN001
    cli("checkpoint", "create")
    before = folder_digest(db)
    for args in (
        ("checkpoint", "restore", "00000000-0000-4000-8000-000000000000"),
        ("checkpoint", "diff", "nope"),
        ("checkpoint", "delete", "nope"),
    ):
        done = cli(*args)
        assert done.code == 2, args
        assert done.err.startswith("memwork: checkpoint not found: ") and done.out == ""
    assert folder_digest(db) == before


def test_cli_restore_json_is_the_automatic_checkpoint(cli) -> None:  # noqa: ANN001
    cp = cli("checkpoint", "create").out.strip()
    record = cli("checkpoint", "restore", cp, "--json").json()
    assert record["automatic"] is True
    assert json.dumps(record)  # a plain JSON object
