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

A write that takes text out of the store (a forget, a redaction, a deletion) removes
the index file with it, so that no copy of the text outlives it; the next search then
built the whole index again inside its call (3.2 s and 131 MB at 100k notes, against
0.07 s). :func:`save_again_apart` keeps that from the next search: a CLI write holds
the file open from before its commit (:func:`hold`), and when the commit removed it,
a child reads the index from the removed file, catches it up with the store (the
forgotten records taken out, as a long-lived process takes them out), and saves it
afresh, a second or so later. The removed file's blocks are freed when the child lets
go of it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ...storage.store import Store
    from .follow import IndexFile, Recall

ENV = "MEMWORK_SAVE_APART"
#: Held by the child while it saves (in the index's folder).
LOCK_NAME = "saving.lock"


def save_apart(store: Store, recall: Recall) -> bool:
    """Fork a child that saves ``recall``'s index for ``store``; True when one was
    started (the caller then returns without saving), False when the caller should save
    itself. Call under the follower's lock, with the process's output flushed."""
    file = recall.index_file
    if file is None:
        return False
    return _in_child(file, lambda: recall.settle(store))


def _in_child(file: IndexFile, work: Callable[[], None], wait: bool = False) -> bool:
    """Fork a child that runs ``work`` while it holds ``file``'s saver lock (``wait``:
    after waiting for a saver that holds it, rather than leaving it the work); True
    when one was started, False when this process cannot fork (or should not: see the
    module docstring)."""
    if os.environ.get(ENV, "1") == "0" or not hasattr(os, "fork"):
        return False
    if threading.active_count() != 1:
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
        if wait:
            wait_for_saver(file)
        with _one_saver(file) as mine:
            if mine:
                work()
    except BaseException:  # noqa: BLE001, S110 - only a cache: the next call catches up
        pass
    finally:
        os._exit(0)


def hold(store: Store) -> int | None:
    """Before a write: a descriptor of ``store``'s saved index file, which reads it
    even once the write's commit has removed it (None: there is none to hold)."""
    from .follow import IndexFile

    file = IndexFile.of(store)
    return None if file is None else file.open()


def save_again_apart(store: Store, held: int) -> bool:
    """After a write (its answer out): when its commit removed the index file ``held``
    reads (:func:`hold`), fork a child that saves the index again from it, caught up
    with the store; True when one was started. ``held`` is closed either way."""
    from .follow import IndexFile

    try:
        file = IndexFile.of(store)
        found = os.fstat(held)
        if file is None or file.holds((found.st_dev, found.st_ino)) or file.exists():
            return False  # nothing was removed, or another process saved one since

        def save() -> None:
            if not file.exists():
                _save_from(store, file, held)

        # A child saving for an earlier write may be about to fail (this write's commit
        # removed its files too): this one waits its turn rather than give up.
        return _in_child(file, save, wait=True)
    finally:
        os.close(held)  # (the child's own copy goes when it ends)


def _save_from(store: Store, file: IndexFile, held: int) -> None:
    """The index read from the removed file ``held``, caught up with ``store`` and
    saved as the store's index file (in the child)."""
    from .follow import Recall

    # Read through the mapping, not row by row (a one-call process's way, for its
    # memory): the save reads every word, 0.21 s against 0.33 at 100k records.
    index = file.load_from(held)
    if index is None:
        return  # unreadable: the next search builds, as before
    recall = Recall()
    recall.start_from(store, index)
    recall.refresh(store)
    recall.flush(store)


#: How long a search that finds no index file waits for a child saving one (it then
#: builds the index itself, as it would have).
WAIT_FOR_SAVER = 30.0


def wait_for_saver(file: IndexFile, most: float = WAIT_FOR_SAVER) -> bool:
    """While a child saves ``file`` (it holds the folder's saver lock), wait for it to
    end, at most ``most`` seconds: a search that finds no file a second after a write
    or a build reads the file the child lands rather than building the index again.
    Whether one was waited for."""
    import fcntl
    import time

    if not file.real():
        return False
    try:
        fd = os.open(file.folder / LOCK_NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False  # no saver has ever run here
    try:
        deadline = time.monotonic() + most
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return waited
                waited = True
                time.sleep(0.02)
                continue
            except OSError:
                return waited
            return waited  # the lock is free: no child saves (any more)
    finally:
        os.close(fd)  # (lets go of the shared lock too)


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
