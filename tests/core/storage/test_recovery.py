"""Recovery: ``checkpoint restore`` repairs a store whose table files are damaged or
missing (each moved aside into ``damaged/``, never deleted, and named), and ``doctor``
names the newest checkpoint that holds a readable copy of each damaged table and the
command that restores it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.services import checkpoints
from memwork.core.storage.store import Store
from tests.conftest import NOW, folded

T0 = "2026-11-01T12:00:00Z"
T1 = "2026-11-02T12:00:00Z"
T2 = "2026-11-03T12:00:00Z"


@pytest.fixture
def history(cli, db: Path) -> dict[str, str]:  # noqa: ANN001
    """Two checkpoints with lessons and slots in between, then more lessons; folded, so
    the table files hold everything."""
    cli("lesson", "add", "Check the canary before a deploy", now=T0)
    cli("slot", "set", "persona", "A careful deployer", now=T0)
    old = cli("checkpoint", "create", "-m", "first week", now=T0).out.strip()
    cli("lesson", "add", "Pin the client version", now=T1)
    new = cli("checkpoint", "create", "-m", "second week", now=T1).out.strip()
    cli("lesson", "add", "Read the runbook first", now=T2)
    folded(db)
    return {"old": old, "new": new}


def _lessons(cli) -> list[str]:  # noqa: ANN001
    return sorted(x["content"] for x in cli("lesson", "list", "--json").json())


def test_doctor_names_the_newest_checkpoint_with_a_copy_and_restore_repairs(
    cli,  # noqa: ANN001
    db: Path,
    history: dict[str, str],
) -> None:
    garbage = b'{"documents": {"les_1": {"content": "half a lesson'
    (db / "lessons.json").write_bytes(garbage)
    (db / "slots.json").unlink()
    listed = cli("lesson", "list")
    assert listed.code == 2 and "lessons.json is not valid JSON" in listed.err

    doctor = cli("doctor")
    assert doctor.code == 1
    for table in ("lessons", "slots"):
        line = next(x for x in doctor.out.splitlines() if f"table {table}:" in x)
        assert f"the newest checkpoint with a readable copy is {history['new']}" in line
        assert f"`memwork checkpoint restore {history['new']}`" in line
    repair = next(x for x in doctor.out.splitlines() if "repair:" in x)
    assert f"run `memwork checkpoint restore {history['new']}`" in repair
    assert "moves the 2 damaged files aside into damaged/" in repair

    done = cli("checkpoint", "restore", history["new"], "--json", now=T2)
    assert done.code == 0, done.err
    result = done.json()
    by_table = {d["table"]: d for d in result["damaged"]}
    assert set(by_table) == {"lessons", "slots"}
    assert by_table["slots"]["moved_to"] is None and by_table["slots"]["restored"]
    moved = by_table["lessons"]["moved_to"]
    assert moved.startswith("damaged/") and (db / moved).read_bytes() == garbage
    assert "table lessons was damaged: the checkpoint's copy replaces it" in done.err
    assert f"its file is kept in {moved}" in done.err
    assert "table slots was missing" in done.err

    assert _lessons(cli) == ["Check the canary before a deploy", "Pin the client version"]
    assert "A careful deployer" in cli("slot", "show", "persona").out
    assert cli("doctor").code == 0
    # The automatic checkpoint holds what was readable, and undoes the restore.
    undo = cli("checkpoint", "restore", result["id"], now=T2)
    assert undo.code == 0, undo.err
    assert "Read the runbook first" not in _lessons(cli)  # it was in the damaged file
    assert (db / moved).read_bytes() == garbage  # still kept


def test_a_damaged_table_the_checkpoint_does_not_hold_is_set_aside(
    cli,  # noqa: ANN001
    db: Path,
    history: dict[str, str],
) -> None:
    session = cli("session", "start", "--agent", "a1", now=T2).out.strip()
    cli("observe", "--session", session, "a later note", now=T2)
    name = f"observations.{session}.json"
    (folded(db) / name).write_text("not json at all")
    doctor = cli("doctor")
    line = next(x for x in doctor.out.splitlines() if f"table observations.{session}:" in x)
    assert "no checkpoint holds a readable copy of it" in line
    done = cli("checkpoint", "restore", history["old"], now=T2)
    assert done.code == 0, done.err
    assert "the checkpoint holds no copy of it, so the store goes on without it" in done.err
    [kept] = list((db / "damaged").rglob(name))
    assert kept.read_text() == "not json at all"
    assert cli("doctor").code == 0


def test_restore_works_when_the_checkpoints_table_itself_is_damaged(
    cli,  # noqa: ANN001
    db: Path,
    history: dict[str, str],
) -> None:
    (db / "checkpoints.json").write_text("{")
    assert cli("checkpoint", "list").code == 2
    doctor = cli("doctor")
    # Without the table, the snapshots on disk are the checkpoints: the newest is named.
    assert f"checkpoint restore {history['new']}" in doctor.out
    done = cli("checkpoint", "restore", history["old"], now=T2)
    assert done.code == 0, done.err
    assert "table checkpoints was damaged" in done.err
    listed = {c["id"]: c for c in cli("checkpoint", "list", "--json").json()}
    # Both snapshots are still checkpoints (recovered), and none was swept as an orphan;
    # each snapshot kept its own record, description and time included.
    assert {history["old"], history["new"]} <= set(listed)
    assert listed[history["new"]]["description"] == "second week"
    assert listed[history["new"]]["created_at"].startswith("2026-11-02T12:00:00")
    assert _lessons(cli) == ["Check the canary before a deploy"]
    assert cli("checkpoint", "restore", history["new"], now=T2).code == 0
    assert "Pin the client version" in _lessons(cli)


def test_a_table_file_replaced_by_a_folder_is_moved_aside_whole_and_restored(
    cli,  # noqa: ANN001
    db: Path,
    history: dict[str, str],
) -> None:
    (db / "lessons.json").unlink()
    (db / "lessons.json").mkdir()
    (db / "lessons.json" / "notes.txt").write_text("someone's notes")
    assert cli("lesson", "list").code == 2
    done = cli("checkpoint", "restore", history["new"], "--json", now=T2)
    assert done.code == 0, done.err
    [moved] = [d["moved_to"] for d in done.json()["damaged"] if d["table"] == "lessons"]
    # The folder and what it held are kept, not lost, and the table is whole again.
    assert (db / moved / "notes.txt").read_text() == "someone's notes"
    assert _lessons(cli) == ["Check the canary before a deploy", "Pin the client version"]
    assert cli("doctor").code == 0


def test_a_healthy_restore_reports_no_damage(store: Store) -> None:
    from memwork.core.domain import lessons

    lessons.add_lesson(store, "kept", now=NOW, actor="t")
    doc = checkpoints.create(store, "c", now=NOW, actor="t")
    result = checkpoints.restore(store, doc["id"], now=NOW, actor="t")
    assert result["damaged"] == []


def test_a_damaged_redis_table_is_copied_aside_and_restored(redis_url: str) -> None:
    from memwork.core.domain import lessons
    from tests.redis_server import client_for

    store = Store(redis_url)
    lessons.add_lesson(store, "kept in the checkpoint", now=NOW, actor="t")
    doc = checkpoints.create(store, "c", now=NOW, actor="t")
    client = client_for(redis_url)
    client.delete("memwork:t:lessons")
    client.set("memwork:t:lessons", "not a hash")  # a table key of the wrong type
    from memwork.core.services.doctor.redis import report
    from memwork.core.storage.url import parse

    verdict = report(parse(redis_url))
    assert not verdict["ok"]
    details = {c["name"]: c["detail"] for c in verdict["checks"]}
    assert f"`memwork checkpoint restore {doc['id']}`" in details["table lessons"]
    assert f"run `memwork checkpoint restore {doc['id']}`" in details["repair"]
    fresh = Store(redis_url)
    result = checkpoints.restore(fresh, doc["id"], now=NOW, actor="t")
    [damaged] = result["damaged"]
    assert damaged["table"] == "lessons" and damaged["restored"]
    assert client.get(damaged["moved_to"]) == b"not a hash"
    with Store(redis_url).reading() as again:
        assert [d["content"] for d in again.docs("lessons").values()] == ["kept in the checkpoint"]
    after = report(parse(redis_url))
    assert after["ok"], after
    assert any(c["name"] == "damaged" for c in after["checks"])


def test_the_damage_report_is_part_of_the_json(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "x", now=T0)
    cid = cli("checkpoint", "create", now=T0).out.strip()
    done = cli("checkpoint", "restore", cid, "--json", now=T0)
    assert json.loads(done.out)["damaged"] == []
