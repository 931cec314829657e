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
committed since instead of reading every table. No query ever saves it: a
catch-up only marks the index as changed. A long-lived process saves it in a
background thread (:mod:`core.services.recall.saver`) at once when it was built
or found many tables behind, else at most every ``save_after`` seconds, and
synchronously when it closes; a one-shot process (the CLI) saves an index it
built or found many tables behind after its answer is printed (in a child it does
not wait for: :mod:`core.services.recall.save_apart`), and leaves a
smaller lag to the next process, which catches up from the store. A process
that dies before its save loses nothing: the next one finds the file behind and
catches up. A save lands only if no commit removed the folder's files while it
was being written (:class:`Reservation`). A table's version is the generation of
the commit that last wrote it, so a table dropped and made again is never
mistaken for the old one. Nothing in
the cache is essential: an unreadable or foreign file is rebuilt from the
store, a read-only store is searched from memory, and ``MEMWORK_SEARCH_CACHE=0``
turns the file off. A commit that removes text from the store (a record deleted,
forgotten, redacted or rewritten, a table dropped) removes the file at once
(core/storage/folder_backend.py), so no copy of that text outlives it; the next
process rebuilds it. A process reading the file in place lets go of a removed file's
mapping once it has taken such a record out (:meth:`Recall._let_go_of_removed_file`),
so the mapping keeps no removed file's blocks either. On Redis (and in memory) each
long-lived process keeps its index in memory and follows every commit the same way,
by the versions the commit moved.

This is the one place that learns what changed in a store: when the store can
say which documents a commit touched, :meth:`Recall.refresh` is where to use it.
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import time
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ...base.no_wait import WouldWait, may_wait
from ...base.numbers import is_whole_number
from ...storage.store import Store
from . import extract as records
from . import saved_file, snapshot
from .engine import SMALL, RecallIndex, fingerprint, one_call_small
from .extract import Unit
from .index_files import FOLDER as INDEX_FOLDER
from .index_files import INDEX_FILE
from .mapped import FileReader

if TYPE_CHECKING:
    from ...storage.backend import Change
    from .semantic import Embedder, Vectors

    #: Encodes the vectors as they were when it was made.
    VectorBytes = Callable[[], bytes]

#: Most new titles a catch-up checks itself (~11 µs each); more are left to the saver.
SEAL_AT_ONCE = 256
_TABLES_PER_LOCK = 16  # big tables re-read under one lock, so writers never wait long
_SAVE_AFTER_TABLES = 8  # an index this many tables behind is saved soon (else: lazily)
_RETRY = 1.0  # seconds before an urgent save that did not land is tried again
_VECTORS_WORTH_SAVING = 256  # new embedder vectors that make a save urgent
_STALE_TMP = 3600.0  # seconds after which a half-written file of a dead process is removed
#: A document, its units and their fingerprints.
_DocUnits = tuple[dict[str, Any], tuple[Unit, ...], tuple[int, ...]]
CACHE_ENV = "MEMWORK_SEARCH_CACHE"
#: What reading a damaged index file raises once in use: its head, trailer and section
#: bounds are checked when it is opened, the bytes of a record or a word when a query
#: reads them (see :meth:`Recall.drop_damaged_file`).
SAVED_FILE_DAMAGE = (ValueError, TypeError, IndexError, KeyError, OverflowError, EOFError)


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

    def real(self) -> bool:
        """Whether the index folder and its parent are folders, not links to elsewhere."""
        return not any(os.path.islink(p) for p in (self.folder.parent, self.folder))

    def make_folders(self) -> bool:
        """Make the index folder and its parent where missing; False when either is a
        link (nothing is made through one). OSError: the store's folder refuses."""
        for folder in (self.folder.parent, self.folder):
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700)
            if os.path.islink(folder):
                return False
        return True

    def exists(self) -> bool:
        """Whether the saved index file is there to be read (not through a link)."""
        return self.real() and (self.folder / self.NAME).is_file()

    def load(self, one_call: bool = False) -> RecallIndex | None:
        """The saved index, or None (missing, unreadable, a link, another format).

        ``one_call``: the process answers one call (the CLI), so rows and offsets are
        read by ``pread`` rather than through the mapping (see
        :class:`~core.services.recall.mapped.FileReader`)."""
        fd = self.open()
        if fd is None:
            return None
        try:
            return self.load_from(fd, one_call)
        finally:
            os.close(fd)

    def open(self) -> int | None:
        """A descriptor of the saved index file as it is now (None: missing, a link): it
        reads that file even once a commit has removed it (:meth:`load_from`)."""
        if not self.real():
            return None
        try:
            return os.open(self.folder / self.NAME, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None

    def load_from(self, fd: int, one_call: bool = False) -> RecallIndex | None:
        """The index saved in the file ``fd`` reads (:meth:`open`; the caller closes
        it), or None (unreadable, another format); ``one_call`` as for :meth:`load`."""
        reader = None
        try:
            # Mapped, not read: a query reads the words and rows it needs (the file
            # is replaced by a rename, never changed in place, so the map holds).
            data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            found = os.fstat(fd)
            if one_call:
                reader = FileReader(os.dup(fd), found.st_size)
        except (OSError, ValueError):  # ValueError: an empty file
            return None
        index = saved_file.read(data, reader)
        if index is None:
            if reader is not None:
                reader.close()
            with contextlib.suppress(BufferError):  # a view of it may still be held
                data.close()
        else:
            index.source = (found.st_dev, found.st_ino)
        return index

    def holds(self, source: tuple[int, int] | None) -> bool:
        """Whether the index file is still the file ``source`` names."""
        try:
            found = os.lstat(self.folder / self.NAME)
        except OSError:
            return False
        return source == (found.st_dev, found.st_ino)

    def load_vectors(self, name: str) -> bytes | None:
        """The saved vectors of embedder ``name``, if any."""
        if not self.real():
            return None
        try:
            path = self.folder / vectors_file(name)
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as src:
                return src.read()
        except OSError:
            return None

    def remove(self) -> None:
        """Remove the index file (damaged: it is rebuilt from the store)."""
        if self.real():
            with contextlib.suppress(OSError):
                (self.folder / self.NAME).unlink()

    def reserve(self, names: Iterable[str]) -> Reservation | None:
        """Start writing the files ``names`` (call inside a read of the store, just after
        catching the index up): each gets a fresh private file beside its target. A
        commit that removes text removes every file of the folder, these too, so one
        still there when :meth:`Reservation.land` looks holds no text the store lost.
        None when the folder cannot be written (or is a link)."""
        reservation = Reservation(self)
        try:
            if not self.make_folders():
                return None
            self._remove_stale()
            for name in names:
                reservation.open(name)
        except OSError:
            reservation.discard()
            return None
        return reservation

    def _remove_stale(self) -> None:
        """Remove what a process that died while saving left behind."""
        cutoff = time.time() - _STALE_TMP
        for entry in os.scandir(self.folder):
            if entry.name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)

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


class Reservation:
    """Files of the index folder being written beside their targets (see
    :meth:`IndexFile.reserve`); :meth:`land` renames them in, or none of them."""

    def __init__(self, file: IndexFile) -> None:
        self.file = file
        self._open: dict[str, tuple[Path, BinaryIO]] = {}
        #: The file :meth:`land` was asked to keep, mapped: what landed, whatever
        #: another process renames in after it; and its (device, inode).
        self.kept: mmap.mmap | None = None
        self.kept_id: tuple[int, int] | None = None

    def open(self, name: str) -> None:
        """Create the private file that will become ``name``."""
        tmp = self.file.folder / f"{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        # Readable too: the saver may map what it wrote (:meth:`land`'s ``keep``).
        flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o600)
        self._open[name] = (tmp, os.fdopen(fd, "wb"))

    def write(self, name: str, pieces: Iterable[bytes], pause: Callable[[], None]) -> None:
        """Write ``pieces`` into the file that will become ``name``, calling ``pause``
        between them (OSError: the save fails, :meth:`land` refuses it)."""
        out = self._open[name][1]
        for piece in pieces:
            out.write(piece)
            pause()
        out.flush()

    def land(self, store: Store, keep: str | None = None) -> bool:
        """Rename every file in under the store's lock if none was removed meanwhile (a
        commit that removed text did, and the store would then hold less than they do);
        True when they landed. ``keep`` names a file to map once landed (:attr:`kept`)."""
        try:
            with store.reading():
                for tmp, out in self._open.values():
                    if not _same_file(tmp, out):
                        return False
                for name, (tmp, _) in self._open.items():
                    os.replace(tmp, self.file.folder / name)
                if keep is not None and keep in self._open:
                    with contextlib.suppress(OSError, ValueError):
                        fd = self._open[keep][1].fileno()
                        self.kept = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
                        found = os.fstat(fd)
                        self.kept_id = (found.st_dev, found.st_ino)
                for _, out in self._open.values():
                    with contextlib.suppress(OSError):
                        out.close()
                self._open.clear()
        except OSError:
            return False
        finally:
            self.discard()
        self.file._remove_obsolete()
        return True

    def discard(self) -> None:
        """Close the files and remove those that did not land."""
        for tmp, out in self._open.values():
            with contextlib.suppress(OSError):
                if _same_file(tmp, out):
                    tmp.unlink()
            with contextlib.suppress(OSError):
                out.close()
        self._open.clear()


def _same_file(path: Path, out: BinaryIO) -> bool:
    """Whether ``path`` is still the file ``out`` writes (not removed, not replaced)."""
    try:
        now, mine = os.lstat(path), os.fstat(out.fileno())
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)


class Recall:
    """A recall index following one store (see the module docstring).

    A catch-up never saves: it marks the index changed and calls :attr:`wake` (a
    long-lived process's background saver). :meth:`save_due` says when a save is due:
    at once for an index built here or found many tables behind, else ``save_after``
    seconds after the last save (0: never, a one-shot process leaves a small lag to
    the next one). :meth:`settle` saves what is due, :meth:`flush` whatever changed.
    """

    def __init__(
        self,
        *,
        save_after: float = 0.0,
        only: Callable[[str], bool] | None = None,
        one_call: bool = False,
    ) -> None:
        self.index: RecallIndex | None = None
        #: Up to how many postings a query is scored without numpy while numpy is not
        #: loaded: more in a process that answers one call (its import would serve one
        #: query only).
        self.small = one_call_small() if one_call else SMALL
        self.one_call = one_call
        #: The tables this follower indexes, of those recall reads (None: all of them):
        #: a part of a build made in parallel (:mod:`core.services.recall.build_apart`).
        self.only = only
        self.location: str | None = None
        self.save_after = save_after
        #: Called (by the thread that caught up) when the index changed: cheap, no I/O.
        self.wake: Callable[[], None] | None = None
        self._seen: dict[str, int] = {}  # table → version synced by this process
        self._file: IndexFile | None = None
        self._dirty = False
        self._urgent = False  # built here or found far behind: worth saving soon
        self._was_urgent = False  # what the save under way was
        #: Titles a long-lived process holds unchecked (a build, a catch-up far behind,
        #: a file read with unchecked seals or another key's): its saver checks them in
        #: the background (and writes the file again) even if nothing else changed.
        self.seals_owed = False
        self._retry_at = 0.0  # an urgent save that did not land is tried again from then
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
        if self.index is not None and self.index.file_shrunk():
            # The saved file was cut where it lies (a hand, a tool writing in place): its
            # mapping must not be read again. Built from the store, as a damaged file is.
            self.drop_damaged_file()
        if self.location != store.location or self.index is None:
            if not may_wait():  # a whole index to read or build
                raise WouldWait
            self._start(store, None)
        index = self.index
        assert index is not None
        found = self._refreshed(store, index)
        self._check_fresh(index)  # a catch-up that failed leaves them to the next one
        return found

    def _check_fresh(self, index: RecallIndex) -> None:
        """Check the titles of the units the last catch-up added: a few at once (what a
        write adds), many (a build, a catch-up far behind) left to a long-lived
        process's saver, outside every query, or to the save of a one-call process."""
        if not index.fresh:  # (most searches: nothing was added)
            return
        fresh, index.fresh = index.fresh, []
        if len(fresh) <= SEAL_AT_ONCE:
            index.own_seals()
            for slot in fresh:
                index.seal(slot)
        elif not self.one_call:
            self.seals_owed = True
            if self.wake is not None:
                self.wake()

    def _refreshed(self, store: Store, index: RecallIndex) -> RecallIndex:
        try:
            return self._caught_up(store, index)
        except BaseException:
            # Stopped part way (a glance that must read again under the lock, a wait
            # refused, an interrupt): the next catch-up compares every table's version
            # with what the index holds, rather than applying only what it hears next,
            # which would leave out whatever this one was applying.
            self._synced = None
            raise

    def _caught_up(self, store: Store, index: RecallIndex) -> RecallIndex:
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
            only = self.only
            for name, version in versions.items() - self._seen.items():
                if not records.indexed(name) or (only is not None and not only(name)):
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
            gone = sorted(index.table_keys.keys() - versions.keys())
            if not gone and len(todo) <= _TABLES_PER_LOCK:  # a commit or a few: this lock
                changes += self._catch_up(store, index, todo)
                todo_left: list[tuple[str, int, str]] = []
            else:
                todo_left = todo
        if gone:
            # Outside the lock (the index's own work, as a build's is): a restore to an
            # older checkpoint takes hundreds of tables out at once. Before what is read
            # next, so that slots are given in the same order as before.
            self._drop(index, gone)
            changes += len(gone)
        for start in range(0, len(todo_left), _TABLES_PER_LOCK):
            # Read under the lock, indexed after it: a build's work never holds writers
            # up, and two parts of one build run side by side (build_apart.py).
            with store.reading():
                read = self._read_tables(store, todo_left[start : start + _TABLES_PER_LOCK])
            changes += self._index_tables(index, read)
        self.changes += changes
        if changes or todo:
            self._dirty = True
        # The index now holds at least what the first manifest named (a table read under a
        # later lock may be newer). Should the storage still hold that very manifest at the
        # next refresh, nothing was committed since, and there is nothing to compare.
        self._synced = synced
        self._after_catch_up(len(todo))
        return index

    def _start(self, store: Store, built: RecallIndex | None) -> None:
        """Begin following ``store`` from ``built``, else its saved index, else nothing."""
        self.location = store.location
        self._file = IndexFile.of(store)
        loaded = built or (self._file.load(self.one_call) if self._file else None)
        self.index = loaded or RecallIndex()
        self._lagging = None if loaded is None else 0
        self._seen = {}
        self._dirty = self._urgent = False
        # Another process built the index or saved it unchecked (a one-call process), or
        # another version of memwork sealed it: a long-lived one checks the titles in
        # the background, once.
        # (Listing them forgets another key's seals first.)
        self.seals_owed = loaded is not None and not self.one_call and bool(loaded.unsealed())
        self._vectors = None
        self._synced = None
        self._docs = {}
        self._tails = {}

    def has_saved_index(self, store: Store) -> bool:
        """Whether ``store`` has an index file this follower would start from."""
        file = IndexFile.of(store)
        return file is not None and file.exists()

    def file_removed(self) -> None:
        """A commit this process made removed the saved file (it took text out of the
        store): a long-lived process saves again at once, caught up, rather than leave
        other processes to build the index until its next save."""
        if self.wake is None or self._file is None or self.index is None:
            return
        self._dirty = self._urgent = True
        self.wake()

    def start_from(self, store: Store, built: RecallIndex) -> None:
        """Begin following ``store`` from ``built``, an index another process built
        from it (:mod:`core.services.recall.build_apart`); the next :meth:`refresh`
        catches up with what was committed since. Where the store keeps an index file,
        it is saved soon: none holds this index yet."""
        self._start(store, built)
        if self._file is not None:
            self._dirty = self._urgent = True

    def _after_catch_up(self, tables: int) -> None:
        """Note what a catch-up that read ``tables`` tables means for the saved file
        (it never saves here: that would be inside a query)."""
        index = self.index
        if index is not None and index.lost_saved_text:
            index.lost_saved_text = False
            self._let_go_of_removed_file(index)
        if self._dirty and self._file is not None:
            # An index built here, or found far behind, is worth saving soon; rewriting
            # the whole file (~45 MB at 100k records) to record a commit or two would
            # cost more than the next process's catching up with them, so a small
            # catch-up waits for ``save_after`` (a long-lived process) or is left to the
            # next process.
            if self._lagging is None or tables >= _SAVE_AFTER_TABLES:
                self._urgent = True
            if self.wake is not None:
                self.wake()
        elif self.seals_owed and self.wake is not None:
            self.wake()
        self._lagging = tables

    def _let_go_of_removed_file(self, index: RecallIndex) -> None:
        """A record read from the mapped file was taken out. If the file was removed
        (the commit took text out of the store) or replaced, the mapping is the last copy
        of that text on disk: a long-lived process reads what it still needs into memory
        and lets the mapping go (its next save maps a new file). A one-call process
        ends soon, and lets go then."""
        if self.wake is None or self._file is None or index.source is None:
            return
        if self._file.holds(index.source):
            return  # still the store's file: it holds the text as long as it is there
        saved_file.unmap(index)
        self._urgent = True

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
        gone = sorted(name for name in named if name not in versions)
        changes = sum(1 for name in gone if name in index.table_keys)
        self._drop(index, gone)
        for name in sorted(named):
            version = versions.get(name)
            if version is None:
                continue
            ids = named[name]
            changes += self._sync(index, name, store.docs(name), _key(version), ids)
            self._seen[name] = version
        return changes

    def _changed(self, store: Store, index: RecallIndex, name: str) -> _Changed | None:
        """What changed in table ``name`` since the version the index holds, when the
        store can tell from its log and the table's units are named by document id
        (None: read the whole table). A note rewrites its session's document, and the
        first catch-up of a process (every CLI call after a write) decoded the whole
        sessions table to find which one changed."""
        if name in self._docs or not records.by_id(name):
            return None  # kept documents tell already; or units not by document id
        held = index.table_keys.get(name)
        if held is None or not is_whole_number(held):
            return None
        found = store.changed_since(name, int(held))
        return None if found is None else _Changed(found)

    def _read_tables(
        self, store: Store, todo: list[tuple[str, int, str]]
    ) -> list[tuple[str, Mapping[str, dict[str, Any]] | None, str, int]]:
        """The documents of the tables ``todo`` names, each with the version read (call
        inside a read of the store; None: the table is gone). Documents are never
        changed in place, so they stay as read once the lock is let go."""
        read: list[tuple[str, Mapping[str, dict[str, Any]] | None, str, int]] = []
        current = store.cache.head.tables
        index = self.index
        for name, version, key in todo:
            now_at = current.get(name)
            if now_at is None:
                read.append((name, None, key, version))
                continue
            if now_at != version:  # committed again since the first look
                key = _key(now_at)
            held = store.is_loaded(name)
            changed = None if held or index is None else self._changed(store, index, name)
            if changed is not None:
                read.append((name, changed, key, now_at))
                continue
            read.append((name, store.docs(name), key, now_at))
            if not held:
                # Read for the index alone (a build reads every table): the index holds
                # what it needs, so the store's cache does not keep the documents.
                store.release(name)
        return read

    def _index_tables(
        self,
        index: RecallIndex,
        read: list[tuple[str, Mapping[str, dict[str, Any]] | None, str, int]],
    ) -> int:
        """Bring the index in step with tables :meth:`_read_tables` read; how many
        units changed."""
        gone = [name for name, docs, _, _ in read if docs is None]  # dropped since looked
        self._drop(index, gone)
        changes = len(gone)
        for name, docs, key, version in read:
            if docs is None:
                continue
            if isinstance(docs, _Changed):
                changes += self._sync_changed(index, name, docs, key)
            else:
                changes += self._sync(index, name, docs, key)
            self._seen[name] = version
        return changes

    def _sync_changed(self, index: RecallIndex, name: str, docs: _Changed, key: str) -> int:
        """Bring one table of the index in step with the documents that changed in it
        (:meth:`_changed`); how many units changed."""
        read = records.reader(name)
        fresh: list[tuple[Unit, int]] = []
        gone: list[str] = []
        for doc_id, doc in docs.items():
            found = None if doc is None else _read_doc(read, doc)
            if found is None or not found[1]:
                gone.append(doc_id)  # deleted, or a record in no answer now
            else:
                fresh.extend(zip(found[1], found[2], strict=True))
        return index.sync_changes(name, gone, fresh, key)

    def _drop(self, index: RecallIndex, tables: list[str]) -> None:
        """Take the tables the store no longer holds out of the index, all together
        (each word's postings walked once), and forget what was kept of them."""
        index.drop_tables(tables)
        for name in tables:
            self._seen.pop(name, None)
            self._docs.pop(name, None)

    def _catch_up(self, store: Store, index: RecallIndex, todo: list[tuple[str, int, str]]) -> int:
        """Read the tables ``todo`` names into the index (call inside a read of the store);
        how many units changed."""
        return self._index_tables(index, self._read_tables(store, todo))

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
            # Kept for a table that changes while this process runs: its next change
            # then costs the documents it changed. A one-call process has no next one.
            if name in index.table_keys and not self.one_call:
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
        """Something worth saving changed outside a refresh (new vectors). Many new
        vectors are saved before the process ends, even a one-call process's: computed
        again by every CLI call, they would cost each ~35 µs a record."""
        self._dirty = True
        if self._vectors is not None and self._vectors.computed >= _VECTORS_WORTH_SAVING:
            self._urgent = True
        if self.wake is not None and self._file is not None:
            self.wake()

    # ------------------------------------------------------------------ saving

    def save_due(self) -> float | None:
        """When (``time.monotonic()``) a save of the index is due; None: nothing to save,
        or nothing worth saving before the process ends."""
        if self.index is None:
            return None
        if self._file is None:
            # Nothing is saved (the cache off, a Redis store), but what a build left
            # unchecked is checked all the same, in the background.
            return 0.0 if self.seals_owed else None
        if not (self._dirty or self.seals_owed):
            return None
        if self._urgent:
            return self._retry_at  # now, unless the last try just failed
        if self.save_after:
            return self._saved_at + self.save_after
        return None

    def reserve(self, store: Store) -> Reservation | None:
        """Catch up with ``store`` and open the files a save writes (None: nothing to
        save, or the folder cannot be written). Call under the follower's lock; then
        :meth:`freeze`, write, land, and report with :meth:`saved`."""
        if self.index is None:
            return None
        with store.reading():
            self.refresh(store)
            if not self._dirty or self._file is None:
                return None
            names = [self._file.NAME]
            if self._vectors is not None:
                names.append(self._vectors_name())
            reservation = self._file.reserve(names)
        if reservation is None:  # an unwritable folder: the index stays in memory
            self._dirty = self._urgent = False
            self._saved_at = time.monotonic()
        return reservation

    def sealed_some(self, changed: int, done: bool) -> None:
        """A saver checked titles (call under the follower's lock): ``changed`` seals
        were made (the index changed: the save writes them), ``done`` when none is
        left unchecked."""
        if changed:
            self._dirty = True
        if done:
            self.seals_owed = False

    def freeze(self) -> tuple[str, VectorBytes] | None:
        """Mark the index as saved as it is now (a later change marks it changed again)
        and return its vectors' file name and encoder, if any. Call under the follower's
        lock, at the moment the index (or a copy of it) is taken for the save."""
        self._was_urgent = self._urgent
        self._dirty = self._urgent = False
        if self._vectors is None:
            return None
        return self._vectors_name(), self._vectors.snapshot()

    def saved(self, landed: bool) -> None:
        """What became of a save (call under the follower's lock): one that did not land
        (stopped, or a commit removed its files meanwhile) is due again as it was, an
        urgent one a second later."""
        self._saved_at = time.monotonic()
        if landed:
            self._retry_at = 0.0
            if self._vectors is not None:
                self._vectors.computed = 0
        else:
            self._dirty = True
            if self._was_urgent:
                self._urgent = True
                self._retry_at = self._saved_at + _RETRY
        self._was_urgent = False

    def drop_damaged_file(self) -> bool:
        """The index read from the store's cache file failed in use (damage the file's
        own checks could not see): remove the file and let the next catch-up build the
        index from the store. False when the index was not read from a file."""
        index = self.index
        if index is None or not index.from_file or self._file is None:
            return False
        self._file.remove()
        self.index = None
        self.location = None  # the next refresh starts over, as in a fresh process
        return True

    def adopt(
        self, saved: RecallIndex, data: mmap.mmap, source: tuple[int, int] | None = None
    ) -> bool:
        """Read the index back from the file just written from ``saved`` (a copy taken
        for a save), if the index has not changed since: its records in memory give way
        to the mapped file, which a query reads in place (an index built here holds
        every text and posting as Python objects, about twice the memory). Call under
        the follower's lock; True when the file took the index's place."""
        index = self.index
        if index is None or self._vectors is not None or not _unchanged(index, saved):
            return False  # a later save will (vectors are slot by slot: left as they are)
        loaded = saved_file.read(data)
        if loaded is None or loaded.table_keys != index.table_keys:
            return False
        loaded.source = source
        self.index = loaded
        return True

    def flush(self, store: Store) -> None:
        """Save the index (and vectors) to the store's cache folder now if they changed
        (a process closing). Call under the follower's lock."""
        try:
            self._flush(store)
        except SAVED_FILE_DAMAGE:
            # The file the index reads in place was damaged where its own checks could
            # not see: nothing is saved from it; it goes, and the next process builds anew.
            self.drop_damaged_file()

    def _flush(self, store: Store) -> None:
        if self._dirty and self.index is not None and self._file is not None:
            # What a build here left unchecked goes out checked (the next process
            # reads the file): ~1 s at 100k records, once.
            snapshot.seal_some(self.index, self.index.unsealed(), 0, math.inf)
        reservation = self.reserve(store)
        if reservation is None:
            self._dirty = self._urgent = False
            return
        assert self.index is not None
        vectors = self.freeze()
        landed = False
        try:
            reservation.write(IndexFile.NAME, saved_file.pieces(self.index), _no_pause)
            if vectors is not None:
                reservation.write(vectors[0], [vectors[1]()], _no_pause)
            landed = reservation.land(store)
        except OSError:
            reservation.discard()
        except BaseException:
            reservation.discard()
            raise
        self.saved(landed)

    @property
    def index_file(self) -> IndexFile | None:
        """The store's index file this follower saves (None: not a folder store, or the
        cache is off)."""
        return self._file

    def owes_save(self) -> bool:
        """Whether a process ending now owes the next one a save (an index built here
        or found far behind, or one past ``save_after``)."""
        due = self.save_due()
        if not self._dirty or self._file is None:
            return False  # seals alone are left to a long-lived process's saver
        return due is not None and (self._urgent or due <= time.monotonic())

    def settle(self, store: Store) -> None:
        """What a process that ends now owes the next one: the save, if due (see
        :meth:`owes_save`). Call under the follower's lock."""
        if self.owes_save():
            self.flush(store)

    def _vectors_name(self) -> str:
        assert self._vectors is not None
        return vectors_file(self._vectors.model.name)

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


def vectors_file(model: str) -> str:
    """The file of the index folder that holds embedder ``model``'s vectors."""
    return f"vectors-{model}.npz"


def _unchanged(index: RecallIndex, saved: RecallIndex) -> bool:
    """Whether ``index`` holds what ``saved``, a copy of it, held (every change to the
    records counts a generation; a table's version is in ``table_keys``)."""
    return (
        index.generation == saved.generation
        and index.table_keys == saved.table_keys
        and (index.live, index.total_len, index.free) == (saved.live, saved.total_len, saved.free)
        and len(index.kinds) == len(saved.kinds)
    )


def _no_pause() -> None:
    pass


def _read_doc(read: Callable[[dict[str, Any]], Iterable[Unit]], doc: dict[str, Any]) -> _DocUnits:
    found = tuple(read(doc))
    return doc, found, tuple(fingerprint(u) for u in found)


class _Changed(dict[str, Any]):
    """Documents of one table that changed since the index's version (None: deleted),
    not the whole table (:meth:`Recall._changed`)."""


def _key(version: int) -> str:
    """The version of a table the index records: the generation of the commit that last
    wrote it (a table dropped and made again comes back at a new one)."""
    return str(version)
