"""``memwork doctor`` on a store that writers are using: it reports what the store holds,
never a writer's work in progress as damage.

A doctor that read store.json, then table files a fold replaced meanwhile, used to call
a healthy store damaged (checksums that did not match, a commit's journal "interrupted",
a fold's temporary files "unreadable") and advise restoring a checkpoint, which would
have thrown the writers' last commits away. On Redis, a checkpoint taken between two of
its reads looked like one without a snapshot."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.doctor import folder as folder_doctor
from memwork.core.services.doctor import redis as redis_doctor
from memwork.core.storage.url import parse
from tests.cli_in_process import run

WRITER = """
import sys, time
from memwork import Memory
memory = Memory(sys.argv[1])
session = memory.start_session(title="writer")["id"]
end = time.time() + float(sys.argv[2])
n = 0
while time.time() < end:
    n += 1
    memory.observe(session, f"note {n} about the canary")
    if n % 7 == 0:
        memory.add_lesson(f"lesson {sys.argv[3]} {n}")
    if n % 40 == 0:
        memory.create_checkpoint(description="while the doctor looks")
memory.close()
"""


def _findings(report: dict) -> list[dict]:
    """What a report found about the data (a busy lock, or a test server's own settings,
    say nothing of it)."""
    return [
        c
        for c in report["checks"]
        if c["status"] != "ok" and c["name"] not in ("lock", "durability")
    ]


def _writers(location: str, seconds: float, count: int = 3) -> list[subprocess.Popen]:
    # Folding every few commits: a doctor's read meets a fold as often as it can.
    env = {**os.environ, "MEMWORK_LOG_RECORDS": "15", "MEMWORK_FSYNC": "0"}
    return [
        subprocess.Popen([sys.executable, "-c", WRITER, location, str(seconds), str(n)], env=env)
        for n in range(count)
    ]


def _doctor_while(writers: list[subprocess.Popen], report) -> tuple[int, list[list[dict]]]:  # noqa: ANN001
    runs, found = 0, []
    time.sleep(0.3)  # the writers are under way
    while any(w.poll() is None for w in writers) or runs < 5:
        runs += 1
        findings = _findings(report())
        if findings:
            found.append(findings)
    for w in writers:
        assert w.wait(timeout=60) == 0
    return runs, found


@pytest.mark.slow
def test_a_folder_store_in_use_is_reported_healthy(tmp_path: Path) -> None:
    store = tmp_path / "store"
    Memory(store).close()
    runs, found = _doctor_while(_writers(str(store), 4.0), lambda: folder_doctor.report(store))
    assert runs >= 5 and found == [], found[:2]
    done = run(store, "doctor")
    assert done.returncode == 0 and "store is healthy" in done.stdout


def test_a_fold_between_the_doctors_reads_is_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic: another process's commits fold the log while doctor is half way
    through the table files."""
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "2")  # the tables in files of their own
    store = tmp_path / "store"
    with Memory(store) as memory:
        session = memory.start_session(title="one")["id"]
        for n in range(6):
            memory.observe(session, f"note {n}")
            memory.add_lesson(f"lesson {n}")
    env = {**os.environ, "MEMWORK_LOG_RECORDS": "2", "MEMWORK_FSYNC": "0"}
    code = (
        "import sys\nfrom memwork import Memory\nm = Memory(sys.argv[1])\n"
        "s = m.start_session(title='two')['id']\n"
        "for n in range(5): m.observe(s, f'more {n}'); m.add_lesson(f'more lessons {n}')\n"
        "m.close()\n"
    )
    real = folder_doctor.verify
    calls = []

    def verify_after_a_fold(*args: object) -> None:
        calls.append(args)
        if len(calls) == 2:  # one table read, the rest not yet
            subprocess.run([sys.executable, "-c", code, str(store)], env=env, check=True)
        real(*args)

    monkeypatch.setattr(folder_doctor, "verify", verify_after_a_fold)
    report = folder_doctor.report(store)
    assert _findings(report) == [] and report["ok"]
    assert len(calls) > 2  # the checks ran again after the fold


def test_real_damage_is_still_reported_while_writers_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "2")  # the lessons in a file of their own
    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.add_lesson("the canary goes first")
        memory.create_checkpoint(description="before")
    table = store / "lessons.json"
    data = bytearray(table.read_bytes())
    data[len(data) // 2] ^= 0x04
    table.write_bytes(bytes(data))
    writers = _writers(str(store), 1.5, count=1)
    try:
        time.sleep(0.2)
        report = folder_doctor.report(store)
    finally:
        for w in writers:
            w.wait(timeout=60)
    names = [c["name"] for c in _findings(report)]
    assert "table lessons" in names and not report["ok"]


@pytest.mark.slow
def test_a_redis_store_in_use_is_reported_healthy(redis_url: str) -> None:
    Memory(redis_url).close()
    url = parse(redis_url)
    runs, found = _doctor_while(_writers(redis_url, 3.0), lambda: redis_doctor.report(url))
    assert runs >= 5 and found == [], found[:2]


def test_a_checkpoint_taken_during_the_redis_checks_has_its_snapshot(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic: a checkpoint committed after the doctor listed the snapshots."""
    memory = Memory(redis_url)
    memory.add_lesson("the canary goes first")
    real = redis_doctor._key_checks

    def checkpoint_meanwhile(*args: object) -> object:
        memory.create_checkpoint(description="meanwhile")
        return real(*args)

    monkeypatch.setattr(redis_doctor, "_key_checks", checkpoint_meanwhile)
    try:
        report = redis_doctor.report(parse(redis_url))
    finally:
        memory.close()
    assert _findings(report) == [], _findings(report)


def test_a_warning_on_a_quiet_store_is_reported_from_one_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A leftover snapshot folder on a store nobody writes: one run, no wait for the
    lock (a busy store's writers are held up only to confirm a problem)."""
    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.add_lesson("the canary goes first")
    (store / "snapshots" / "00000000-0000-4000-8000-000000000001").mkdir(parents=True)
    runs = []
    real = folder_doctor._checks
    monkeypatch.setattr(folder_doctor, "_checks", lambda *a: runs.append(a) or real(*a))
    report = folder_doctor.report(store)
    assert [c["name"] for c in _findings(report)] == ["snapshots"] and report["ok"]
    assert len(runs) == 1


def test_a_checkpoint_begun_after_the_lock_check_is_not_an_orphan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic: a writer takes the lock just after doctor found it free, and writes
    a checkpoint's snapshot before its record commits; doctor must not call it orphaned."""
    from memwork.core.storage.lock import InterProcessLock

    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.create_checkpoint(description="a real one")
    writer = InterProcessLock(store / ".lock", timeout=0)
    in_progress = store / "snapshots" / "0b7e4a4e-0000-4000-8000-000000000000"
    real = folder_doctor._lock_check

    def then_a_writer_begins(folder: Path) -> object:
        found = real(folder)
        if not in_progress.exists():
            writer.acquire()
            in_progress.mkdir(parents=True)  # its snapshot, its record not committed yet

            def commit() -> None:
                time.sleep(0.3)
                shutil.rmtree(in_progress)  # (as if its record now named it)
                writer.release()

            threading.Thread(target=commit).start()
        return found

    monkeypatch.setattr(folder_doctor, "_lock_check", then_a_writer_begins)
    report = folder_doctor.report(store)
    assert _findings(report) == [], _findings(report)


def test_a_file_that_goes_while_the_checks_read_it_is_looked_at_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deterministic: a writer renames a checkpoint's temporary file between the checks'
    listing and their look at it (a run once ended in FileNotFoundError): the checks run
    again and report what the store holds."""
    store = tmp_path / "store"
    with Memory(store) as memory:
        memory.add_lesson("pin the base image")
    real = folder_doctor._checks
    runs = []

    def a_file_goes_the_first_time(*args: object) -> object:
        runs.append(args)
        if len(runs) == 1:
            raise FileNotFoundError(2, "No such file or directory", "snapshot.json.tmp")
        return real(*args)

    monkeypatch.setattr(folder_doctor, "_checks", a_file_goes_the_first_time)
    report = folder_doctor.report(store)
    assert report["ok"] and _findings(report) == [], report
    assert len(runs) == 2


def test_the_size_of_a_snapshot_folder_counts_no_file_that_went(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "snap"
    folder.mkdir()
    (folder / "kept.json").write_bytes(b"x" * 10)
    (folder / "snapshot.json.tmp").write_bytes(b"y" * 5)
    listed = list(os.scandir(folder))
    (folder / "snapshot.json.tmp").unlink()  # renamed by its writer after the listing
    monkeypatch.setattr(folder_doctor.os, "scandir", lambda _path: iter(listed))
    assert folder_doctor._files_size(folder) == 10
    monkeypatch.undo()
    assert folder_doctor._files_size(tmp_path / "gone") == 0  # the whole folder went


def test_when_every_unlocked_run_meets_a_file_that_went_the_run_under_the_lock_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    Memory(store).close()
    real = folder_doctor._checks

    def unlocked_runs_fail(folder: Path, lock: object = None) -> object:
        if lock is None:
            raise FileNotFoundError(2, "No such file or directory", "snapshot.json.tmp")
        return real(folder, lock)

    monkeypatch.setattr(folder_doctor, "_checks", unlocked_runs_fail)
    report = folder_doctor.report(store)
    assert report["ok"], report
    # Its own hold is not reported as another process's.
    assert [c["status"] for c in report["checks"] if c["name"] == "lock"] == ["ok"]
