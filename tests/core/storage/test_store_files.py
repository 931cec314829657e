"""What the store does with the files around it: no symbolic links followed, private modes,
exclusive temp files, exports that never replace anything but a regular file, copied
checkpoints, table files the manifest lost, and bad paths or environment refused cleanly."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from memwork.core.base.errors import StoreUnreadable
from memwork.core.services import checkpoints
from memwork.core.storage import atomic
from memwork.core.storage.store import Store
from tests.conftest import NOW, folded, folder_digest

T0 = "2026-01-01T00:00:00Z"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _special_file(folder: Path) -> Path:
    """A character device like /dev/null, made in the test's folder (a FIFO where
    mknod is not allowed): the tests never point memwork at the machine's own."""
    path = folder / "device"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError:
        os.mkfifo(path)
    return path


# -- symbolic links ------------------------------------------------------------------------
def test_a_lock_symlink_is_refused_and_its_target_never_created(
    cli,  # noqa: ANN001
    db: Path,
    tmp_path: Path,
) -> None:
    cli("lesson", "add", "Keep me", now=T0)
    (db / ".lock").unlink()
    target = tmp_path / "elsewhere" / "created-by-memwork"
    target.parent.mkdir()
    (db / ".lock").symlink_to(target)
    for verb in (("stats",), ("lesson", "list"), ("lesson", "add", "x"), ("context",)):
        done = cli(*verb)
        assert done.code == 2, (verb, done.err)
        assert ".lock is a symbolic link" in done.err and done.err.count("\n") == 1
    assert not target.exists()


@pytest.mark.parametrize("name", ["lessons.json", "store.json", "snapshots", "journal.json"])
def test_a_symlink_inside_the_store_is_refused(
    cli,  # noqa: ANN001
    db: Path,
    tmp_path: Path,
    name: str,
) -> None:
    cli("lesson", "add", "Keep me", now=T0)
    cli("checkpoint", "create", now=T0)
    outside = tmp_path / "outside"
    outside.mkdir()
    real = db / name
    moved = outside / name
    if real.exists():
        real.rename(moved)
    else:
        moved.write_text(json.dumps({"deletes": [], "renames": []}))
    real.symlink_to(moved)
    outside_before = folder_digest(outside)
    for verb in (("stats",), ("lesson", "list"), ("checkpoint", "create"), ("lesson", "add", "y")):
        done = cli(*verb)
        assert done.code == 2, (verb, done.err)
        assert "symbolic link" in done.err and done.err.count("\n") == 1
    assert folder_digest(outside) == outside_before
    doctor = cli("doctor")
    assert doctor.code == 1 and "PROBLEM  links:" in doctor.out


def test_a_symlinked_table_file_is_not_read_through(tmp_path: Path) -> None:
    from memwork.core.storage.codec import load_file

    secret = tmp_path / "secret.json"
    secret.write_text('{"documents": {}}')
    link = tmp_path / "lessons.json"
    link.symlink_to(secret)
    with pytest.raises(StoreUnreadable, match="symbolic link"):
        load_file(link)


def test_a_symlinked_snapshots_folder_sends_nothing_outside(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    outside = tmp_path / "outside"
    outside.mkdir()
    store.backend.snapshot_keys()  # no snapshots yet
    os.symlink(outside, folder / "snapshots")
    with pytest.raises(StoreUnreadable, match="symbolic link"):
        checkpoints.create(store, "x", now=NOW, actor="test")
    assert list(outside.iterdir()) == []


# -- temp files ----------------------------------------------------------------------------
def test_store_temp_files_are_exclusive_and_unguessable(tmp_path: Path) -> None:
    target = tmp_path / "lessons.json"
    names = {os.path.basename(atomic.write_temp(target, b"x", "123-1")) for _ in range(3)}
    assert len(names) == 3  # the same tag never gives the same name
    victim = tmp_path / "victim"
    victim.write_text("precious")
    # A link planted at the predictable prefix is never followed.
    (tmp_path / "lessons.json.tmp-123-1").symlink_to(victim)
    atomic.atomic_write(target, b"new", "123-1")
    assert victim.read_text() == "precious"
    assert target.read_bytes() == b"new"


def test_export_refuses_what_is_not_a_regular_file(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    folder = tmp_path / "a-folder"
    folder.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "link.json"
    link.symlink_to(victim)
    device = _special_file(tmp_path)
    kind_of_device = os.lstat(device).st_mode
    for target, kind in ((folder, "a folder"), (device, "a device"), (link, "symbolic link")):
        done = cli("export", str(target))
        assert done.code == 2, done.err
        assert kind in done.err and done.err.count("\n") == 1
    assert victim.read_text() == "precious"
    assert os.lstat(device).st_mode == kind_of_device
    assert list(folder.iterdir()) == []
    assert cli("export", "").code == 2


def test_export_never_follows_a_planted_temp_file(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "export.json"
    # The old fixed temp names, and the new prefix with no random part.
    for planted in ("export.json.tmp-export", ".export.json.tmp-"):
        (tmp_path / planted).symlink_to(victim)
    assert cli("export", str(out)).code == 0
    assert victim.read_text() == "precious"
    assert json.loads(out.read_text())["format"] == "memwork-export"
    assert _mode(out) == 0o600
    leftovers = [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]
    assert sorted(leftovers) == [".export.json.tmp-", "export.json.tmp-export"]


def test_export_keeps_the_mode_of_a_file_it_replaces(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    out = tmp_path / "shared.json"
    out.write_text("old")
    out.chmod(0o644)
    assert cli("export", str(out)).code == 0
    assert _mode(out) == 0o644 and "Keep me" in out.read_text()


# -- permissions ---------------------------------------------------------------------------
def test_stores_are_private_under_umask_022(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    old = os.umask(0o022)
    try:
        cli("lesson", "add", "Keep me", now=T0)
        cli("observe", "--session", cli("session", "start").out.strip(), "hi", now=T0)
        cid = cli("checkpoint", "create", now=T0).out.strip()
        cli("lesson", "add", "After the checkpoint", now=T0)  # renames over existing files
        cli("checkpoint", "restore", cid, now=T0)
        out = tmp_path / "export.json"
        cli("export", str(out))
    finally:
        os.umask(old)
    assert _mode(db) == 0o700
    for path in db.rglob("*"):
        expected = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == expected, path
    assert _mode(out) == 0o600


def test_migration_backups_are_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memwork.core.storage import schema

    folder = tmp_path / "s"
    old = os.umask(0o022)
    try:
        store = Store(folder)
        with store.transaction():
            store.put("lessons", "a", {"id": "a"})
        checkpoints.create(store, "before", now=NOW, actor="test")
        store.fold_log()
        # An older store made before stores were private.
        folder.chmod(0o755)
        (folder / "lessons.json").chmod(0o644)
        current = schema.SCHEMA_VERSION
        monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
        monkeypatch.setitem(schema.MIGRATIONS, current, lambda s: None)
        Store(folder)
    finally:
        os.umask(old)
    [backup] = tmp_path.glob(f"s.backup-v{current}-*")
    assert _mode(backup) == 0o700
    for path in backup.rglob("*"):
        assert _mode(path) == (0o700 if path.is_dir() else 0o600), path


def test_doctor_warns_about_a_store_others_can_read(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    db.chmod(0o755)
    done = cli("doctor")
    assert done.code == 0 and "warning  permissions:" in done.out and "0755" in done.out


# -- checkpoints are copies ----------------------------------------------------------------
def test_a_checkpoint_survives_an_in_place_edit_of_a_table_file(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "The original lesson", now=T0)
    cid = cli("checkpoint", "create", now=T0).out.strip()
    live = folded(db) / "lessons.json"
    assert os.stat(live).st_nlink == 1  # no hard link shares the live file
    # An editor (or any tool) that writes into the file instead of replacing it.
    with open(live, "r+b") as f:
        data = f.read().replace(b"The original lesson", b"The vandalised lesson")
        f.seek(0)
        f.write(data)
        f.truncate()
    # The file no longer matches the checksum its fold recorded: reads refuse it.
    diff = cli("checkpoint", "diff", cid, "--json")
    assert diff.code == 2 and "lessons.json does not match the checksum" in diff.err
    assert cli("checkpoint", "restore", cid, now=T0).code == 0
    listed = cli("lesson", "list").out
    assert "The original lesson" in listed and "vandalised" not in listed


def test_checkpoints_taken_before_packs_still_restore(tmp_path: Path) -> None:
    """Older stores hold one hard-linked file per table in each snapshot folder."""
    from memwork.core.storage.snapshot_files import SNAPSHOT_MANIFEST, SNAPSHOT_PACK

    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "a", {"id": "a", "content": "old"})
    doc = checkpoints.create(store, "old style", now=NOW, actor="test")
    store.fold_log()  # the table files hold what the checkpoint holds
    snap = folder / "snapshots" / doc["id"]
    plan = json.loads((snap / SNAPSHOT_MANIFEST).read_text())
    (snap / SNAPSHOT_PACK).unlink()
    for name in plan["tables"]:
        os.link(folder / f"{name}.json", snap / f"{name}.json")
    (snap / SNAPSHOT_MANIFEST).write_text(json.dumps({"tables": plan["tables"]}))
    with store.transaction():
        store.put("lessons", "a", {"id": "a", "content": "new"})
    checkpoints.restore(store, doc["id"], now=NOW, actor="test")
    with store.reading():
        assert store.get("lessons", "a") == {"id": "a", "content": "old"}


def test_a_damaged_pack_index_is_refused(cli, db: Path) -> None:  # noqa: ANN001
    from memwork.core.storage.snapshot_files import SNAPSHOT_MANIFEST

    cli("lesson", "add", "Keep me", now=T0)
    cid = cli("checkpoint", "create", now=T0).out.strip()
    plan_path = db / "snapshots" / cid / SNAPSHOT_MANIFEST
    plan = json.loads(plan_path.read_text())
    plan["pack"]["lessons"] = [0, 10**12]
    plan_path.write_text(json.dumps(plan))
    before = folder_digest(db)
    done = cli("checkpoint", "restore", cid)
    assert done.code == 2 and "is damaged" in done.err and done.err.count("\n") == 1
    assert folder_digest(db) == before


def test_orphan_snapshot_folders_are_reported_then_swept(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Keep me", now=T0)
    kept = cli("checkpoint", "create", now=T0).out.strip()
    # What a checkpoint command killed before its commit leaves behind.
    for n in range(3):
        orphan = db / "snapshots" / f"00000000-0000-4000-8000-00000000000{n}"
        orphan.mkdir()
        (orphan / "lessons.json").write_bytes(b"x" * 1000)
    doctor = cli("doctor")
    assert doctor.code == 0
    assert "warning  snapshots: 3 snapshot folders no checkpoint names" in doctor.out
    cli("checkpoint", "create", now=T0)
    left = {p.name for p in (db / "snapshots").iterdir()}
    assert kept in left and len(left) == 2
    assert "snapshots:" not in cli("doctor").out


# -- a table file the manifest lost --------------------------------------------------------
def test_a_table_file_store_json_does_not_list_is_never_overwritten(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "Years of hard-won knowledge", now=T0)
    Store(db).fold_log()
    manifest = json.loads((db / "store.json").read_text())
    version = manifest["tables"].pop("lessons")
    (db / "store.json").write_text(json.dumps(manifest))
    before = folder_digest(db)
    done = cli("lesson", "add", "A new lesson", now=T0)
    assert done.code == 2 and done.err.count("\n") == 1
    assert "lessons.json exists but store.json does not list table 'lessons'" in done.err
    assert f'add "lessons": {version} to "tables"' in done.err
    assert folder_digest(db) == before
    doctor = cli("doctor")
    assert doctor.code == 1
    assert "PROBLEM  unlisted tables: 1 table files store.json does not list" in doctor.out
    # The advice works: put the entry back and everything is there again.
    manifest["tables"]["lessons"] = version
    (db / "store.json").write_text(json.dumps(manifest))
    assert "Years of hard-won knowledge" in cli("lesson", "list").out
    assert cli("lesson", "add", "A new lesson", now=T0).code == 0


# -- bad store paths and environment -------------------------------------------------------
def test_bad_store_paths_and_environment_are_exit_2_one_line(
    run,  # noqa: ANN001
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    good = tmp_path / "good"
    Store(good)
    device = _special_file(tmp_path)
    lock_dir = tmp_path / "lockdir"
    Store(lock_dir)
    (lock_dir / ".lock").unlink()
    (lock_dir / ".lock").mkdir()
    cases = [
        (("--db", "", "stats"), "--db: must name a store folder"),
        (("--db", "", "lesson", "add", "x"), "--db: must name a store folder"),
        (("--db", str(device), "stats"), f"{device} is not a folder"),
        (("--db", str(device), "lesson", "add", "x"), f"{device} is not a folder"),
        (("--db", str(lock_dir), "stats"), ".lock is a folder"),
        (("--db", str(good), "export", str(tmp_path)), "is a folder, not a regular file"),
    ]
    for args, message in cases:
        code, out, err = run(*args)
        assert (code, out) == (2, ""), (args, err)
        assert message in err and err.count("\n") == 1, err
    monkeypatch.setenv("MEMWORK_LOCK_TIMEOUT", "abc")
    code, _, err = run("--db", str(good), "stats")
    assert code == 2 and err == (
        "memwork: MEMWORK_LOCK_TIMEOUT: must be a number of seconds >= 0 (got 'abc')\n"
    )
    monkeypatch.setenv("MEMWORK_LOCK_TIMEOUT", "1")
    monkeypatch.setenv("MEMWORK_DB", "")
    code, _, err = run("stats")
    assert code == 2 and "MEMWORK_DB: is set but empty" in err


def test_read_verbs_never_create_a_store(run, tmp_path: Path) -> None:  # noqa: ANN001
    missing = tmp_path / "typo"
    code, out, err = run("--db", str(missing), "context")
    assert (code, out, err) == (0, "", "")
    code, out, _ = run("--db", str(missing), "context", "--format", "json")
    assert code == 0 and json.loads(out)["sections"] == []
    for args in (
        ("stats",),
        ("lesson", "list"),
        ("rule", "list"),
        ("slot", "list"),
        ("session", "list"),
        ("checkpoint", "list"),
        ("export",),
        ("doctor",),
        ("wm", "--session", "s", "get", "k"),
        ("wm", "--session", "s", "task"),
    ):
        code, out, err = run("--db", str(missing), *args)
        assert (code, out) == (2, ""), (args, err)
        assert err == f"memwork: no memwork store at {missing}\n", args
    assert not missing.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("--db", str(empty), "lesson", "list")[0] == 2
    assert list(empty.iterdir()) == []
    # Write verbs still create the store.
    code, _, err = run("--db", str(missing), "lesson", "add", "first")
    assert code == 0, err
    assert (missing / "store.json").exists()


def test_a_refused_write_to_a_missing_store_leaves_nothing_behind(run, tmp_path: Path) -> None:  # noqa: ANN001
    missing = tmp_path / "new" / "deep" / "store"
    for args in (
        ("observe", "--session", "s1", ""),
        ("lesson", "add", ""),
        ("record-episode", "-"),  # no input on stdin
        ("slot", "set", "bad label!", "text"),
    ):
        code, out, err = run("--db", str(missing), *args)
        assert (code, out) == (2, ""), (args, err)
        assert err.startswith("memwork: ") and err.count("\n") == 1, (args, err)
        # Neither the store nor the folders made for it are left.
        assert not (tmp_path / "new").exists(), args
    # Into a folder the user made: it stays, empty.
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("--db", str(empty), "lesson", "add", "")[0] == 2
    assert empty.is_dir() and list(empty.iterdir()) == []
    # The next good write creates the store as before.
    code, _, err = run("--db", str(missing), "lesson", "add", "first")
    assert code == 0, err
    assert (missing / "store.json").exists()


def test_a_refused_write_keeps_a_store_that_holds_anything(run, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "store"
    assert run("--db", str(path), "lesson", "add", "keep me")[0] == 0
    before = folder_digest(path)
    assert run("--db", str(path), "lesson", "add", "")[0] == 2
    assert folder_digest(path) == before


def test_a_new_store_is_taken_back_only_while_nothing_was_written(tmp_path: Path) -> None:
    path = tmp_path / "store"
    fresh = Store(path)
    # Another process writes into the store this one just created.
    other = Store(path, create=False)
    with other.transaction():
        other.put("lessons", "les_1", {"id": "les_1", "text": "theirs"})
    other.close()
    assert fresh.discard_if_new() is False
    again = Store(path, create=False)
    with again.reading():
        assert again.docs("lessons")["les_1"]["text"] == "theirs"
    again.close()
    # An untouched new store is removed, with the folder made for it; only once.
    lone = tmp_path / "a" / "b"
    new = Store(lone)
    assert new.discard_if_new() is True
    assert not (tmp_path / "a").exists()
    assert new.discard_if_new() is False
    # An existing store opened again was not created by that open: never taken back.
    reopened = Store(path)
    assert reopened.discard_if_new() is False
    assert (path / "store.json").exists()


# -- a full disk ---------------------------------------------------------------------------
def _assert_full_disk_refusal(run, folder: Path, scratch: Path) -> None:  # noqa: ANN001
    """A write that does not fit: exit 2, one line, no temp file left, old data intact."""
    before = folder_digest(folder)
    episode = {"task_id": "big", "score": 0.9, "summary": "y" * 100_000, "successes": ["ok"]}
    path = scratch / "episode.json"
    path.write_text(json.dumps(episode))
    code, out, err = run("--db", str(folder), "record-episode", str(path))
    assert (code, out) == (2, ""), err
    assert "No space left on device" in err and err.count("\n") == 1
    assert [p.name for p in folder.iterdir() if ".tmp-" in p.name] == []
    assert folder_digest(folder) == before
    code, out, _ = run("--db", str(folder), "lesson", "list")
    assert code == 0 and "Keep me" in out


def test_a_full_disk_is_exit_2_and_leaves_no_temp_files(
    run,  # noqa: ANN001
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ENOSPC injected at the write layer (the real-disk version follows)."""
    import errno

    folder = tmp_path / "s"
    assert run("--db", str(folder), "lesson", "add", "Keep me")[0] == 0
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        if len(data) > 100_000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    def pwrite(fd: int, data: bytes, offset: int) -> int:
        if len(data) > 100_000:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_pwrite(fd, data, offset)

    real_pwrite = os.pwrite
    monkeypatch.setattr(atomic.os, "write", write)
    monkeypatch.setattr(atomic.os, "pwrite", pwrite)  # the log's appends
    _assert_full_disk_refusal(run, folder, tmp_path)


def test_a_really_full_disk(run, tmp_path: Path) -> None:  # noqa: ANN001
    """On a 1 MB tmpfs (needs root and mount; skipped with the reason otherwise)."""
    import subprocess

    mnt = tmp_path / "small"
    mnt.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        folder = mnt / "s"
        assert run("--db", str(folder), "lesson", "add", "Keep me")[0] == 0
        filler = mnt / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass
        # Leave a little room: the first temp files fit, the episode shard does not.
        os.ftruncate(fd, os.fstat(fd).st_size - 60_000)
        os.close(fd)
        _assert_full_disk_refusal(run, folder, tmp_path)
        # A checkpoint that does not fit leaves no half-made snapshot behind.
        (folder / "snapshots").mkdir(mode=0o700)
        fd = os.open(filler, os.O_WRONLY | os.O_APPEND)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:
            pass
        os.close(fd)
        before = folder_digest(folder)
        code, out, err = run("--db", str(folder), "checkpoint", "create")
        assert (code, out) == (2, "") and "No space left on device" in err, err
        assert list((folder / "snapshots").iterdir()) == []
        assert folder_digest(folder) == before
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture):  # noqa: ANN201
    """``memwork ARGS`` in-process without the fixture's ``--db``: (code, out, err)."""
    import io
    import sys

    from memwork.core.doors.cli.main import main

    def go(*argv: str) -> tuple[int, str, str]:
        capsysbinary.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        code = main(list(argv))
        sys.stdout.flush()
        captured = capsysbinary.readouterr()
        return code, captured.out.decode(), captured.err.decode()

    return go


def test_doctor_passes_over_a_file_a_fold_removes_while_it_looks(
    cli,
    db: Path,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    """A fold in another process renames its temp files away while doctor lists the
    folder: such a file is no stray, and doctor never ends in an internal error."""
    from memwork.core.services.doctor import folder as doctor_folder

    assert cli("lesson", "add", "Canary first").code == 0
    gone = [db / "actions.json.tmp-fold-0123456789ab", db / "lessons.json.tmp-fold-ba9876543210"]
    listed = os.scandir

    def listing_then_fold(path: os.PathLike[str] | str):  # noqa: ANN202 - as os.scandir
        for file in gone:  # the fold's files, there when the folder is listed...
            file.write_text("{}")
        entries = list(listed(path))
        for file in gone:  # ...and renamed away before doctor looks at each
            file.unlink()
        return iter(entries)

    monkeypatch.setattr(doctor_folder.os, "scandir", listing_then_fold)
    found = doctor_folder.report(db)
    assert not any(".tmp-fold-" in line for line in json.dumps(found).split(",")), found
