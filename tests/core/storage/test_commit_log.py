"""A folder store's write-ahead log (core/storage/wal.py, core/storage/folder_backend.py):
one append and one fsync per commit, readers that apply the log's tail, folds into the
table files that lose nothing, torn records dropped whole, and stores written before the
log opening and migrating."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from memwork.core.ops.memory import Memory
from memwork.core.services.doctor.folder import report
from memwork.core.storage import journal, schema, wal
from memwork.core.storage.backend import Change
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest, python_env

DATA = Path(__file__).resolve().parents[2] / "data"


def _episode(n: int) -> dict:
    return {
        "task_id": f"task-{n % 3}",
        "score": (n % 10) / 10,
        "summary": f"attempt {n}",
        "mistakes": [f"mistake {n % 7}"],
        "successes": [f"success {n % 5}"],
    }


def _log_records(folder: Path) -> wal.Tail:
    data = (folder / wal.LOG_NAME).read_bytes()
    base = wal.read_header(folder / wal.LOG_NAME, data)
    return wal.read_records(folder / wal.LOG_NAME, data, 0, base, skip=wal.HEADER_SIZE)


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "store.json").read_text())


# -- one fsync per commit ------------------------------------------------------------------
def test_an_agent_step_is_one_append_and_one_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Memory.observe`` and ``record_episode``: one fsync each, the log's; a fold (the
    log passing its size) costs more, and all of it stays under two fsyncs per commit."""
    monkeypatch.setenv("MEMWORK_FSYNC", "1")
    folder = tmp_path / "s"
    memory = Memory(folder, clock=lambda: NOW)
    memory.store.fold_mode = "now"  # each fold's fsyncs counted with the call it follows
    session = memory.start_session(agent="a")["id"]
    calls = {"n": 0}
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def fsync(fd: int) -> None:
        calls["n"] += 1
        real_fsync(fd)

    def fdatasync(fd: int) -> None:
        calls["n"] += 1
        real_fdatasync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    plain: list[int] = []
    folding: list[int] = []
    steps = 0
    # Until the log has passed its size twice (a fresh store's records are small: a few
    # hundred steps), so the folds' fsyncs are shared by the commits they follow.
    while len(folding) < 2 and steps < 3000:
        base = _manifest(folder)["generation"]
        calls["n"] = 0
        if steps % 2:
            memory.observe(session, f"note {steps}: the deploy took {steps} minutes")
        else:
            memory.record_episode(_episode(steps))
        (folding if _manifest(folder)["generation"] != base else plain).append(calls["n"])
        steps += 1
    assert set(plain) == {1}, plain
    assert len(folding) == 2, f"{steps} agent steps pass the log's size twice"
    assert sum(plain) + sum(folding) <= 2 * steps
    # Every step is in the store, whichever file holds it now.
    with Store(folder).reading() as other:
        assert len(other.docs(f"observations.{session}")) == steps // 2


# -- readers apply the log's tail ------------------------------------------------------------
def test_a_reader_applies_the_log_and_follows_it_across_a_fold(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    writer = Store(folder)
    reader = Store(folder)
    heard: list[Change] = []
    reader.subscribe(heard.append)
    with writer.transaction():
        writer.put("lessons", "a", {"id": "a", "v": 1})
        writer.put("meta", "m", {"id": "m", "n": 1})
    with reader.reading():
        assert reader.get("lessons", "a") == {"id": "a", "v": 1}
    assert not (folder / "lessons.json").exists()  # it is in the log only
    for n in range(2, 5):
        with writer.transaction():
            writer.put("lessons", "a", {"id": "a", "v": n})
            writer.put("meta", "m", {"id": "m", "n": n})
            writer.delete("lessons", ["b"] if n == 3 else [])
            if n == 2:
                writer.put("lessons", "b", {"id": "b"})
    heard.clear()
    writer.fold_log()  # the records the reader has not seen go into the table files
    with writer.transaction():
        writer.put("lessons", "c", {"id": "c"})
    with reader.reading():
        assert reader.all("lessons") == [{"id": "a", "v": 4}, {"id": "c"}]
        assert reader.get("meta", "m") == {"id": "m", "n": 4}
    # What each commit changed reached the reader, ids and all, the fold notwithstanding.
    [change] = heard
    assert not change.local and change.generation == _log_records(folder).records[-1].generation
    assert change.tables["lessons"].put == {"a", "c"}
    assert change.tables["lessons"].deleted == {"b"}
    assert change.tables["meta"].put == {"m"}


def test_own_commits_are_announced_with_their_ids(store: Store) -> None:
    heard: list[Change] = []
    stop = store.subscribe(heard.append)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
        store.put("lessons", "b", {"id": "b"})
    with store.transaction():
        store.delete("lessons", ["a"])
    with store.transaction():
        pass  # nothing changed: nothing heard
    stop()
    with store.transaction():
        store.put("lessons", "z", {"id": "z"})
    assert [c.local for c in heard] == [True, True]
    assert heard[0].tables["lessons"].put == {"a", "b"} and heard[0].tables["lessons"].whole
    assert heard[1].tables["lessons"].deleted == {"a"} and not heard[1].tables["lessons"].put


def test_another_process_s_commits_are_announced(store: Store) -> None:
    """On every backend that other processes can write: ids from a folder's log, whole
    tables from Redis (it says only which tables moved)."""
    if store.scheme == "memory":
        pytest.skip("memory: has no other processes")
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    heard: list[Change] = []
    store.subscribe(heard.append)
    other = Store(store.location)
    with other.transaction():
        other.put("lessons", "b", {"id": "b"})
    with store.reading():
        assert set(store.docs("lessons")) == {"a", "b"}
    [change] = heard
    assert not change.local and set(change.tables) == {"lessons"}
    lessons = change.tables["lessons"]
    assert lessons.whole if store.scheme == "redis" else lessons.put == {"b"}


# -- folds -------------------------------------------------------------------------------------
def test_the_log_is_folded_past_its_size_or_age(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_LOG_BYTES", "4096")
    folder = tmp_path / "s"
    store = Store(folder)
    for n in range(40):
        with store.transaction():
            store.put("lessons", f"l{n:02d}", {"id": f"l{n:02d}", "text": "x" * 200})
        assert (folder / wal.LOG_NAME).stat().st_size <= 4096
    assert len(json.loads((folder / "lessons.json").read_text())["documents"]) > 20
    monkeypatch.setenv("MEMWORK_LOG_SECONDS", "0")
    aged = Store(folder)
    with aged.transaction():
        aged.put("lessons", "late", {"id": "late"})
    assert _log_records(folder).records == []  # folded right after it was acknowledged
    assert "late" in json.loads((folder / "lessons.json").read_text())["documents"]


def test_small_commits_are_folded_past_a_number_of_records(tmp_path: Path) -> None:
    """An observation's record is ~1 KB: by size alone 2 MiB would hold ~1,500 of them,
    and every reader would check and decode each one."""
    folder = tmp_path / "s"
    memory = Memory(folder, clock=lambda: NOW)
    memory.store.fold_mode = "now"  # the fold at once, for an exact count
    session = memory.start_session(agent="a")["id"]
    most = 0
    for n in range(150):
        memory.observe(session, f"note {n}")
        most = max(most, len(_log_records(folder).records))
    assert most == 63  # the 64th commit folds it
    assert (folder / wal.LOG_NAME).stat().st_size < 128 * 1024
    with Store(folder).reading() as reader:
        notes = [
            d["content"]
            for name in reader.table_names("observations")
            for d in reader.docs(name).values()
        ]
    assert sorted(notes) == sorted(f"note {n}" for n in range(150))


def test_a_long_lived_process_folds_off_its_writers_path(tmp_path: Path) -> None:
    """The Python API's calls never pay a fold: it runs on a thread of its own after the
    commit that asked for it has returned, and close() finishes what is left."""
    folder = tmp_path / "s"
    memory = Memory(folder, clock=lambda: NOW)
    session = memory.start_session(agent="a")["id"]
    backend = memory.store.backend
    folded_on: list[str] = []
    real_fold, real_finish = backend.fold, backend.fold_finish

    def fold(*args: Any, **kwargs: Any) -> None:
        folded_on.append(threading.current_thread().name)
        real_fold(*args, **kwargs)

    def fold_finish(plan: object) -> bool:  # a fold prepared off the lock commits here
        folded_on.append(threading.current_thread().name)
        return real_finish(plan)

    backend.fold = fold  # type: ignore[method-assign]
    backend.fold_finish = fold_finish  # type: ignore[method-assign]
    for n in range(200):
        memory.observe(session, f"note {n}")
    memory.close()
    assert folded_on, "200 commits past the log's record count were never folded"
    assert set(folded_on) <= {"memwork-fold", threading.main_thread().name}
    assert folded_on.count(threading.main_thread().name) <= 1  # only close() folds here
    assert len(_log_records(folder).records) < 64
    with Store(folder).reading() as reader:
        notes = [
            d["content"]
            for name in reader.table_names("observations")
            for d in reader.docs(name).values()
        ]
    assert sorted(notes) == sorted(f"note {n}" for n in range(200))


def test_a_commit_too_big_for_the_log_goes_to_the_table_files(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "first", {"id": "first"})
    with store.transaction():
        store.put_many("episodes.000001", {f"e{n}": {"id": f"e{n}"} for n in range(1500)})
    assert _log_records(folder).records == []  # the earlier record was folded with it
    files = json.loads((folder / "episodes.000001.json").read_text())["documents"]
    assert len(files) == 1500
    assert "first" in json.loads((folder / "lessons.json").read_text())["documents"]


def test_a_fold_that_fails_after_the_commit_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit is acknowledged once its record is in the log; a fold that then fails
    (a full disk) leaves the log as it was, and the next commit folds."""
    import errno

    monkeypatch.setenv("MEMWORK_LOG_SECONDS", "0")  # every commit folds after it lands
    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    real_write = journal.atomic_write

    def full_disk(*args: object, **kwargs: object) -> None:  # the journal does not fit
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(journal, "atomic_write", full_disk)
    with store.transaction():
        store.put("lessons", "b", {"id": "b"})  # no error: it is committed
    assert [list(c.writes) for c in _log_records(folder).records] == [["lessons"]]
    assert not [p for p in folder.iterdir() if ".tmp-" in p.name]
    with Store(folder).reading() as other:
        assert set(other.docs("lessons")) == {"a", "b"}
    monkeypatch.setattr(journal, "atomic_write", real_write)
    with store.transaction():
        store.put("lessons", "c", {"id": "c"})
    assert _log_records(folder).records == []
    assert set(json.loads((folder / "lessons.json").read_text())["documents"]) == {"a", "b", "c"}


def test_a_value_that_is_not_json_fails_the_commit_before_the_log(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        store.put("lessons", "a", {"id": "a"})
    before = folder_digest(folder)
    with pytest.raises(TypeError), store.transaction():
        store.put("lessons", "b", {"id": "b", "when": object()})
    assert folder_digest(folder) == before
    with store.reading():
        assert set(store.docs("lessons")) == {"a"}


# -- crashes --------------------------------------------------------------------------------
def _four_commits(folder: Path) -> None:
    store = Store(folder)
    for n in range(4):
        with store.transaction():
            store.put("lessons", f"l{n}", {"id": f"l{n}", "text": f"lesson {n} " * 20})
    store.close()


@pytest.mark.parametrize("damage", ["cut short", "bad checksum", "zeros appended"])
def test_a_torn_last_record_is_reported_and_kept_aside(
    tmp_path: Path, damage: str, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "s"
    _four_commits(folder)
    log = folder / wal.LOG_NAME
    original = log.read_bytes()
    data = bytearray(original)
    if damage == "cut short":
        data = data[:-25]
    elif damage == "bad checksum":
        data[-3] ^= 0xFF
    else:
        data += bytes(4096)  # a file extended by a crash before its data landed
    log.write_bytes(bytes(data))
    verdict = report(folder)
    assert verdict["ok"]  # a crash's torn tail is a warning: it was never acknowledged
    [torn] = [c for c in verdict["checks"] if c["name"] == "log" and c["status"] != "ok"]
    assert torn["status"] == "warn"
    assert "never acknowledged" in torn["detail"] and "end the log" in torn["detail"]
    store = Store(folder)
    with store.reading():
        expected = {"l0", "l1", "l2"} | ({"l3"} if damage == "zeros appended" else set())
        assert set(store.docs("lessons")) == expected
    said = capfd.readouterr().err
    assert f"{log} is damaged" in said and "end the log" in said
    with store.transaction():  # the next write keeps the torn bytes aside, then goes on
        store.put("lessons", "next", {"id": "next"})
    [kept] = (folder / "damaged").glob("*/store.log")
    assert kept.read_bytes() == bytes(data)
    tail = _log_records(folder)
    assert tail.torn == 0 and not tail.damage
    with Store(folder).reading() as other:
        assert set(other.docs("lessons")) == expected | {"next"}
    assert report(folder)["ok"]


def test_damage_before_later_records_costs_only_that_commit(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "s"
    _four_commits(folder)
    log = folder / wal.LOG_NAME
    data = bytearray(log.read_bytes())
    # Flip a byte inside the first record's payload: later good records follow it.
    data[wal.HEADER_SIZE + wal.RECORD_HEADER + 10] ^= 0xFF
    log.write_bytes(bytes(data))
    before = folder_digest(folder)
    store = Store(folder)
    with store.reading():
        assert set(store.docs("lessons")) == {"l1", "l2", "l3"}
    assert folder_digest(folder) == before  # a read changes nothing
    said = capfd.readouterr().err.splitlines()
    assert said == [
        f"memwork: {log} is damaged: {said[0].split(': ', 2)[2].split('. ')[0]}. The next "
        "write keeps this log in damaged/ and goes on with every record that verifies "
        "(`memwork doctor` lists it)"
    ]
    assert "at byte 24: commit 1 is lost; 3 verified records follow it" in said[0]
    verdict = report(folder)
    assert not verdict["ok"]
    [check] = [c for c in verdict["checks"] if c["name"] == "log" and c["status"] == "problem"]
    assert "commit 1 is lost" in check["detail"]
    with store.transaction():
        store.put("lessons", "next", {"id": "next"})
    [kept] = (folder / "damaged").glob("*/store.log")
    assert kept.read_bytes() == bytes(data)
    with Store(folder).reading() as other:
        assert set(other.docs("lessons")) == {"l1", "l2", "l3", "next"}


# -- a store written before the log ------------------------------------------------------------
@pytest.mark.slow
def test_a_store_written_by_the_previous_memwork_opens_and_migrates(tmp_path: Path) -> None:
    """``tests/data/store-v2`` was written by memwork at schema 2 (one journaled commit
    per write, no log). It reads the same once its relation fields are links (the one
    step that changes documents, so the folder is copied aside first), and its next
    writes go to a log."""
    folder = tmp_path / "old"
    shutil.copytree(DATA / "store-v2", folder)
    relations = {"lessons", "rules", "mistake_cards"}  # where relation fields lived
    tables_before = {
        p.name: p.read_bytes()
        for p in folder.glob("*.json")
        if p.name != "store.json" and p.name.split(".")[0] not in relations
    }
    env = python_env(MEMWORK_NOW="2026-10-01T12:00:00Z", MEMWORK_VERIFY_WRITES="1")
    exported = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(folder), "export"],
        capture_output=True,
        env=env,
        check=True,
    ).stdout
    now, then = json.loads(exported), json.loads((DATA / "store-v2.export.json").read_bytes())
    assert (now["schema_version"], then["schema_version"]) == (schema.RECORDS_VERSION, 2)
    fields = ("superseded_by", "supersedes", "merged_from", "episode_ids")
    for table, docs in then["tables"].items():
        plain = [{k: v for k, v in d.items() if k not in fields} for d in docs]
        assert now["tables"][table] == plain, table
    # A rule's episodes are links now, kept beside the rules.
    derived = [x for t, docs in now["tables"].items() if t.startswith("links") for x in docs]
    assert sorted(x["to"] for x in derived if x["kind"] == "derived_from") == sorted(
        e for d in then["tables"]["rules"] for e in d.get("episode_ids", [])
    )
    assert _manifest(folder)["schema_version"] == schema.SCHEMA_VERSION == 4
    assert (folder / wal.LOG_NAME).exists()
    assert len(list(tmp_path.glob("old.backup-v2-*"))) == 1
    for name, raw in tables_before.items():
        assert (folder / name).read_bytes() == raw, name  # the rest changed no table
    # It is a whole store: a checkpoint from before restores, and writes land in the log.
    run = [sys.executable, "-m", "memwork", "--db", str(folder)]
    listed = json.loads(
        subprocess.run([*run, "checkpoint", "list", "--json"], capture_output=True, env=env).stdout
    )
    assert len(listed) == 1
    done = subprocess.run(
        [*run, "lesson", "add", "Written after the migration"], capture_output=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert any("lessons" in c.writes for c in _log_records(folder).records)
    done = subprocess.run(
        [*run, "checkpoint", "restore", listed[0]["id"]], capture_output=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert report(folder)["ok"]
