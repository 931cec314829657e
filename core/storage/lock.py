"""The inter-process lock held across every read-modify-write.

On POSIX this is ``fcntl.flock`` on ``<store>/.lock`` directly: the CLI runs
on every agent step and importing the filelock package costs ~17 ms of a
~120 ms cold start. Elsewhere filelock does the job.

The lock file is opened with ``O_NOFOLLOW`` and must be a regular file: a
symbolic link planted as ``.lock`` would otherwise make memwork create or
lock a file anywhere on disk. A store the user may only read (another user's
store, a read-only mount) cannot have its lock file opened for writing; the
lock then falls back to a *shared* lock on the existing file, which still
keeps writers out while the store is read, or to no lock at all when the
file is missing and cannot be created (every store file is replaced by
rename, so a reader sees whole files; a writer racing it can at worst make
the read fail with a version mismatch, never corrupt anything). A store
opened that way refuses writes (:attr:`InterProcessLock.read_only`).

The lock file stays open between holds (a search takes the lock once, and opening
the file, checking it and closing it again cost ~3x the two ``flock`` calls of a hold
when the kernel's caches are cold). A hold first checks that the descriptor it keeps
is still that file (by device and inode) and that the file is still linked: one
removed or replaced since (a store deleted, a user's ``rm``) is let go and the path
opened again, so two processes never lock two different files.
A forked child lets go of its parent's open lock files without unlocking them: a
``flock`` on a descriptor the child inherited would count as its parent's hold.

A busy lock is waited for in the kernel when it can be: a blocking ``flock`` in the
main thread, its timeout kept by a one-shot ``SIGALRM`` timer whose handler
interrupts the wait. The waiter then takes the lock the moment its holder lets go
and spends no CPU meanwhile (polling cost ~1 ms of CPU per commit with eight
writers, and a poller could sleep past the release). A signal handler only runs in
the main thread, and a timer someone else armed must not be clobbered, so other
threads, a process with its own alarm pending, and platforms without ``setitimer``
poll instead.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..base.errors import StoreUnreadable

if TYPE_CHECKING:
    from ..base.filepaths import StrPath

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    # The module's name doubles as the "is there flock" flag: None on a platform
    # without fcntl (mypy checks for POSIX, where the module always exists).
    fcntl = None  # type: ignore[assignment]

_KERNEL_WAIT = hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | os.O_NONBLOCK
_OPEN_RW = os.O_RDWR | os.O_CREAT | _NOFOLLOW
_OPEN_RO = os.O_RDONLY | _NOFOLLOW
_READ_ONLY_ERRNOS = (errno.EACCES, errno.EPERM, errno.EROFS)


#: How often a waiter with work of its own to do while it waits (a writer catching up
#: on what the holders commit) is woken to do it: about two commits' holds.
MEANWHILE_EVERY = 0.001

#: How a waiter polls a busy lock: from 0.2 ms, doubling to 2 ms while the hold is
#: short (a commit's), to 20 ms once it has lasted a quarter of a second.
_FIRST_WAIT = 0.0002
_SHORT_CEILING = 0.002
_SHORT_HOLD = 0.25
_LONG_CEILING = 0.02

LOCK_TIMEOUT_ENV = "MEMWORK_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 30.0


def lock_timeout() -> float:
    """Seconds to wait for a store's lock (``MEMWORK_LOCK_TIMEOUT``, default 30)."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if raw is None:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):  # also refuses nan
        from ..base.errors import InvalidInput

        raise InvalidInput(LOCK_TIMEOUT_ENV, f"must be a number of seconds >= 0 (got {raw!r})")
    return value


class LockTimeout(Exception):
    """The lock stayed busy for the whole timeout."""


class _Expired(BaseException):
    """Raised by the alarm handler into a blocking wait whose time ran out.

    A BaseException so that no ``except Exception`` between the handler and
    :func:`_wait_in_kernel` can swallow it.
    """


def _can_wait_in_kernel() -> bool:
    """Whether this thread may arm ``SIGALRM`` for a blocking wait right now."""
    if not _KERNEL_WAIT or threading.current_thread() is not threading.main_thread():
        return False
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        return False  # someone else's alarm (signal.alarm, a test timeout) is pending
    # None: a handler installed from C, which could not be put back afterwards.
    return signal.getsignal(signal.SIGALRM) is not None


def _wait_in_kernel(
    fd: int, mode: int, seconds: float, meanwhile: Callable[[], None] | None = None
) -> bool:
    """Block in ``flock`` for at most ``seconds``; True once the lock is held. With
    ``meanwhile``, the wait is cut every :data:`MEANWHILE_EVERY` to call it.

    On False (or any exception) ``fd`` is closed, which also drops a lock the
    kernel granted in the instant the alarm fired.
    """
    waiting = False

    def expire(signum: int, frame: object) -> None:
        # Only while flock waits: a late alarm must not undo a hold the kernel just
        # granted, nor replace another error on its way out.
        if waiting:
            raise _Expired

    previous = signal.signal(signal.SIGALRM, expire)
    deadline = time.monotonic() + seconds
    try:
        while True:
            if meanwhile is not None:
                meanwhile()
            left = deadline - time.monotonic()
            if left <= 0:
                os.close(fd)
                return False
            step = left if meanwhile is None else min(left, MEANWHILE_EVERY)
            try:
                try:
                    waiting = True
                    signal.setitimer(signal.ITIMER_REAL, step)
                    fcntl.flock(fd, mode)
                    waiting = False
                finally:
                    waiting = False
                    signal.setitimer(signal.ITIMER_REAL, 0)
                return True
            except _Expired:
                pass
            # The alarm may have cut in as the kernel granted the lock: a try that does
            # not wait, on the same descriptor, then finds it held already.
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                pass
    except BaseException:
        os.close(fd)
        raise
    finally:
        signal.signal(signal.SIGALRM, previous)


#: Every lock that may hold its file open, for a forked child to let go of.
_OPEN_LOCKS: weakref.WeakSet[InterProcessLock] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lock in list(_OPEN_LOCKS):
        lock._forget_inherited()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class InterProcessLock:
    """An exclusive (shared on a read-only store), non-reentrant lock on a file.

    Callers count re-entry themselves. The file stays open between holds until
    :meth:`close`.
    """

    def __init__(self, path: StrPath, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None
        #: The lock file's descriptor, open between holds (a writable one only: a
        #: read-only store asks again on each hold whether it may write now).
        self._kept: int | None = None
        self._kept_id: tuple[int, int] = (-1, -1)  # its file's (device, inode)
        #: Why this process cannot write the store (None: it can), set by :meth:`acquire`.
        self.read_only: str | None = None
        #: How many times :meth:`acquire` found the lock held by another (it waited).
        self.found_busy = 0
        self._fallback = None
        if fcntl is None:  # pragma: no cover - Windows
            from filelock import FileLock

            self._fallback = FileLock(path, timeout=timeout, thread_local=False)

    def acquire(
        self, timeout: float | None = None, meanwhile: Callable[[], None] | None = None
    ) -> None:
        """Take the lock, waiting up to ``timeout`` seconds (default: the lock's own);
        while it is busy, ``meanwhile`` is called about every :data:`MEANWHILE_EVERY`
        (the waiter's own work that needs no lock)."""
        wait = self.timeout if timeout is None else timeout
        if self._fallback is not None:  # pragma: no cover - Windows
            from filelock import Timeout

            try:
                self._fallback.acquire(timeout=wait)
            except Timeout:
                raise LockTimeout(str(self.path)) from None
            return
        fd = self._open()
        if fd is None:
            return
        mode = fcntl.LOCK_SH if self.read_only else fcntl.LOCK_EX
        try:
            # A free lock (most holds): taken before any question of how to wait.
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            self._fd = fd
            return
        except BlockingIOError:
            self.found_busy += 1
        except BaseException:
            self._close(fd)
            raise
        if wait > 0 and _can_wait_in_kernel():
            try:
                waited = _wait_in_kernel(fd, mode, wait, meanwhile)
            except BaseException:
                self._forget(fd)  # closed by the wait
                raise
            if not waited:
                self._forget(fd)
                raise LockTimeout(str(self.path)) from None
            self._fd = fd
            return
        started = time.monotonic()
        deadline = started + wait
        delay = _FIRST_WAIT
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                self._fd = fd
                return
            except BlockingIOError:
                if meanwhile is not None:
                    meanwhile()
                now = time.monotonic()
                if now >= deadline:
                    self._close(fd)
                    raise LockTimeout(str(self.path)) from None
                time.sleep(delay)
                # Commits hold the lock ~1 ms: a waiter that slept 50 ms (as it once
                # did) let several go by idle. Long holds (a fold, an import) are
                # polled less often.
                ceiling = _SHORT_CEILING if now - started < _SHORT_HOLD else _LONG_CEILING
                delay = min(delay * 2, ceiling)

    def _open(self) -> int | None:
        """The lock file's descriptor (None: a read-only store without one)."""
        kept = self._kept
        if kept is not None:
            if self._links(kept) > 0:
                return kept
            self._drop_kept()  # removed or replaced since: the path is opened again
        self.read_only = None
        try:
            fd = os.open(self.path, _OPEN_RW, 0o600)
        except OSError as exc:
            if exc.errno not in _READ_ONLY_ERRNOS:
                raise self._refused(exc) from None
            self.read_only = f"its lock file cannot be opened for writing: {exc.strerror}"
            try:
                fd = os.open(self.path, _OPEN_RO)
            except FileNotFoundError:
                return None
            except OSError as again:
                if again.errno in _READ_ONLY_ERRNOS:
                    return None
                raise self._refused(again) from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise StoreUnreadable(
                f"{self.path} is not a regular file; remove it (memwork recreates its lock file)"
            )
        if self.read_only is None:
            self._kept, self._kept_id = fd, (st.st_dev, st.st_ino)
            _OPEN_LOCKS.add(self)
        return fd

    def _links(self, fd: int) -> int:
        """How many names the kept file ``fd`` has (0: removed or replaced); -1 when
        ``fd`` is no longer that file: a descriptor closed behind this lock's back may
        have been given to another file since, which is not this lock's to close."""
        try:
            st = os.fstat(fd)
        except OSError:
            return -1
        return st.st_nlink if (st.st_dev, st.st_ino) == self._kept_id else -1

    def _close(self, fd: int) -> None:
        """Close ``fd`` (which lets go of any hold on it), kept or not."""
        self._forget(fd)
        os.close(fd)

    def _forget(self, fd: int) -> None:
        """``fd`` is closed (or about to be): it is no longer kept."""
        if fd == self._kept:
            self._kept = None

    def _forget_inherited(self) -> None:
        """In a forked child: close the parent's descriptors without unlocking them (the
        parent's hold, if any, stays its own)."""
        held = {fd for fd in (self._fd, self._kept) if fd is not None}
        self._fd = self._kept = None
        for fd in held:
            try:
                os.close(fd)
            except OSError:
                pass

    def _drop_kept(self) -> None:
        """Stop keeping the lock file, closing it while the descriptor is still that
        file."""
        kept, self._kept = self._kept, None
        if kept is not None and self._links(kept) >= 0:
            os.close(kept)

    def close(self) -> None:
        """Close the lock file kept open between holds (a hold keeps it until it is
        let go; the next hold opens it again)."""
        if self._fd is None:
            self._drop_kept()

    def __del__(self) -> None:
        # A lock dropped without close(): its descriptor is not left open.
        if hasattr(self, "_kept_id"):  # (not when __init__ failed before it)
            try:
                self.close()
            except OSError:
                pass

    def _refused(self, exc: OSError) -> StoreUnreadable:
        if exc.errno == errno.ELOOP:
            return StoreUnreadable(
                f"{self.path} is a symbolic link; memwork does not follow links inside a "
                "store: remove it (memwork recreates its lock file)"
            )
        if exc.errno == errno.EISDIR:
            return StoreUnreadable(
                f"{self.path} is a folder; remove it (memwork recreates its lock file)"
            )
        return StoreUnreadable(f"cannot open the lock file {self.path}: {exc.strerror}")

    def release(self) -> None:
        """Let the next process in."""
        if self._fallback is not None:  # pragma: no cover - Windows
            self._fallback.release()
            return
        if self._fd is not None:
            fd, self._fd = self._fd, None
            if fd == self._kept:
                fcntl.flock(fd, fcntl.LOCK_UN)
            else:
                os.close(fd)  # which lets go of the hold

    def is_held_elsewhere(self) -> bool:
        """Whether another process holds the lock right now (for ``doctor``)."""
        try:
            self.acquire(timeout=0)
        except LockTimeout:
            self.close()
            return True
        self.release()
        self.close()
        return False
