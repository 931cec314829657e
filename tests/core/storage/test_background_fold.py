"""The background fold of a long-lived process, and waiting for it to settle."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memwork.core.ops.memory import Memory
from memwork.core.storage import store as store_module
from memwork.core.storage import wal
from memwork.core.storage.background_fold import BackgroundFold
from memwork.core.storage.folder_backend import FolderBackend
from memwork.core.storage.lock import InterProcessLock


def test_settle_waits_for_a_running_fold_and_a_wanted_one() -> None:
    release = threading.Event()
    folds: list[float] = []

    def fold(plan: object | None) -> None:
        release.wait(10)
        folds.append(time.monotonic())

    folding = BackgroundFold(fold)
    try:
        assert folding.settle(1.0)  # nothing asked for: settled at once
        folding.wake()
        assert not folding.settle(0.1)  # running, and held up
        release.set()
        assert folding.settle(10.0)
        assert len(folds) == 1
        folding.wake()  # asked again: settle waits for this one too
        assert folding.settle(10.0)
        assert len(folds) == 2
    finally:
        release.set()
        folding.stop()


def test_doctor_in_a_long_lived_process_does_not_take_its_own_fold_for_a_busy_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "4")
    finish = FolderBackend.fold_finish
    folding = threading.Event()

    def slow_finish(self: FolderBackend, plan: object) -> bool:
        folding.set()
        time.sleep(0.5)  # the store's lock is held meanwhile
        return finish(self, plan)

    monkeypatch.setattr(FolderBackend, "fold_finish", slow_finish)
    memory = Memory(tmp_path / "s")
    try:
        session = memory.start_session(title="t")["id"]
        for n in range(6):
            memory.observe(session, f"note {n}")
        assert folding.wait(10), "no fold ran"
        checks = {c["name"]: c for c in memory.doctor()["checks"]}
        assert checks["lock"] == {"name": "lock", "status": "ok", "detail": "free"}
    finally:
        memory.close()


def _folded(memory: Memory) -> bool:
    """Whether the log was folded since the store was opened (its first fold)."""
    backend = memory.store.backend
    assert isinstance(backend, FolderBackend)
    return backend._base.generation > 0


def _hold_elsewhere(folder: Path) -> InterProcessLock:
    """The store's lock, held as another process would hold it."""
    other = InterProcessLock(folder / ".lock", timeout=0)
    other.acquire()
    return other


def _busy_once_prepared(
    monkeypatch: pytest.MonkeyPatch, folder: Path, handover: float, release_after: float | None
) -> tuple[list[InterProcessLock], threading.Event]:
    """Folds asked for by the fifth commit (the session and four notes: the last call
    asks, none comes after it), handed over for ``handover`` seconds, and another
    writer that takes the lock as soon as the fold is prepared (letting it go after
    ``release_after`` seconds, or when the test does)."""
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "5")
    monkeypatch.setattr(store_module, "HANDOVER_S", handover)
    real_prepare = FolderBackend.fold_prepare
    other: list[InterProcessLock] = []
    prepared = threading.Event()

    def prepare_then_busy(self: FolderBackend, plan: object) -> None:
        real_prepare(self, plan)
        other.append(_hold_elsewhere(folder))  # another writer has the lock now
        if release_after is not None:
            threading.Timer(release_after, other[-1].release).start()
        prepared.set()

    monkeypatch.setattr(FolderBackend, "fold_prepare", prepare_then_busy)
    return other, prepared


def _four_notes(memory: Memory) -> str:
    session = memory.start_session(title="t")["id"]
    for n in range(4):
        memory.observe(session, f"note {n}")
    return str(session)


def _handed_over(memory: Memory) -> bool:
    """Whether the fold thread, finding the lock busy, handed the fold over (waits)."""
    deadline = time.monotonic() + 10
    while memory.store._prepared is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return memory.store._prepared is not None


def test_a_fold_prepared_while_others_hold_the_lock_is_committed_by_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With other writers queued for the lock, the fold thread would wait for it
    holding the process's mutex, and the process's next call behind it: the next call
    commits the fold in its own hold instead."""
    folder = tmp_path / "s"
    other, prepared = _busy_once_prepared(monkeypatch, folder, 30.0, None)  # only a call
    memory = Memory(folder)
    try:
        session = _four_notes(memory)
        assert prepared.wait(10), "no fold was prepared"
        assert _handed_over(memory) and not _folded(memory)
        threading.Timer(0.2, other[0].release).start()
        started = time.monotonic()
        memory.observe(session, "the next call")  # waits for the other writer only
        assert time.monotonic() - started < 5
        assert _folded(memory) and memory.store._prepared is None
        memory.store.settle(5)
        notes = [o["content"] for o in memory.get_session(session)["observations"]]
        assert notes == [*(f"note {n}" for n in range(4)), "the next call"]
    finally:
        memory.close()
    fresh = Memory(folder)
    try:
        assert len(fresh.get_session(session)["observations"]) == 5
    finally:
        fresh.close()


def test_a_fold_nobody_takes_over_is_committed_by_its_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An idle process (no next call): the thread commits the fold itself once the other
    writer lets the lock go."""
    folder = tmp_path / "s"
    _busy_once_prepared(monkeypatch, folder, 0.1, 0.3)
    memory = Memory(folder)
    try:
        _four_notes(memory)
        assert memory.store._folder is not None
        assert memory.store._folder.settle(10)
        assert _folded(memory)
        assert memory.store._prepared is None
    finally:
        memory.close()


def test_closing_commits_a_fold_handed_over_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "s"
    _busy_once_prepared(monkeypatch, folder, 30.0, 0.2)
    memory = Memory(folder)
    _four_notes(memory)
    assert _handed_over(memory)
    started = time.monotonic()
    memory.close()
    assert time.monotonic() - started < 5  # not the 30 s a handover may wait
    log = folder / "store.log"
    assert wal.read_header(log, log.read_bytes()) == 5  # folded: the log follows commit 5
