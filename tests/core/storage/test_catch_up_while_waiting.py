"""A writer that waits for a busy store reads what the holder commits while it waits.

With several writers on one folder store, each hold used to begin by reading every
commit the others made since this process last held the lock: half of each hold with
eight writers. A waiter now takes in, without the lock, the records that verify, and
its hold reads only what came after them. What it cannot prove whole (a record still
being appended, damage) is left to the read under the lock, which alone judges it.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from memwork.core.storage import wal
from memwork.core.storage.backend import Change
from memwork.core.storage.lock import InterProcessLock, LockTimeout
from memwork.core.storage.store import Store

from .lock_probe import lock_is_free


def _put(store: Store, doc_id: str) -> None:
    with store.transaction():
        store.put("notes", doc_id, {"id": doc_id, "text": f"note {doc_id}"})


def _writer_and_reader(folder: Path) -> tuple[Store, Store]:
    """Two stores on ``folder``: one wrote ``n1``, the other has read it."""
    writer, reader = Store(folder), Store(folder)
    _put(writer, "n1")
    with reader.reading():
        reader.docs("notes")
    return writer, reader


def _write_at(folder: Path, at: int, data: bytes) -> None:
    """``data`` written into the store's log at ``at``, as another process appends."""
    with open(folder / wal.LOG_NAME, "r+b") as log:
        log.seek(at)
        log.write(data)


def test_a_waiting_writer_takes_in_the_holders_commits_before_it_gets_the_lock(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "s"
    holder, waiter = Store(folder), Store(folder)
    _put(holder, "a0")
    with waiter.reading():
        assert set(waiter.docs("notes")) == {"a0"}
    heard: list[tuple[int, bool]] = []

    def listen(change: Change) -> None:
        heard.append((change.generation, holder._depth > 0))  # the holder still holds it

    waiter.subscribe(listen)
    committed = threading.Event()

    def hold() -> None:
        with holder._locked():
            for n in range(1, 4):
                _put(holder, f"a{n}")
            committed.set()
            time.sleep(0.4)  # the waiter waits meanwhile, and reads what is above

    thread = threading.Thread(target=hold)
    thread.start()
    assert committed.wait(10)
    _put(waiter, "b0")
    thread.join()

    # The holder's three commits (generations 2-4) were heard while it still held the
    # lock, in one catch-up, and not again once the waiter held it; then its own.
    assert heard == [(4, True), (5, False)]
    with waiter.reading():
        assert set(waiter.docs("notes")) == {"a0", "a1", "a2", "a3", "b0"}
    fresh = Store(folder)
    with fresh.reading():
        assert set(fresh.docs("notes")) == {"a0", "a1", "a2", "a3", "b0"}
        assert fresh.committed_generation() == 5
    for store in (holder, waiter, fresh):
        store.close()


def test_a_record_still_being_appended_is_left_for_the_read_under_the_lock(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "s"
    writer, reader = _writer_and_reader(folder)
    _put(writer, "n2")
    before = (folder / wal.LOG_NAME).read_bytes()
    _put(writer, "n3")
    whole = (folder / wal.LOG_NAME).read_bytes()
    # The third record as another reader can meet it while its writer appends it.
    cut = len(before) + (len(whole) - len(before)) // 2
    os.truncate(folder / wal.LOG_NAME, cut)

    reader._catch_up()
    assert set(reader.cache.tables["notes"]) == {"n1", "n2"}
    assert not reader.backend._log.damaged  # type: ignore[attr-defined]
    assert capfd.readouterr().err == ""  # nothing called damaged

    _write_at(folder, cut, whole[cut:])  # the append ends
    with reader.reading():
        assert set(reader.docs("notes")) == {"n1", "n2", "n3"}
        assert reader.committed_generation() == 3
    assert capfd.readouterr().err == ""
    writer.close()
    reader.close()


def test_a_record_written_over_bytes_that_did_not_verify_is_read_at_the_same_size(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # A reader that met bytes past the last record that verified, then a writer that cut
    # them and appended a record just as long: the log's size did not change, its
    # content did. (memwork cuts such bytes before it appends: after a write that failed
    # half way, for one.)
    folder = tmp_path / "s"
    writer, reader = _writer_and_reader(folder)
    before = (folder / wal.LOG_NAME).stat().st_size
    _put(writer, "n2")
    writer.close()
    whole = (folder / wal.LOG_NAME).read_bytes()
    record = whole[before:]
    half = len(record) // 2
    _write_at(folder, before, record[:half] + bytes(len(record) - half))  # not a record
    with reader.reading():
        assert set(reader.docs("notes")) == {"n1"}
    capfd.readouterr()  # the reader says what it could not read; not under test here

    _write_at(folder, before, record)  # the record, as long as those bytes
    assert (folder / wal.LOG_NAME).stat().st_size == len(whole)
    with reader.reading():
        assert set(reader.docs("notes")) == {"n1", "n2"}
        assert reader.committed_generation() == 2
    reader.close()


def test_reading_without_the_lock_stops_where_a_record_does_not_verify(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    store = Store(folder)
    sizes = [wal.HEADER_SIZE]
    for n in range(1, 4):
        _put(store, f"n{n}")
        sizes.append((folder / wal.LOG_NAME).stat().st_size)
    store.close()
    data = bytearray((folder / wal.LOG_NAME).read_bytes())
    body = bytes(data[wal.HEADER_SIZE :])

    whole = wal.read_settled("log", body, wal.HEADER_SIZE, 0)
    assert [c.generation for c in whole.records] == [1, 2, 3]
    assert whole.end == sizes[3]
    # Only those after a generation already read.
    assert [c.generation for c in wal.read_settled("log", body, 24, 2).records] == [3]

    data[sizes[1] + wal.RECORD_HEADER + 3] ^= 0x01  # a payload byte of record 2
    damaged = bytes(data[wal.HEADER_SIZE :])
    settled = wal.read_settled("log", damaged, wal.HEADER_SIZE, 0)
    assert [c.generation for c in settled.records] == [1]
    assert settled.end == sizes[1]
    assert not settled.damage
    # The read under the lock is the one that finds record 3 past the damage, and says so.
    locked = wal.read_records("log", damaged, wal.HEADER_SIZE, 0)
    assert [c.generation for c in locked.records] == [1, 3]
    assert locked.damage


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="the kernel wait needs setitimer")
def test_the_wait_still_times_out_and_puts_the_alarm_back_when_it_works_meanwhile(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".lock"
    holder = InterProcessLock(path, timeout=0)
    holder.acquire()
    calls: list[float] = []
    started = time.monotonic()
    with pytest.raises(LockTimeout):
        InterProcessLock(path, timeout=0.3).acquire(meanwhile=lambda: calls.append(1.0))
    assert time.monotonic() - started >= 0.29
    assert len(calls) > 10  # woken every millisecond or so, not once
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    holder.release()
    # Free again: the waiter that gave up holds nothing.
    assert lock_is_free(path)


def test_a_waiter_that_works_meanwhile_gets_the_lock_as_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = InterProcessLock(path, timeout=0)
    holder.acquire()
    threading.Timer(0.2, holder.release).start()
    calls: list[float] = []
    waiter = InterProcessLock(path, timeout=10)
    started = time.monotonic()
    waiter.acquire(meanwhile=lambda: calls.append(time.monotonic()))
    waited = time.monotonic() - started
    assert 0.19 <= waited < 2
    assert calls and calls[-1] - started < waited
    assert not lock_is_free(path)
    waiter.release()
    assert lock_is_free(path)
