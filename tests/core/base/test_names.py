"""Nothing reaches outside the store folder: ids that become file names follow one rule,
whichever way they come in (CLI, import, the store's own files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.base import names
from memwork.core.base.errors import InvalidInput, StoreUnreadable
from memwork.core.domain import sessions
from memwork.core.domain.working_memory import state as wm_state
from memwork.core.storage.store import Store
from tests.conftest import folded, folder_digest, resealed

T0 = "2026-01-01T00:00:00Z"
HOSTILE = [
    "..",
    ".",
    "../x",
    "/etc",
    "a/b",
    "a\\b",
    "nul\x00",
    "bell\x07",
    ".hidden",
    "-rf",
    "run..1",
    "x" * 129,
    "",
]
ORDINARY = ["run-42", "agent@host:7", "ses_01J8ZK", "worker.v2", "A_b-c.d:e@f", "x" * 128]


def _export(tables: dict) -> str:
    return json.dumps({"format": "memwork-export", "schema_version": 1, "tables": tables})


# Every hostile path in this file points into the test's own tmp_path: run against
# code with the bug (as these tests were, to see them fail), a traversal must hit
# only the bait, never a real folder of the machine.


def _bait(tmp_path: Path) -> Path:
    """A folder outside the store that a traversal would reach."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    return outside


@pytest.mark.parametrize("value", ORDINARY)
def test_ordinary_agent_ids_pass(value: str) -> None:
    assert names.check_id(value, "session") == value
    assert wm_state.table_name(value) == f"working_memory.{value}"
    assert sessions.observations_table(value) == f"observations.{value}"


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_are_refused_naming_the_field_and_the_rule(value: str) -> None:
    for make in (wm_state.table_name, sessions.observations_table):
        with pytest.raises(InvalidInput) as caught:
            make(value)
        assert caught.value.field == "session"
        assert "letters, digits or _ - . : @" in caught.value.rule
        assert "\n" not in str(caught.value)


def test_imported_checkpoint_then_delete_cannot_delete_the_store(cli, db: Path) -> None:  # noqa: ANN001
    """The reported attack: import a checkpoint whose id is '..', then delete it."""
    cli("lesson", "add", "Keep me", now=T0)
    cli("checkpoint", "create", now=T0)  # so that snapshots/ exists
    evil = db.parent / "evil.json"
    outside = _bait(db.parent)
    for cid in ("..", str(outside), str(db)):
        record = {"id": cid, "description": "", "created_at": T0, "counts": {}}
        evil.write_text(_export({"checkpoints": [record]}))
        before = folder_digest(db)
        done = cli("import", str(evil))
        assert done.code == 2 and done.err.count("\n") == 1
        assert "tables.checkpoints" in done.err
        assert folder_digest(db) == before
        done = cli("checkpoint", "delete", cid)
        assert done.code == 2
        assert folder_digest(db) == before
    assert "Keep me" in cli("lesson", "list").out


@pytest.mark.parametrize("cid", ["..", "../../outside", "<absolute path of the bait>"])
def test_a_tampered_checkpoint_id_is_refused_by_delete_restore_and_diff(
    cli,  # noqa: ANN001
    db: Path,
    tmp_path: Path,
    cid: str,
) -> None:
    outside = _bait(tmp_path)
    if cid.startswith("<"):
        cid = str(outside)
    cli("lesson", "add", "Keep me", now=T0)
    cli("checkpoint", "create", now=T0)
    # Someone edits checkpoints.json by hand (or a bug stores a bad id).
    path = folded(db) / "checkpoints.json"
    data = json.loads(path.read_text())
    [(old, doc)] = data["documents"].items()
    data["documents"] = {cid: {**doc, "id": cid}}
    path.write_text(json.dumps(data))
    resealed(path)
    before = folder_digest(db)
    for verb in ("delete", "restore", "diff"):
        done = cli("checkpoint", verb, cid)
        assert done.code == 2, (verb, done.err)
        assert "checkpoint:" in done.err and done.err.count("\n") == 1
        assert folder_digest(db) == before
    assert (outside / "precious.txt").read_text() == "keep me"


@pytest.mark.parametrize("sid", ["../x", "a/b", "nul\x00", "x" * 300, ".hidden"])
def test_import_refuses_session_ids_that_would_name_files(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    evil = db.parent / "evil.json"
    session = {"id": sid, "started_at": T0, "created_at": T0, "updated_at": T0}
    observation = {
        "id": "obs_1",
        "session_id": sid,
        "content": "x",
        "created_at": T0,
        "updated_at": T0,
    }
    state = {"id": "state", "session_id": sid, "created_at": T0, "updated_at": T0}
    cases = [
        ({"sessions": [session]}, "sessions[1].id"),
        ({"observations": [observation]}, "observations[1].session_id"),
        ({"working_memory": [state]}, "working_memory[1].session_id"),
    ]
    before = folder_digest(db)
    for tables, field in cases:
        evil.write_text(_export(tables))
        done = cli("import", str(evil))
        assert done.code == 2, done.err
        assert done.err.startswith(f"memwork: {field}: must be 1-128 letters, digits or")
        assert done.err.count("\n") == 1
        assert folder_digest(db) == before


def test_import_refuses_any_record_whose_table_would_not_be_a_plain_file(
    cli,  # noqa: ANN001
    db: Path,
) -> None:
    cli("lesson", "add", "Keep me", now=T0)
    evil = db.parent / "evil.json"
    evil.write_text(_export({"distinct": [{"id": "/e", "kind": "mistake", "text": "x"}]}))
    before = folder_digest(db)
    done = cli("import", str(evil))
    assert done.code == 2 and "distinct[1]" in done.err and "plain file name" in done.err
    assert folder_digest(db) == before


def test_cli_session_ids_that_would_name_files_are_exit_2(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    before = folder_digest(db)
    for sid in ("../../x", str(db.parent / "abs"), ".."):
        for args in (
            ("wm", "--session", sid, "set", "k", "v"),
            ("observe", "--session", sid, "hello"),
        ):
            done = cli(*args)
            assert done.code == 2, (args, done.err)
            assert done.err.count("\n") == 1
    assert folder_digest(db) == before
    assert not (db.parent / "x.json").exists()


@pytest.mark.parametrize("name", ["../outside/precious", "<absolute>", ".lock", "a/b", "store"])
def test_a_tampered_manifest_cannot_name_a_table_outside_the_folder(
    tmp_path: Path,
    name: str,
) -> None:
    outside = _bait(tmp_path)
    if name == "<absolute>":
        name = str(outside / "precious")
    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    manifest = json.loads((folder / "store.json").read_text())
    manifest["tables"][name] = 1
    (folder / "store.json").write_text(json.dumps(manifest))
    before = folder_digest(folder)
    with pytest.raises(StoreUnreadable, match="not a plain file name"):
        Store(folder)
    assert folder_digest(folder) == before
    assert (outside / "precious.txt").read_text() == "keep me"


def test_a_tampered_snapshot_manifest_cannot_read_outside(
    cli,  # noqa: ANN001
    db: Path,
    tmp_path: Path,
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(json.dumps({"documents": {"s": {"id": "s"}}}))
    cli("lesson", "add", "Keep me", now=T0)
    cid = cli("checkpoint", "create", now=T0).out.strip()
    plan = db / "snapshots" / cid / "snapshot.json"
    plan.write_text(json.dumps({"tables": {"../../../outside/secret": 1}}))
    before = folder_digest(db)
    done = cli("checkpoint", "restore", cid)
    assert done.code == 2 and "damaged" in done.err
    assert folder_digest(db) == before


def test_table_names_are_checked_before_any_path_is_built() -> None:
    from memwork.core.storage.manifest import table_file

    assert table_file("observations.run-42") == "observations.run-42.json"
    for bad in ("../x", "a/b", ".lock", "store", "x\x00"):
        with pytest.raises(InvalidInput):
            table_file(bad)


def test_inside_follows_links_and_refuses_the_folder_itself(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    (folder / "snapshots").mkdir(parents=True)
    (folder / "link").symlink_to(tmp_path)
    assert names.inside(folder, folder / "snapshots")
    assert not names.inside(folder, folder / "snapshots" / ".." / "..")
    assert not names.inside(folder, folder / "link")
    assert not names.inside(folder, folder)
