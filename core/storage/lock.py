"""The inter-process lock held across every read-modify-write.

On POSIX this is ``fcntl.flock`` on ``<store>/.lock`` directly: the CLI runs
on every agent step and importing the filelock package costs ~17 ms of a
~120 ms cold start. Elsewhere filelock does the job.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class LockTimeout(Exception):
    """The lock stayed busy for the whole timeout."""


class InterProcessLock:
    """An exclusive, non-reentrant lock on a file (callers count re-entry themselves)."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None
        self._fallback = None
        if fcntl is None:  # pragma: no cover - Windows
            from filelock import FileLock

            self._fallback = FileLock(path, timeout=timeout, thread_local=False)

    def acquire(self, timeout: float | None = None) -> None:
        """Take the lock, waiting up to ``timeout`` seconds (default: the lock's own)."""
        wait = self.timeout if timeout is None else timeout
        if self._fallback is not None:  # pragma: no cover - Windows
            from filelock import Timeout

            try:
                self._fallback.acquire(timeout=wait)
            except Timeout:
                raise LockTimeout(str(self.path)) from None
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._fd = fd
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    raise LockTimeout(str(self.path)) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def release(self) -> None:
        """Let the next process in."""
        if self._fallback is not None:  # pragma: no cover - Windows
            self._fallback.release()
            return
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def is_held_elsewhere(self) -> bool:
        """Whether another process holds the lock right now (for ``doctor``)."""
        try:
            self.acquire(timeout=0)
        except LockTimeout:
            return True
        self.release()
        return False
