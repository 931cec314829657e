"""Waiting for a busy store lock: in the kernel from the main thread, polling elsewhere.

Each test holds the lock through a second open of ``.lock`` (flock locks belong to
an open file, so two opens conflict even inside one process), exactly as another
process's hold looks to the waiter.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwork.core.ops.memory import Memory
from memwork.core.storage.lock import InterProcessLock, LockTimeout

from ...conftest import folder_digest

pytestmark = pytest.mark.skipif(
    not hasattr(signal, "setitimer"), reason="the kernel wait needs setitimer"
)


def _held(path: Path) -> InterProcessLock:
    holder = InterProcessLock(path, timeout=0)
    holder.acquire()
    return holder


def _release_later(lock: InterProcessLock, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), lock.release()))
    thread.start()
    return thread


def test_a_main_thread_waiter_gets_the_lock_once_the_holder_lets_go(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held(path)
    releaser = _release_later(holder, 0.3)
    waiter = InterProcessLock(path, timeout=30)
    waiter.acquire()
    releaser.join()
    # It holds it now: nobody else can take it.
    with pytest.raises(LockTimeout):
        InterProcessLock(path, timeout=0).acquire()
    waiter.release()
    InterProcessLock(path, timeout=0).acquire()
    # No alarm is left armed and the handler is the one from before.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL


@contextlib.contextmanager
def _program_alarm_handler() -> Iterator[list[int]]:
    """The program's own SIGALRM handler while the block runs: it records each alarm it
    hears; no alarm is left armed and the handler from before is back afterwards."""
    heard: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: heard.append(signum))
    try:
        yield heard
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_the_timeout_still_ends_the_wait_and_puts_the_alarm_back(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held(path)
    with _program_alarm_handler() as heard:
        started = time.monotonic()
        with pytest.raises(LockTimeout):
            InterProcessLock(path, timeout=0.3).acquire()
        assert time.monotonic() - started >= 0.29
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        # The program's own handler is back, and it was not called for our alarm.
        signal.raise_signal(signal.SIGALRM)
        assert heard == [signal.SIGALRM]
    holder.release()
    InterProcessLock(path, timeout=0).acquire()  # the timed-out waiter kept nothing


def test_an_alarm_the_program_armed_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held(path)
    with _program_alarm_handler() as heard:
        signal.setitimer(signal.ITIMER_REAL, 0.15)
        releaser = _release_later(holder, 0.4)
        waiter = InterProcessLock(path, timeout=30)
        waiter.acquire()  # waits by polling: the program's alarm must still go off
        releaser.join()
        waiter.release()
        assert heard == [signal.SIGALRM]


def test_a_waiter_on_another_thread_polls_and_gets_the_lock(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    holder = _held(path)
    got: list[bool] = []

    def wait() -> None:
        waiter = InterProcessLock(path, timeout=30)
        waiter.acquire()
        got.append(True)
        waiter.release()

    thread = threading.Thread(target=wait)
    thread.start()
    time.sleep(0.2)
    assert got == []
    holder.release()
    thread.join()
    assert got == [True]


def test_a_cli_write_on_a_busy_store_times_out_with_the_same_message(
    cli, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    Memory(db).observe("s1", "the store exists")
    before = folder_digest(db)
    holder = _held(Path(db) / ".lock")
    monkeypatch.setenv("MEMWORK_LOCK_TIMEOUT", "1")
    result = cli("lesson", "add", "Pin images by digest")
    holder.release()
    assert (result.code, result.out) == (1, ""), result.err
    assert "is locked by another process (waited 1 s for" in result.err, result.err
    assert folder_digest(db) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
