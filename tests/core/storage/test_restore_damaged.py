"""``checkpoint restore`` as the repair of a damaged store (core/services/checkpoints.py,
core/storage/folder_backend.py): it works whatever part of the folder is damaged, keeps
the damaged files in damaged/, and a refused restore writes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli_in_process import run
from tests.conftest import folder_digest


def _cli(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # In this process (22 interpreter start-ups saved): each call still opens the store
    # from its files and meets the damage the test made on disk.
    return run(folder, *args)


def _lessons(folder: Path) -> list[str]:
    done = _cli(folder, "lesson", "list", "--json")
    assert done.returncode == 0, done.stderr
    return sorted(lesson["content"] for lesson in json.loads(done.stdout))


def _checkpointed(folder: Path) -> str:
    """A store with one lesson in a checkpoint and one added after it."""
    assert _cli(folder, "lesson", "add", "Kept by the checkpoint").returncode == 0
    done = _cli(folder, "checkpoint", "create")
    assert done.returncode == 0, done.stderr
    assert _cli(folder, "lesson", "add", "Added after it").returncode == 0
    return done.stdout.strip()


def test_restore_works_when_the_log_s_first_bytes_are_overwritten(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    checkpoint = _checkpointed(folder)
    log = folder / "store.log"
    damaged = b"overwritten!" * 4 + log.read_bytes()[48:]
    log.write_bytes(damaged)
    # The header and the first record are gone; the records after them still read.
    listed = _cli(folder, "lesson", "list", "--json")
    assert listed.returncode == 0
    assert "store.log is damaged: its header (24 bytes at byte 0)" in listed.stderr
    assert "commit 1 is lost" in listed.stderr
    done = _cli(folder, "checkpoint", "restore", checkpoint)
    assert done.returncode == 0, done.stderr
    assert _lessons(folder) == ["Kept by the checkpoint"]
    [kept] = (folder / "damaged").glob("*/store.log")
    assert kept.read_bytes() == damaged
    assert _cli(folder, "doctor").returncode == 0


def test_a_refused_restore_writes_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    _checkpointed(folder)
    before = folder_digest(folder)
    done = _cli(folder, "checkpoint", "restore", "no-such-checkpoint")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert folder_digest(folder) == before


def test_restore_works_when_store_json_cannot_be_read(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    checkpoint = _checkpointed(folder)
    manifest = folder / "store.json"
    manifest.write_bytes(b'{"format": "memwork-st')
    listed = _cli(folder, "lesson", "list")
    assert listed.returncode == 2 and "store.json is not valid JSON" in listed.stderr
    doctor = _cli(folder, "doctor")
    assert doctor.returncode == 1
    assert f"`memwork checkpoint restore {checkpoint}`" in doctor.stdout
    before = folder_digest(folder)
    assert _cli(folder, "checkpoint", "restore", "no-such-checkpoint").returncode == 2
    assert folder_digest(folder) == before  # a refused restore writes nothing
    done = _cli(folder, "checkpoint", "restore", checkpoint)
    assert done.returncode == 0, done.stderr
    assert "This restore goes on with a store.json rebuilt from the" in done.stderr
    assert _lessons(folder) == ["Kept by the checkpoint"]
    [kept] = (folder / "damaged").glob("*/store.json")
    assert kept.read_bytes() == b'{"format": "memwork-st'
    assert _cli(folder, "doctor").returncode == 0


def test_a_checkpoint_whose_record_was_lost_with_the_log_is_never_swept(tmp_path: Path) -> None:
    """The checkpoint's commit is damaged in the log, so no record names its snapshot:
    the next checkpoint command gives the snapshot its record back (it describes itself)
    instead of removing it as one an interrupted command left."""
    folder = tmp_path / "s"
    assert _cli(folder, "lesson", "add", "Kept by the checkpoint").returncode == 0
    done = _cli(folder, "checkpoint", "create", "-m", "before the damage")
    checkpoint = done.stdout.strip()
    log = folder / "store.log"
    data = bytearray(log.read_bytes())
    mark = data.rindex(b"\xffmw\xfe")  # the checkpoint's record is the last one
    data[mark + 40] ^= 0x20
    log.write_bytes(bytes(data))
    doctor = _cli(folder, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    # Not called a leftover of an interrupted command: it is a checkpoint that restores.
    assert checks["snapshots"]["detail"].startswith("1 checkpoints no record names")
    assert checkpoint in checks["snapshots"]["detail"]
    assert _cli(folder, "checkpoint", "create", "-m", "after").returncode == 0
    listed = json.loads(_cli(folder, "checkpoint", "list", "--json").stdout)
    assert {c["id"]: c["description"] for c in listed}[checkpoint] == "before the damage"
    assert (folder / "snapshots" / checkpoint).is_dir()


def test_a_checkpoint_whose_copy_changed_on_disk_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "s"
    assert _cli(folder, "lesson", "add", "Kept by the checkpoint").returncode == 0
    from memwork.core.storage.store import Store

    Store(folder).fold_log()  # the checkpoint then copies lessons.json as it is
    checkpoint = _cli(folder, "checkpoint", "create").stdout.strip()
    pack = folder / "snapshots" / checkpoint / "tables.pack"
    data = bytearray(pack.read_bytes())
    at = data.index(b"Kept by the checkpoint")
    data[at] ^= 0x20  # "kept by…": still JSON, a changed value
    pack.write_bytes(bytes(data))
    before = folder_digest(folder)
    done = _cli(folder, "checkpoint", "restore", checkpoint)
    assert done.returncode == 2
    assert f"table lessons in checkpoint {checkpoint} does not match its checksum" in done.stderr
    assert folder_digest(folder) == before
