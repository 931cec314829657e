"""Whether a store's lock is free, as another process would find it."""

from __future__ import annotations

from pathlib import Path

from memwork.core.storage.lock import InterProcessLock, LockTimeout


def lock_is_free(path: Path) -> bool:
    """Whether a fresh open of the lock file ``path`` can take it (flock locks belong to
    an open file, so a second open conflicts even inside one process)."""
    other = InterProcessLock(path, timeout=0)
    try:
        other.acquire()
    except LockTimeout:
        return False
    other.release()
    other.close()
    return True
