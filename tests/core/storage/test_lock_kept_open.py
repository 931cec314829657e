"""The store lock's file stays open between holds, and never lets two holders in.

Each other holder here is a second open of ``.lock`` (flock locks belong to an open
file, so two opens conflict even inside one process), as another process's is.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memwork.core.storage.lock import InterProcessLock, LockTimeout

from .lock_probe import lock_is_free

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/fd").is_dir() or not hasattr(os, "fork"),
    reason="counts open files in /proc and forks",
)


def _open_on(path: Path) -> int:
    """How many of this process's descriptors are open on ``path``."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            found += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:
            continue
    return found


def _busy(path: Path) -> bool:
    """Whether a fresh open of the lock file finds it held."""
    return not lock_is_free(path)


def test_the_lock_file_stays_open_between_holds_and_close_shuts_it(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    lock = InterProcessLock(path, timeout=0)
    for _ in range(3):
        lock.acquire()
        assert _busy(path)
        lock.release()
        assert not _busy(path)
        assert _open_on(path) == 1  # the same descriptor, hold after hold
    lock.close()
    assert _open_on(path) == 0
    lock.acquire()  # a closed lock opens its file again
    assert _busy(path)
    lock.release()
    lock.close()


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_lock_file_removed_or_replaced_between_holds_is_opened_again(
    tmp_path: Path, how: str
) -> None:
    """Had the first lock kept locking the file it held open, it and a process that
    opened the new file would both hold the store."""
    path = tmp_path / ".lock"
    first = InterProcessLock(path, timeout=0)
    first.acquire()
    first.release()
    if how == "removed":
        path.unlink()
    else:
        (tmp_path / "other").write_text("")
        os.replace(tmp_path / "other", path)
    second = InterProcessLock(path, timeout=0)
    second.acquire()
    with pytest.raises(LockTimeout):
        first.acquire()
    second.release()
    first.acquire()
    assert _busy(path)
    first.release()
    first.close()
    second.close()
    assert _open_on(path) == 0


def test_a_forked_child_never_counts_its_parents_hold_as_its_own(tmp_path: Path) -> None:
    """A child inherits the parent's open lock file; a flock on that descriptor would
    succeed as the parent's own hold. The child opens its own instead (and finds the
    lock busy), and the parent's hold outlives the child."""
    path = tmp_path / ".lock"
    lock = InterProcessLock(path, timeout=0)
    lock.acquire()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            lock.acquire()
        except LockTimeout:
            code = 0 if _open_on(path) == 0 else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _busy(path)  # still the parent's
    lock.release()
    assert not _busy(path)
    lock.close()


def test_a_child_forked_between_holds_takes_the_lock_as_its_own(tmp_path: Path) -> None:
    """A child's hold is its own: the parent's lock, open in the parent, is busy
    while the child holds it, and free once the child lets go."""
    path = tmp_path / ".lock"
    lock = InterProcessLock(path, timeout=0)
    lock.acquire()
    lock.release()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            lock.acquire()
            os.write(ready_w, b"x")
            os.read(go_r, 1)
            lock.release()
        finally:
            os._exit(0)
    try:
        assert os.read(ready_r, 1) == b"x"
        with pytest.raises(LockTimeout):
            lock.acquire()
    finally:
        os.write(go_w, b"x")  # the child never waits past the test
        os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, go_r, go_w):
            os.close(fd)
    lock.acquire()
    lock.release()
    lock.close()


def test_a_kept_descriptor_closed_or_reused_behind_the_locks_back_is_opened_again(
    tmp_path: Path,
) -> None:
    """A program that closes every descriptor (as a daemon does) and opens another
    file on the same number: the lock opens its own file again, never the other."""
    path = tmp_path / ".lock"
    lock = InterProcessLock(path, timeout=0)
    lock.acquire()
    lock.release()
    kept = lock._kept
    assert kept is not None
    os.close(kept)
    other = os.open(tmp_path / "other", os.O_RDWR | os.O_CREAT)
    try:
        assert other == kept  # the lowest free number: the same one
        lock.acquire()
        assert _busy(path)
        lock.release()
        lock.close()
        # The other file was never locked nor closed by it.
        os.fstat(other)
    finally:
        os.close(other)
