"""A read or a transaction that fails anywhere lets go of the store: its lock, its
thread mutex and its depth, whatever failed."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from memwork.core.storage.lock import InterProcessLock
from memwork.core.storage.store import Store

from .lock_probe import lock_is_free


def _free(store_dir: Path) -> bool:
    """Whether another process could take the store's lock now."""
    return lock_is_free(store_dir / ".lock")


def _free_to_other_threads(store: Store) -> bool:
    taken = []

    def take() -> None:
        taken.append(store._mutex.acquire(timeout=2))
        if taken[0]:
            store._mutex.release()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return bool(taken[0])


def test_a_failing_catch_up_lets_go_of_the_store(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    store = Store(tmp_path / "s")
    caught_up = store._refresh

    def fails() -> None:
        raise OSError("the disk went away")

    monkeypatch.setattr(store, "_refresh", fails)
    with pytest.raises(OSError, match="went away"), store.reading():
        pytest.fail("the block must not run")
    assert store._depth == 0
    assert _free(tmp_path / "s")
    assert _free_to_other_threads(store)
    monkeypatch.setattr(store, "_refresh", caught_up)
    with store.reading() as same:
        assert same is store
        assert not _free(tmp_path / "s")  # held while the block runs
    assert _free(tmp_path / "s")


def test_nested_reads_hold_once_and_a_failing_block_lets_go(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    with pytest.raises(ValueError, match="inner"), store.reading(), store.reading():
        assert store._depth == 2
        assert not _free(tmp_path / "s")
        raise ValueError("inner")
    assert store._depth == 0
    assert _free(tmp_path / "s")
    assert _free_to_other_threads(store)


def test_a_busy_lock_leaves_the_mutex_free(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    store = Store(tmp_path / "s")
    holder = InterProcessLock(tmp_path / "s" / ".lock", timeout=0)
    holder.acquire()
    monkeypatch.setenv("MEMWORK_LOCK_TIMEOUT", "0")
    monkeypatch.setattr(store.backend, "_lock_timeout", 0.0)
    monkeypatch.setattr(store.backend._lock, "timeout", 0.0)
    with pytest.raises(Exception, match="locked by another process"), store.reading():
        pass
    assert store._depth == 0
    assert _free_to_other_threads(store)
    holder.release()
    holder.close()
    with store.reading():
        pass
