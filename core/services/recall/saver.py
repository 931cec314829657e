"""The background thread that saves a long-lived process's recall index.

A query never saves the index (it would wait for a rewrite of the whole file: 0.6-1.7 s
at 30k long notes, ~18 s at 100k). Its catch-up marks the index changed and wakes this
thread, which waits until the save is due (:meth:`Recall.save_due`) and then saves in
slices of about a millisecond, each under the follower's lock and followed by a rest,
so a query waits at most one slice and a write is slowed little
(:mod:`core.services.recall.snapshot`):

0. check the titles a build left unchecked, a slice at a time (their seals go into
   the file: :meth:`RecallIndex.seal`);
1. catch up and open the files to write, under the store's lock (the save then holds
   at least what the store held at that moment);
2. pack the decoded postings, a slice at a time, and copy the index in one slice;
3. outside every lock, encode the copy in pieces and write them, pausing between them;
4. rename the files in under the store's lock, unless a commit removed them meanwhile
   (it removed text: the file must not bring it back);
5. if the index has not changed since the copy, read it back from the file just
   written (mapped, as a fresh process would) and hand the freed heap back to the
   system: an index built in this process, whose every text and posting was a Python
   object, then holds about what one read from its file does.

Writers never wait for a save: the store's lock is held only for steps 1 and 4.
:func:`stop` ends the thread between two slices (a half-written file is removed); a
closing process then saves synchronously (:meth:`Recall.flush`).
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from typing import TYPE_CHECKING

from . import saved_file, snapshot
from .follow import IndexFile, Recall

if TYPE_CHECKING:
    from ...storage.store import Store

#: Longest slice of work under the follower's lock, in seconds.
SLICE = 0.001
#: Rest after each slice or piece, in seconds: a query waiting for the lock gets it,
#: and the process's other threads the interpreter (a save takes at most a third).
REST = 0.002
#: Longest sleep with nothing to save, in seconds (then the thread looks whether its
#: store is still open).
IDLE = 60.0


class Saver:
    """Saves one store's kept recall index in the background (see the module
    docstring). The thread starts at the first :meth:`wake`."""

    def __init__(self, store: Store, lock: threading.Lock, recall: Recall) -> None:
        self._store = weakref.ref(store)
        self._lock = lock
        self._recall = recall
        self._poked = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = threading.Lock()
        #: Saves landed, saves that did not (a commit removed the files meanwhile), and
        #: the wall seconds the last one took from start to landing (slices and rests).
        self.landed = 0
        self.missed = 0
        self.last_seconds = 0.0
        #: Saves after which the index gave way to the file they wrote.
        self.adopted = 0
        #: Whether a save is under way.
        self.saving = False

    def wake(self) -> None:
        """The index changed: look whether a save is due (cheap; called by a query)."""
        if self._thread is None:
            with self._start:
                if self._thread is None and not self._stopping.is_set():
                    self._thread = threading.Thread(
                        target=self._run, name="memwork-recall-saver", daemon=True
                    )
                    self._thread.start()
        self._poked.set()

    def stop(self) -> None:
        """End the thread (a save under way is abandoned between two slices)."""
        self._stopping.set()
        self._poked.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._poked.clear()
            with self._lock:
                due = self._recall.save_due()
            wait = IDLE if due is None else due - time.monotonic()
            if wait > 0:
                self._poked.wait(min(wait, IDLE))
                if self._store() is None:
                    return  # the store was closed and dropped
                continue
            store = self._store()
            if store is None:
                return
            self.saving = True
            try:
                self._save(store)
            except Exception:  # noqa: BLE001 - only a cache: never take the process down
                with self._lock:
                    self._recall.saved(landed=False)
            finally:
                self.saving = False
            del store

    def _save(self, store: Store) -> None:
        recall = self._recall
        began = time.monotonic()
        if not self._seal():
            return
        with self._lock:
            reservation = recall.reserve(store)
            index = recall.index
        if reservation is None or index is None:
            return
        try:
            while True:
                if self._stopping.is_set():
                    return
                with self._lock:
                    if recall.index is not index:
                        return  # the follower started over (another store at this place)
                    if snapshot.pack_some(index, SLICE):
                        frozen = snapshot.copy_of(index)
                        vectors = recall.freeze()
                        break
                time.sleep(REST)
            reservation.write(IndexFile.NAME, saved_file.pieces(frozen), _rest)
            if vectors is not None:
                reservation.write(vectors[0], [vectors[1]()], _rest)
            if self._stopping.is_set():
                landed = False
            else:
                landed = reservation.land(store, keep=IndexFile.NAME)
        finally:
            reservation.discard()
        kept, adopted = reservation.kept, False
        with self._lock:
            recall.saved(landed)
            if landed and kept is not None and recall.index is index:
                adopted = recall.adopt(frozen, kept, reservation.kept_id)
        if kept is not None and not adopted:
            with contextlib.suppress(BufferError):
                kept.close()
        del frozen, index, kept
        if adopted:
            self.adopted += 1
            give_back_memory()
        self.last_seconds = time.monotonic() - began
        if landed:
            self.landed += 1
        else:
            self.missed += 1

    def _seal(self) -> bool:
        """Check the titles a build left unchecked, in slices (their seals go into the
        file this save writes); False when stopped or the follower started over."""
        recall = self._recall
        with self._lock:
            index = recall.index
            waiting = index.unsealed() if index is not None else []
        at = 0
        while True:
            if self._stopping.is_set():
                return False
            with self._lock:
                if recall.index is not index or index is None:
                    return False
                at, changed = snapshot.seal_some(index, waiting, at, SLICE)
                recall.sealed_some(changed, done=at >= len(waiting))
            if at >= len(waiting):
                return True
            time.sleep(REST)


def give_back_memory() -> None:
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    where there is none). The objects of an index that gave way to its file are freed,
    but the allocator keeps their pages unless asked."""
    try:
        import ctypes

        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, ImportError):
        return
    trim(0)


def _rest() -> None:
    time.sleep(REST)
