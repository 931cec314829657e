"""Any file of a store damaged in any way a disk or a hand can: every command answers or
refuses in one line, never an internal error, and a checkpoint taken before restores it.

The byte-level corpus (bit flips and cuts at every offset class of the log and the
tables) is in test_log_damage.py; this one breaks whole files, each kind of file a
store holds (the log, the manifest, table files, a snapshot, the recall index's cache):
cut short, bits flipped, zeroed, emptied, deleted, replaced by JSON of another shape or
by a folder."""

from __future__ import annotations

import json
import os
import random
import shutil
from functools import partial
from pathlib import Path

import pytest

from tests.cli_in_process import run

KINDS = ("cut", "flip", "zero", "json", "delete", "folder", "empty")
OTHER_SHAPES = ([], {}, None, 1, "x", {"version": "x"}, {"tables": 5}, [{"id": 1}])


def _damage(path: Path, kind: str, rng: random.Random) -> None:
    data = path.read_bytes()
    if kind == "cut":
        path.write_bytes(data[: rng.randint(0, max(0, len(data) - 1))])
    elif kind == "flip" and data:
        flipped = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(flipped))
    elif kind == "zero":
        path.write_bytes(b"\0" * len(data))
    elif kind == "json":
        path.write_text(json.dumps(rng.choice(OTHER_SHAPES)))
    elif kind == "delete":
        path.unlink()
    elif kind == "folder":
        path.unlink()
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")


@pytest.mark.slow
def test_every_file_damaged_every_way_each_command_answers_and_restore_repairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_FSYNC", "0")
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "8")  # folded often: table files exist
    base = tmp_path / "base"
    run(base, "session", "start", "--id", "s1")
    for n in range(30):
        run(base, "observe", "--session", "s1", f"note {n} about the canary for billing-api")
    run(base, "lesson", "add", "use canaries")
    run(base, "rule", "add", "always canary")
    run(base, "slot", "set", "persona", "terse")
    run(base, "checkpoint", "create")
    run(base, "search", "canary")  # the recall index's cache file
    for n in range(5):
        run(base, "observe", "--session", "s1", f"late {n}")
    checkpoint = json.loads(run(base, "--json", "checkpoint", "list").stdout)[0]["id"]
    files = sorted(
        os.path.relpath(os.path.join(folder, name), base)
        for folder, _, names in os.walk(base)
        for name in names
        if name != ".lock"
    )
    kinds = {f.split("/")[0].split(".")[0] for f in files}
    assert {"store", "snapshots", "cache", "lessons", "observations", "sessions"} <= kinds
    rng = random.Random(36)
    found = []
    for n in range(150):
        db = tmp_path / f"db-{n}"
        shutil.copytree(base, db)
        name, kind = rng.choice(files), rng.choice(KINDS)
        _damage(db / name, kind, rng)
        for command in (
            ("context",),
            ("search", "canary"),
            ("doctor",),
            ("export",),
            ("observe", "--session", "s1", "after the damage"),
            ("lesson", "list"),
            ("checkpoint", "list"),
            ("checkpoint", "restore", checkpoint),
            ("doctor",),
        ):
            done = run(db, *command)
            allowed = (0, 1, 2) if command == ("doctor",) else (0, 2)
            if done.returncode not in allowed or "internal error" in done.stderr:
                found.append(f"{kind} {name}: {command[0]} -> {done.returncode} {done.stderr}")
                break
        shutil.rmtree(db)
    assert not found, "\n".join(found)


# -- under a process that has the store open ------------------------------------------------
LIVE = """
import os, sys
from pathlib import Path
from memwork import Memory
db = Path(sys.argv[1])
memory = Memory(db)
session = memory.start_session(title="t")["id"]
for n in range(40):
    memory.observe(session, f"note {n} about the canary for billing-api")
memory.search("canary")
memory.close()  # the index saved
index = db / "cache" / "recall" / "index.bin"
assert index.stat().st_size > 1000
memory = Memory(db)
assert memory.search("canary")  # the saved index, mapped, read in place
index.write_bytes(b"{}")  # cut where it lies, as a tool writing in place would
hits = memory.search("canary note 7")
print(hits[0]["title"])
memory.close()
"""


def test_a_saved_index_cut_in_place_under_a_running_process_is_not_read_again(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    from tests.conftest import python_env

    done = subprocess.run(
        [sys.executable, "-c", LIVE, str(tmp_path / "db")],
        capture_output=True,
        text=True,
        env=python_env(MEMWORK_FSYNC="0"),
        timeout=120,
    )
    # Reading the mapping past the file's new end would have ended it with SIGBUS (-7).
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip().endswith(": note 7 about the canary for billing-api")


@pytest.mark.slow
def test_every_file_damaged_under_a_running_process_each_call_answers_or_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memwork import Memory
    from memwork.core.base.errors import MemworkError

    monkeypatch.setenv("MEMWORK_FSYNC", "0")
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "8")
    base = tmp_path / "base"
    memory = Memory(base)
    session = memory.start_session(title="t")["id"]
    for n in range(30):
        memory.observe(session, f"note {n} about the canary")
    memory.add_lesson("use canaries")
    memory.create_checkpoint(description="c")
    memory.search("canary")
    for n in range(5):
        memory.observe(session, f"late {n}")
    memory.close()
    files = sorted(
        os.path.relpath(os.path.join(folder, name), base)
        for folder, _, names in os.walk(base)
        for name in names
        if name != ".lock"
    )
    rng = random.Random(36)
    found = []
    for n in range(150):
        db = tmp_path / f"db-{n}"
        shutil.copytree(base, db)
        memory = Memory(db)
        name, kind = rng.choice(files), rng.choice(KINDS)
        try:
            memory.search("canary")  # the index mapped, the tables read
            _damage(db / name, kind, rng)
            for call in (
                memory.context,
                partial(memory.search, "canary"),
                partial(memory.observe, session, "after the damage"),
                memory.export,
                memory.doctor,
                partial(memory.add_lesson, "a new one"),
            ):
                try:
                    call()
                except MemworkError:
                    pass
                except Exception as exc:  # noqa: BLE001 - what the test looks for
                    found.append(f"{kind} {name}: {type(exc).__name__}: {exc}")
                    break
        finally:
            try:
                memory.close()
            except MemworkError:
                pass
            except Exception as exc:  # noqa: BLE001
                found.append(f"{kind} {name}: close: {type(exc).__name__}: {exc}")
        shutil.rmtree(db)
    assert not found, "\n".join(found)
