"""Keeping a recall index in step with a store, in memory and in the store's cache folder.

A :class:`Recall` holds one :class:`~core.services.recall.engine.RecallIndex` for one
store. Before each query it compares the table versions the store's manifest
names (the store re-reads it under its lock, so other processes' commits are
seen) with the versions the index holds, and re-reads only the tables that
changed: a changed table is diffed unit by unit (fingerprints), so one new
observation costs one record's words. A table the store no longer has leaves
the index; a deleted, forgotten or edited record is out of the index before the
query that follows its commit is answered.

On a folder store the index also lives in ``<store>/cache/recall/index.bin``
(private modes, never through a link, nothing outside the store folder), so a
fresh ``memwork search`` process reads it and catches up with whatever was
committed since instead of reading every table. An index built or found
many tables behind is saved at once; a smaller lag, by a long-lived process
at most every 30 s and when it closes, and by a one-shot process not at all
(the next process catches up with it). A table's version is the generation of
the commit that last wrote it, so a table dropped and made again is never
mistaken for the old one. Nothing in
the cache is essential: an unreadable or foreign file is rebuilt from the
store, a read-only store is searched from memory, and ``MEMWORK_SEARCH_CACHE=0``
turns the file off. A commit that removes text from the store (a record deleted,
forgotten, redacted or rewritten, a table dropped) removes the file at once
(core/storage/folder_backend.py), so no copy of that text outlives it; the next
process rebuilds it. On Redis (and in memory) each long-lived process keeps its
index in memory and follows every commit the same way, by the versions the
commit moved.

This is the one place that learns what changed in a store: when the store can
say which documents a commit touched, :meth:`Recall.refresh` is where to use it.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...storage.store import Store
from . import extract as records
from .engine import RecallIndex, fingerprint
from .extract import Unit
from .index_files import FOLDER as INDEX_FOLDER
from .index_files import INDEX_FILE

if TYPE_CHECKING:
    from ...storage.backend import Change
    from .semantic import Embedder, Vectors

_TABLES_PER_LOCK = 16  # big tables re-read under one lock, so writers never wait long
_SAVE_AFTER_TABLES = 8  # a one-shot process saves an index that was this many tables behind
#: A document, its units and their fingerprints.
_DocUnits = tuple[dict[str, Any], tuple[Unit, ...], tuple[int, ...]]
CACHE_ENV = "MEMWORK_SEARCH_CACHE"


class IndexFile:
    """``<store>/cache/recall/index.bin``, read and written without following links."""

    FOLDER = INDEX_FOLDER
    NAME = INDEX_FILE
    #: What the search cache was before recall (prepared text per table): removed on save.
    OBSOLETE = ("cache", "search")

    def __init__(self, folder: Path) -> None:
        self.store_folder = folder
        self.folder = folder.joinpath(*self.FOLDER)

    @classmethod
    def of(cls, store: Store) -> IndexFile | None:
        """The store's index file, or None (not a folder store, or the cache is off)."""
        if store.folder is None or os.environ.get(CACHE_ENV, "1") == "0":
            return None
        return cls(store.path)

    def _real(self) -> bool:
        return not any(os.path.islink(p) for p in (self.folder.parent, self.folder))

    def load(self) -> RecallIndex | None:
        """The saved index, or None (missing, unreadable, a link, another format)."""
        if not self._real():
            return None
        try:
            fd = os.open(self.folder / self.NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as src:
                data = src.read()
        except OSError:
            return None
        return RecallIndex.from_bytes(data)

    def save(self, index: RecallIndex) -> None:
        """Write the index beside its target and rename it in (errors mean: no cache)."""
        self.save_bytes(self.NAME, index.to_bytes())
        self._remove_obsolete()

    def load_vectors(self, name: str) -> bytes | None:
        """The saved vectors of embedder ``name``, if any."""
        if not self._real():
            return None
        try:
            path = self.folder / f"vectors-{name}.npz"
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as src:
                return src.read()
        except OSError:
            return None

    def save_bytes(self, name: str, data: bytes) -> None:
        """Write one file of the folder beside its target and rename it in."""
        target = self.folder / name
        tmp = target.with_name(f"{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            for folder in (self.folder.parent, self.folder):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o700)
            if not self._real():
                return
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(tmp, flags, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, target)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()

    def _remove_obsolete(self) -> None:
        old = self.store_folder.joinpath(*self.OBSOLETE)
        if os.path.islink(old) or not old.is_dir():
            return
        for entry in old.iterdir():
            if entry.name.endswith(".txt") and not entry.is_symlink():
                with contextlib.suppress(OSError):
                    entry.unlink()
        with contextlib.suppress(OSError):
            old.rmdir()


class Recall:
    """A recall index following one store (see the module docstring).

    An index it built, or found many tables behind, is saved at once. Otherwise
    ``save_after`` is how many seconds a long-lived process lets its saved index
    lag behind its own (0: a one-shot process, which leaves a small lag to the
    next one); :meth:`flush` saves what is pending.
    """

    def __init__(self, *, save_after: float = 0.0) -> None:
        self.index: RecallIndex | None = None
        self.location: str | None = None
        self.save_after = save_after
        self._seen: dict[str, int] = {}  # table → version synced by this process
        self._file: IndexFile | None = None
        self._dirty = False
        self._saved_at = time.monotonic()
        self._vectors: Vectors | None = None
        self.changes = 0  # units added, replaced or removed by this follower so far
        # The storage and manifest the index was last caught up with: the storage replaces
        # its manifest whenever a commit (any process's) changed it, so while both are
        # the same objects there is nothing to compare.
        self._synced: tuple[object, object] | None = None
        # Per table this process has seen change: each document with its units and their
        # fingerprints. Documents are never changed in place, so one that is the same
        # object (this process's own commit kept it), or equal to it (another process
        # rewrote the file), has the same units: a write costs the index the documents
        # it changed, not the table.
        self._docs: dict[str, dict[str, _DocUnits]] = {}
        self._tails: dict[str, Unit | None] = {}  # each remembered session's last note
        # How many tables the last catch-up read (None: no saved index to start from).
        self._lagging: int | None = None
        # What the store announced since the last catch-up (its own commits, and other
        # processes' as a read adopts them), while this follower listens to that very
        # store object: a catch-up then reads the documents those changes name and
        # compares no table versions. None: not listening (another store object).
        self._heard: list[Change] | None = None
        self._listening: weakref.ref[Store] | None = None
        self._stop_listening: Callable[[], None] | None = None

    def refresh(self, store: Store) -> RecallIndex:
        """The index, caught up with everything ``store`` has committed."""
        if self.location != store.location or self.index is None:
            self.location = store.location
            self._file = IndexFile.of(store)
            loaded = self._file.load() if self._file else None
            self.index = loaded or RecallIndex()
            self._lagging = None if loaded is None else 0
            self._seen = {}
            self._dirty = False
            self._vectors = None
            self._synced = None
            self._docs = {}
            self._tails = {}
        index = self.index
        listening = self._listening is not None and self._listening() is store
        if not listening:
            self._listen(store)
        with store.reading():
            cache = store.cache
            synced = (cache, cache.head)
            heard, self._heard = self._heard, []
            if self._synced is not None and all(
                a is b for a, b in zip(self._synced, synced, strict=True)
            ):
                return index
            if listening and heard and self._synced is not None and self._synced[0] is cache:
                # Every change since the last catch-up was announced to this follower,
                # with the documents it put and deleted: only those are read.
                changes = self._apply(store, index, heard)
                self.changes += changes
                self._dirty = True
                self._synced = synced
                self._after_catch_up(0)
                return index
            versions = cache.head.tables
            todo: list[tuple[str, int, str]] = []
            # Only tables whose version this process has not seen yet (a set difference,
            # so a store of ~1,000 tables costs a commit its own few tables).
            for name, version in versions.items() - self._seen.items():
                if not records.indexed(name):
                    self._seen[name] = version
                    continue
                key = _key(version)
                if index.table_keys.get(name) == key:
                    self._seen[name] = version
                    continue
                todo.append((name, version, key))
            for name in self._seen.keys() - versions.keys():
                del self._seen[name]
            todo.sort()  # slots are given in table order: ties rank alike in every process
            changes = 0
            for name in sorted(index.table_keys.keys() - versions.keys()):
                index.drop_table(name)
                self._docs.pop(name, None)
                changes += 1
            if len(todo) <= _TABLES_PER_LOCK:  # a commit or a few: under this one lock
                changes += self._catch_up(store, index, todo)
                todo_left: list[tuple[str, int, str]] = []
            else:
                todo_left = todo
        for start in range(0, len(todo_left), _TABLES_PER_LOCK):
            with store.reading():
                changes += self._catch_up(store, index, todo_left[start : start + _TABLES_PER_LOCK])
        self.changes += changes
        if changes or todo:
            self._dirty = True
        # The index now holds at least what the first manifest named (a table read under a
        # later lock may be newer). Should the storage still hold that very manifest at the
        # next refresh, nothing was committed since, and there is nothing to compare.
        self._synced = synced
        self._after_catch_up(len(todo))
        return index

    def _after_catch_up(self, tables: int) -> None:
        """Save the index if it is due, after a catch-up that read ``tables`` tables."""
        if self._dirty and self._file is not None:
            # An index built here, or found far behind, is saved at once; rewriting the
            # whole file (~45 MB at 100k records) to record a commit or two would cost
            # more than the next process's catching up with them, so a small catch-up
            # waits for ``save_after`` (a long-lived process) or is left to the next one.
            behind = self._lagging is None or tables >= _SAVE_AFTER_TABLES
            due = self.save_after and time.monotonic() - self._saved_at >= self.save_after
            if behind or due:
                self.flush()
        self._lagging = tables

    def _listen(self, store: Store) -> None:
        """Hear what ``store`` announces from now on (and nothing from another store)."""
        if self._stop_listening is not None:
            self._stop_listening()
        self._heard = None  # what was heard before is from another store object
        self._listening = weakref.ref(store)
        this = weakref.ref(self)

        def heard(change: Change) -> None:
            follower = this()
            if follower is not None and follower._heard is not None:
                follower._heard.append(change)

        stop = store.subscribe(heard)
        self._stop_listening = stop
        weakref.finalize(self, stop)  # a follower gone stops listening

    def _apply(self, store: Store, index: RecallIndex, heard: list[Change]) -> int:
        """Bring the index in step with the changes heard (call inside a read of the
        store); how many units changed."""
        named: dict[str, set[str] | None] = {}  # table → the ids changed (None: all)
        for change in heard:
            for name, how in change.tables.items():
                if not records.indexed(name):
                    continue
                ids = named.get(name, set())
                if how.whole or how.dropped or ids is None:
                    named[name] = None
                else:
                    ids.update(how.put, how.deleted)
                    named[name] = ids
        versions = store.cache.head.tables
        changes = 0
        for name in sorted(named):
            version = versions.get(name)
            if version is None:
                if name in index.table_keys:
                    index.drop_table(name)
                    changes += 1
                self._seen.pop(name, None)
                self._docs.pop(name, None)
                continue
            ids = named[name]
            changes += self._sync(index, name, store.docs(name), _key(version), ids)
            self._seen[name] = version
        return changes

    def _catch_up(self, store: Store, index: RecallIndex, todo: list[tuple[str, int, str]]) -> int:
        """Read the tables ``todo`` names into the index (call inside a read of the store);
        how many units changed."""
        changes = 0
        current = store.cache.head.tables
        for name, version, key in todo:
            now_at = current.get(name)
            if now_at is None:
                index.drop_table(name)
                self._seen.pop(name, None)
                self._docs.pop(name, None)
                changes += 1
                continue
            if now_at != version:  # committed again since the first look
                key = _key(now_at)
            changes += self._sync(index, name, store.docs(name), key)
            self._seen[name] = now_at
        return changes

    def _sync(
        self,
        index: RecallIndex,
        name: str,
        docs: Mapping[str, dict[str, Any]],
        key: str,
        ids: set[str] | None = None,
    ) -> int:
        """Bring one table of the index in step with ``docs``; how many units changed.

        The first reading of a table in this process reads every document (and, for a
        table the index already held, remembers them with their units); after that only
        the documents that changed are read again, and their units replace the old
        ones (a session's new notes are linked after its last one). ``ids``, when the
        store said which documents changed, spares looking at the others."""
        read = records.reader(name)
        before = self._docs.get(name)
        if before is None:
            now = {k: _read_doc(read, doc) for k, doc in docs.items()}
            pairs = [p for _, found, fps in now.values() for p in zip(found, fps, strict=True)]
            if records.ordered(name):
                pairs.sort(key=lambda pair: records.session_order(pair[0]))
            if name in index.table_keys:  # a table that changes while this process runs
                self._docs[name] = now
                self._tails[name] = pairs[-1][0] if pairs else None
            found = [u for u, _ in pairs]
            return index.sync_table(name, found, key, [fp for _, fp in pairs])
        fresh: list[tuple[Unit, int]] = []
        gone: list[str] = []
        # The documents that are not the very objects seen last time, found at C speed
        # (a write leaves the others as they were); ``before`` is brought up to date in
        # place, so a write costs the documents it changed, not a pass over the table.
        if ids is None:
            changed = [
                k for k, doc in docs.items() if (e := before.get(k)) is None or e[0] is not doc
            ]
        else:
            changed = [k for k in ids if k in docs]
            for k in ids.difference(changed):
                left = before.pop(k, None)
                if left is not None:
                    gone.extend(u.ref for u in left[1])
        for k in changed:
            doc = docs[k]
            entry = before.get(k)
            if entry is not None and entry[0] is doc:
                continue
            if entry is not None and entry[0] == doc:
                before[k] = (doc, entry[1], entry[2])  # rewritten by another process, equal
                continue
            new = before[k] = _read_doc(read, doc)
            fresh.extend(zip(new[1], new[2], strict=True))
            if entry is not None:
                kept = {u.ref for u in new[1]}
                gone.extend(u.ref for u in entry[1] if u.ref not in kept)
        if ids is None and len(before) != len(docs):  # all of ``docs`` is in ``before``
            for k in before.keys() - docs.keys():
                gone.extend(u.ref for u in before.pop(k)[1])
        if not records.ordered(name):
            return index.sync_changes(name, gone, fresh, key)
        fresh.sort(key=lambda pair: records.session_order(pair[0]))
        tail = self._tails.get(name)
        slots = index.slots_of(name)
        appended = not gone and all(u.ref not in slots for u, _ in fresh)
        if appended and fresh and tail is not None:
            appended = records.session_order(tail) < records.session_order(fresh[0][0])
        if appended:
            if fresh:
                self._tails[name] = fresh[-1][0]
            return index.append_in_order(name, fresh, tail.ref if tail else None, key)
        # Notes left or moved in the session: its whole order is linked again.
        del self._docs[name]
        return self._sync(index, name, docs, key)

    def touched(self) -> None:
        """Something worth saving changed outside a refresh (new vectors)."""
        self._dirty = True

    def vectors(self, model: Embedder) -> Vectors:
        """The embedder's vectors for this index (read from the cache folder when saved)."""
        from .semantic import Vectors

        assert self.index is not None, "refresh() first"
        kept = self._vectors
        if kept is None or kept.model.name != model.name or kept.index is not self.index:
            kept = self._vectors = Vectors(model, self.index)
            data = self._file.load_vectors(model.name) if self._file else None
            if data:
                kept.load(data)
        return kept

    def flush(self) -> None:
        """Save the index (and vectors) to the store's cache folder if they changed."""
        if self._dirty and self._file is not None and self.index is not None:
            self._file.save(self.index)
            if self._vectors is not None:
                self._file.save_bytes(
                    f"vectors-{self._vectors.model.name}.npz", self._vectors.to_bytes()
                )
                self._vectors.computed = 0
            self._saved_at = time.monotonic()
        self._dirty = False


def _read_doc(read: Callable[[dict[str, Any]], Iterable[Unit]], doc: dict[str, Any]) -> _DocUnits:
    found = tuple(read(doc))
    return doc, found, tuple(fingerprint(u) for u in found)


def _key(version: int) -> str:
    """The version of a table the index records: the generation of the commit that last
    wrote it (a table dropped and made again comes back at a new one)."""
    return str(version)
