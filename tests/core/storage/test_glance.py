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


_OBSERVER = """
import sys
from memwork import Memory
memory = Memory(sys.argv[1])
for n in range(int(sys.argv[3])):
    memory.observe(sys.argv[2], f"fleetnote {sys.argv[2]} number {n}")
    print(n, flush=True)
memory.close()
"""


def test_searches_beside_writer_processes_never_lose_sight_of_a_commit(tmp_path: Path) -> None:
    """Three writer processes observe while this process searches and asks for its
    context without pause; the log is folded every few commits, so glances meet
    appends and folds alike. Each search sees at least what the one before saw, every
    hit is a note as written, and once the writers are done every note is found."""
    import subprocess
    import sys

    from tests.conftest import python_env

    folder = tmp_path / "store"
    memory = Memory(folder)
    memory.observe("w0", "fleetnote w0 number start")
    assert len(memory.search("fleetnote")) == 1
    each = 60  # 181 notes: within a search's largest limit (200)
    env = python_env(MEMWORK_LOG_RECORDS="6", MEMWORK_FSYNC="0")
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _OBSERVER, str(folder), f"w{n}", str(each)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(1, 4)
    ]
    seen = 1
    searches = 0
    while any(w.poll() is None for w in writers) or searches < 5:
        hits = memory.search("fleetnote", limit=200)
        searches += 1
        titles = [h["title"].split(": ", 1)[1] for h in hits]
        assert all(t.startswith("fleetnote w") for t in titles), titles
        assert len(set(titles)) == len(titles)
        assert len(hits) >= seen
        seen = len(hits)
        memory.context()
    for writer in writers:
        out, _ = writer.communicate(timeout=60)
        assert writer.returncode == 0
        assert out.split()[-1] == str(each - 1)
    assert len(memory.search("fleetnote", limit=200)) == 1 + 3 * each
    assert searches > 5
    memory.close()


def test_changes_heard_before_an_outdated_glance_still_reach_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search index catches up from the changes its process heard; a glance that
    is outdated while it applies them must leave them to be applied again, or the read
    under the lock applies only what it adopts itself, and a note is never found."""
    from memwork.core.services.recall.follow import Recall
    from tests.core.storage.test_never_waiting import _save_settled

    folder = tmp_path / "store"
    memory = Memory(folder)
    memory.observe("s1", "alpha note one")
    assert len(memory.search("alpha")) == 1
    _save_settled(memory)  # its first save caught up first: none is due during the test
    writer = Memory(folder)
    writer.observe("s2", "alpha note two")
    with memory.store.reading():
        pass  # taken in (by a context, say): heard by the index, not applied yet
    memory.store.release("observations.s2")  # what applying it reads: from disk
    apply = Recall._apply
    applied: list[int] = []

    def apply_after_another_commit(self: Recall, store: Store, index: object, heard: list) -> int:
        if not applied:
            writer.observe("s3", "alpha note three")  # between the glance's look and its read
        applied.append(len(heard))
        return apply(self, store, index, heard)  # type: ignore[arg-type]

    monkeypatch.setattr(Recall, "_apply", apply_after_another_commit)
    hits = memory.search("alpha")
    assert applied[0] == 1  # the glance was outdated while it applied the one change
    assert sorted(h["title"].rsplit(" ", 1)[1] for h in hits) == ["one", "three", "two"]
    writer.close()
    memory.close()


def test_locked_reads_take_the_lock_every_time_when_asked_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEMWORK_LOCKED_READS=1 (a store on a network filesystem that caches file sizes):
    no read answers without the lock."""
    monkeypatch.setenv("MEMWORK_LOCKED_READS", "1")
    mine, theirs = _stores(tmp_path)
    lock = _held_elsewhere(tmp_path)
    try:
        with never_waiting(), pytest.raises(WouldWait), mine.glance():
            pass
    finally:
        lock.release()
        lock.close()
    with mine.glance():
        assert mine.docs("notes")["a"]["text"] == "first"
    mine.close()
    theirs.close()


def test_a_read_inside_a_read_leaves_the_outdated_glance_to_the_outer_one(tmp_path: Path) -> None:
    """Only the read that began the glance reads again: one inside it would read under
    the lock from the view the glance began with, and miss the other commit."""
    mine, theirs = _stores(tmp_path)
    mine.release("other")
    runs = {"outer": 0, "inner": 0}

    def inner() -> set[str]:
        runs["inner"] += 1
        if runs["inner"] == 1:
            _put(theirs, "other", "y", "written meanwhile")
        return set(mine.docs("other"))

    def outer() -> set[str]:
        runs["outer"] += 1
        return mine.read(inner)

    assert mine.read(outer) == {"x", "y"}
    assert runs == {"outer": 2, "inner": 2}
    mine.close()
    theirs.close()
