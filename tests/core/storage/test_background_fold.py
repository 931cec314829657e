"""The background fold of a long-lived process, and waiting for it to settle."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memwork.core.ops.memory import Memory
from memwork.core.storage.background_fold import BackgroundFold
from memwork.core.storage.folder_backend import FolderBackend


def test_settle_waits_for_a_running_fold_and_a_wanted_one() -> None:
    release = threading.Event()
    folds: list[float] = []

    def fold() -> None:
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
