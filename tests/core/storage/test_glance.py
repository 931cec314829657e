"""A glance reads what this process holds without the store's lock, while nobody has
committed since its last catch-up; whatever needs the lock takes it, and a glance
that finds a commit made meanwhile is read again under the lock.

"Another process" is a second store object on the same folder: its lock is a second
open of the lock file, which excludes this one's as another process's would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.base.errors import StoreError
from memwork.core.base.no_wait import WouldWait, never_waiting
from memwork.core.storage.folder_backend import LOCK_NAME
from memwork.core.storage.lock import InterProcessLock
from memwork.core.storage.store import GlanceOutdated, Store


def _put(store: Store, table: str, doc_id: str, text: str) -> None:
    with store.transaction():
        store.put(table, doc_id, {"id": doc_id, "text": text})


@pytest.fixture(autouse=True)
def _short_lock_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer that meets a held lock gives up within a second (a test that expects
    no wait would otherwise hang for the default 30 s before it failed)."""
    monkeypatch.setenv("MEMWORK_LOCK_TIMEOUT", "1")


def _stores(tmp_path: Path) -> tuple[Store, Store]:
    folder = tmp_path / "store"
    mine = Store(folder)
    _put(mine, "notes", "a", "first")
    _put(mine, "other", "x", "kept apart")
    theirs = Store(folder)
    with mine.reading():
        assert mine.docs("notes")["a"]["text"] == "first"
    return mine, theirs


def _held_elsewhere(tmp_path: Path) -> InterProcessLock:
    lock = InterProcessLock(tmp_path / "store" / LOCK_NAME, timeout=5)
    lock.acquire()
    return lock


def test_a_glance_at_a_quiet_store_neither_waits_for_nor_holds_the_lock(tmp_path: Path) -> None:
    mine, theirs = _stores(tmp_path)
    lock = _held_elsewhere(tmp_path)
    try:
        with never_waiting():
            with mine.glance():
                assert mine.docs("notes")["a"]["text"] == "first"
            # The same read under the lock would have to wait for the other holder.
            with pytest.raises(WouldWait), mine.reading():
                pass
    finally:
        lock.release()
        lock.close()
    with mine.glance():
        # While this glance lasts, another process commits without waiting for it.
        _put(theirs, "notes", "b", "second")
        assert set(mine.docs("notes")) == {"a"}  # as of the glance's start
    mine.close()
    theirs.close()


def test_a_glance_after_another_commit_catches_up_under_the_lock(tmp_path: Path) -> None:
    mine, theirs = _stores(tmp_path)
    _put(theirs, "notes", "b", "second")
    lock = _held_elsewhere(tmp_path)
    try:
        with never_waiting(), pytest.raises(WouldWait), mine.glance():
            pass  # there is something to read: under the lock, which is busy
    finally:
        lock.release()
        lock.close()
    with mine.glance():
        assert set(mine.docs("notes")) == {"a", "b"}
    mine.close()
    theirs.close()


def test_a_table_not_in_memory_is_read_under_the_lock_when_nothing_changed(
    tmp_path: Path,
) -> None:
    mine, theirs = _stores(tmp_path)
    mine.release("other")  # read again from disk when next used
    with mine.glance():
        assert mine.docs("other")["x"]["text"] == "kept apart"
        # The glance now holds the lock, as a read does: another writer waits for it.
        with pytest.raises(StoreError, match="locked by another process"):
            _put(theirs, "notes", "b", "second")
    _put(theirs, "notes", "b", "second")  # and once it is over, the writer goes on
    mine.close()
    theirs.close()


@pytest.mark.parametrize("fold", [False, True], ids=["appended", "folded"])
def test_a_glance_outdated_by_a_commit_is_refused_and_the_lock_let_go(
    tmp_path: Path, fold: bool
) -> None:
    mine, theirs = _stores(tmp_path)
    mine.release("other")
    with pytest.raises(GlanceOutdated), mine.glance():
        _put(theirs, "other", "y", "written meanwhile")
        if fold:
            theirs.fold_log()  # table files and a new log replace those the glance knew
        mine.docs("other")  # from disk: the files are newer than the glance's view
    # The lock was let go with the glance: the other writer goes on at once.
    _put(theirs, "notes", "c", "third")
    with mine.reading():  # and the read again sees everything
        assert set(mine.docs("other")) == {"x", "y"}
        assert set(mine.docs("notes")) == {"a", "c"}
    mine.close()
    theirs.close()


def test_a_write_inside_a_glance_takes_the_lock_or_lands_nothing(tmp_path: Path) -> None:
    mine, theirs = _stores(tmp_path)
    with mine.glance():
        _put(mine, "notes", "b", "mine")  # nobody committed since: it lands
    with pytest.raises(GlanceOutdated), mine.glance():
        _put(theirs, "notes", "c", "theirs")
        _put(mine, "notes", "d", "never")  # written from a view that missed "c"
    with theirs.reading():
        assert set(theirs.docs("notes")) == {"a", "b", "c"}
    mine.close()
    theirs.close()


def test_a_search_outdated_mid_glance_reads_again_and_finds_the_new_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search's glance that needs a table from disk after another process committed
    is run again under the lock: the answer is the store's as of then, whole."""
    from memwork.core.ledger import isolation

    folder = tmp_path / "store"
    memory = Memory(folder)
    memory.observe("s1", "the billing deploy failed")
    assert len(memory.search("billing deploy")) == 1
    writer = Memory(folder)
    viewer = isolation.viewer
    glances: list[bool] = []

    def viewer_meanwhile(store: Store) -> str | None:
        if store is memory.store:
            glances.append(store._glancing)
            if len(glances) == 1:
                writer.observe("s2", "billing deploy retried and passed")
                store.release("sessions")
            # A read of a table from disk (as isolation's reads sessions): the lock.
            assert "s1" in store.docs("sessions")
        return viewer(store)

    monkeypatch.setattr(isolation, "viewer", viewer_meanwhile)
    hits = memory.search("billing deploy")
    assert glances == [True, False]  # the glance, then the read under the lock
    assert {h["title"].split(": ", 1)[1] for h in hits} == {
        "the billing deploy failed",
        "billing deploy retried and passed",
    }
    writer.close()
    memory.close()


def test_an_agents_context_is_answered_while_another_process_holds_the_store(
    tmp_path: Path,
) -> None:
    """The context an agent asks for every step reads from memory while nothing new
    was committed, and catches up once something was."""
    folder = tmp_path / "store"
    memory = Memory(folder)
    memory.set_slot("persona", "You are terse.")
    assert "You are terse." in memory.context()
    lock = _held_elsewhere(tmp_path)
    try:
        with never_waiting():
            assert "You are terse." in memory.context()
    finally:
        lock.release()
    writer = Memory(folder)
    writer.set_slot("persona", "You are thorough.")
    lock.acquire()
    try:
        with never_waiting(), pytest.raises(WouldWait):
            memory.context()
    finally:
        lock.release()
        lock.close()
    assert "You are thorough." in memory.context()
    writer.close()
    memory.close()
