"""A one-call process's index save, left to a child it does not wait for.

A CLI call that built the recall index, or found it many tables behind its store,
saves it for the next call once its answer is out. The answer is out, but the agent
that ran the call waits for the process to end: at 100k long notes the save writes
~220 MB (0.5 s, and the file's pages in the process's memory) after a search that took
0.2 s. So the call forks: the child, holding the very index the call caught up, writes
the file and lands it as the call would have; the call ends at once.

The child lets go of the call's standard streams first (a caller reading the call's
output until it closes would otherwise wait for the child), and of its terminal
(``setsid``). One saver at a time per store: a child that finds another still saving
leaves it the work. Where the system cannot fork, or the process runs threads (a fork
copies only the calling thread, and any lock another held stays held in the child),
the call saves as before. ``MEMWORK_SAVE_APART=0`` turns this off.

What a save must not lose holds as in the call: the save is caught up under the
store's lock, and a commit that took text out of the store meanwhile removes the
files a save is writing, so such a save never lands (:class:`~core.services.recall.
follow.Reservation`).
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ...storage.store import Store
    from .follow import IndexFile, Recall

ENV = "MEMWORK_SAVE_APART"
#: Held by the child while it saves (in the index's folder).
LOCK_NAME = "saving.lock"


def save_apart(store: Store, recall: Recall) -> bool:
    """Fork a child that saves ``recall``'s index for ``store``; True when one was
    started (the caller then returns without saving), False when the caller should save
    itself. Call under the follower's lock, with the process's output flushed."""
    if os.environ.get(ENV, "1") == "0" or not hasattr(os, "fork"):
        return False
    file = recall.index_file
    if threading.active_count() != 1 or file is None:
        return False
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid:
        return True
    # The child: it never returns into the caller's code.
    try:
        _detach()
        with _one_saver(file) as mine:
            if mine:
                recall.settle(store)
    except BaseException:  # noqa: BLE001, S110 - only a cache: the next call catches up
        pass
    finally:
        os._exit(0)


def _detach() -> None:
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


@contextlib.contextmanager
def _one_saver(file: IndexFile) -> Iterator[bool]:
    """True while this process holds the index folder's saver lock; False when another
    does, or the folder is reached through a link (nothing is made there then, as a
    save makes nothing there)."""
    import fcntl

    if not file.make_folders():
        yield False
        return
    fd = os.open(
        file.folder / LOCK_NAME,
        os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0),
        0o600,
    )
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)
