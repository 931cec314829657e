"""A call that must not wait is told so at once, and the store stays as it was.

The HTTP door answers quick reads on its event loop inside ``never_waiting()``: a
lock another process or thread holds must raise ``WouldWait`` there (the door then
runs the call in a thread), never hold the loop while it waits.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.base.no_wait import WouldWait, may_wait, never_waiting, taken
from memwork.core.storage.folder_backend import LOCK_NAME
from memwork.core.storage.lock import InterProcessLock


def _without_waiting(memory: Memory, query: str) -> list[dict[str, object]]:
    """A search that must not wait, asked again while the index's background save holds
    the index for one of its short slices (the only wait a quiet store has)."""
    for _ in range(200):
        try:
            with never_waiting():
                return memory.search(query)
        except WouldWait:
            time.sleep(0.01)
    raise AssertionError("every search without waiting met a wait")


def _save_settled(memory: Memory) -> None:
    """Until the kept recall index owes no save soon and none is under way."""
    import time

    from memwork.core.services.recall import search

    lock, recall = search.kept_recall(memory.store)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        saver = search.saver_of(memory.store)
        with lock:
            due = recall.save_due()
        soon = due is not None and due < time.monotonic() + 10
        if not soon and (saver is None or not saver.saving):
            return
        time.sleep(0.05)
    raise AssertionError("the recall index's first save never landed")


def _memory(tmp_path: Path) -> Memory:
    memory = Memory(tmp_path / "store")
    memory.observe("s1", "the deploy of billing failed on a missing migration")
    return memory


def test_a_lock_another_process_holds_raises_once_the_search_needs_it(tmp_path: Path) -> None:
    """A search answers from what the process holds while nobody committed since (it
    takes no lock then); once another process has committed, it must read that under
    the lock, and a call that must not wait is told so."""
    memory = _memory(tmp_path)
    assert memory.search("billing migration")  # the index is built, outside the loop
    _save_settled(memory)
    other = InterProcessLock(tmp_path / "store" / LOCK_NAME, timeout=5)
    other.acquire()  # a second open of the file: what another process's hold is
    try:
        with never_waiting():
            hits = memory.search("billing migration")
        assert [h["kind"] for h in hits] == ["observation"]
    finally:
        other.release()
    writer = Memory(tmp_path / "store")  # a store of its own: what another process is
    writer.observe("s2", "billing's migration was added by hand")
    other.acquire()
    try:
        with never_waiting(), pytest.raises(WouldWait):
            memory.search("billing migration")
        # Outside, the same call waits as ever: here it would wait out the timeout.
        assert may_wait()
    finally:
        other.release()
        other.close()
    # Nothing was left held or half done: the store reads and writes as before.
    assert len(memory.search("billing migration")) == 2
    memory.observe("s1", "billing's migration was checked")
    assert len(memory.search("billing migration")) == 3
    writer.close()
    memory.close()


def test_the_store_held_by_another_thread_raises_instead_of_waiting(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    memory.search("billing")
    store = memory.store
    holding, done = threading.Event(), threading.Event()

    def hold() -> None:
        with store.reading():
            holding.set()
            done.wait(10)

    worker = threading.Thread(target=hold)
    worker.start()
    try:
        assert holding.wait(10)
        with never_waiting(), pytest.raises(WouldWait):
            memory.search("billing")
    finally:
        done.set()
        worker.join()
    assert memory.search("billing")
    memory.close()


def test_a_first_build_of_the_recall_index_is_never_made_without_waiting(
    tmp_path: Path,
) -> None:
    memory = _memory(tmp_path)
    with never_waiting(), pytest.raises(WouldWait):
        memory.search("billing")
    assert memory.search("billing")  # built where it may take its time
    memory.close()


def test_taken_waits_unless_told_not_to() -> None:
    lock = threading.Lock()
    with taken(lock):
        assert lock.locked()
    assert not lock.locked()
    held = threading.Lock()
    held.acquire()
    freed = threading.Timer(0.05, held.release)
    freed.start()
    with taken(held):  # waits for the timer's release
        pass
    freed.join()
    held.acquire()
    try:
        with never_waiting(), pytest.raises(WouldWait), taken(held):
            pass
    finally:
        held.release()


def test_a_write_is_never_begun_without_waiting(tmp_path: Path) -> None:
    """A commit ends in an fsync: a call that must not wait stops before it writes,
    and leaves the store as it was (a context with its log on writes its injections)."""
    from memwork.core.ledger import audit, config

    memory = _memory(tmp_path)
    memory.set_slot("persona", "You are terse.")
    config.set_value(memory.store, "context_log", "on", now=memory.now(), actor="tui")
    with never_waiting():
        with pytest.raises(WouldWait):
            memory.context()
        with pytest.raises(WouldWait):
            memory.observe("s1", "a second note")
    with memory.store.reading():
        assert not [e for e in audit.entries(memory.store) if e["action"] == "inject"]
    assert len(memory.search("note billing")) == 1
    assert "You are terse." in memory.context()  # and, where it may wait, it writes
    with memory.store.reading():
        assert [e["action"] for e in audit.entries(memory.store)].count("inject") == 1
    memory.close()


def test_a_long_catch_up_is_left_to_a_call_that_may_wait(tmp_path: Path) -> None:
    """Another writer's many commits are more than a quick call's work to read: the call
    stops before reading them; a few are read at once."""
    memory = _memory(tmp_path)
    memory.search("billing")
    # The index built here is saved in the background at once, and that save catches up
    # with whatever is committed by then: let it land first, or on a busy machine it
    # reads the other writer's commits below before the search does.
    _save_settled(memory)
    other = Memory(tmp_path / "store")  # a store of its own: what another process is
    other.observe("s2", "one small note about billing")
    assert len(_without_waiting(memory, "billing")) == 2  # a few records: read at once
    for n in range(120):
        other.observe("s2", f"note {n} on the billing rollout: " + "details " * 100)
    with never_waiting(), pytest.raises(WouldWait):
        memory.search("billing")
    assert len(memory.search("billing", limit=200)) == 122
    other.close()
    memory.close()
