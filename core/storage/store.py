"""The store: memwork's document API over one backend, guarded by one lock.

Every read runs inside :meth:`Store.reading` and every write inside
:meth:`Store.transaction`. Both take the backend's inter-process lock (re-entrant
within a process) and first adopt whatever another process committed, so an agent's
CLI and the open workbench see each other's writes and never lose one.

``Store(location)`` opens the store a location names: a folder path (or
``file:PATH``), ``memory:``, or a ``redis://`` / ``rediss://`` URL. Which backend
serves it is decided by :func:`core.storage.url.parse_location` alone, and the
backend's code is imported only then (a folder store never loads the Redis client).
What a backend must do is :mod:`core.storage.backend`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.errors import StoreError, StoreWriteFailed
from ..base.no_wait import WouldWait, may_wait, never_waiting, take
from . import schema
from .backend import NO_FOLD_NEEDED, Backend, Change, Deferred, Docs, Listener
from .cache import TableCache
from .manifest import table_file

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from .background_fold import BackgroundFold
    from .tinydb_api import StoreDB, StrTable
    from .url import Location


T = TypeVar("T")


def open_backend(location: str | os.PathLike[str] | Location, *, create: bool) -> Backend:
    """The backend a location names (see :mod:`core.storage.url`), not yet opened."""
    from .url import FILE, MEMORY, Location, parse_location

    parsed = location if isinstance(location, Location) else parse_location(location)
    if parsed.scheme == FILE:
        from .folder_backend import FolderBackend

        assert parsed.folder_text is not None  # a file location always names its folder
        return FolderBackend(parsed.folder_text)
    if parsed.scheme == MEMORY:
        from .memory_backend import MemoryBackend

        return MemoryBackend()
    from .redis_backend import RedisBackend

    return RedisBackend(parsed.url)


class Store:
    """The memwork store at ``location``, created when missing (``create=False``: a
    missing store is :class:`~core.base.errors.NoStore` and nothing is created)."""

    def __init__(
        self,
        location: str | os.PathLike[str] | Location,
        *,
        create: bool = True,
        rescue: bool = False,
    ) -> None:
        backend = open_backend(location, create=create)
        # A repair (checkpoint restore) opens a store whose head cannot be read on one
        # rebuilt from what can be (Backend.rescue).
        backend.rescue = rescue
        self._attach(backend, create)

    @classmethod
    def over(cls, backend: Backend, *, create: bool = True) -> Store:
        """A store on a backend made by the caller (a copy's target, say)."""
        self = cls.__new__(cls)
        self._attach(backend, create)
        return self

    @classmethod
    def in_memory(cls) -> Store:
        """A store with the same semantics and nothing on disk (tests, previews)."""
        return cls("memory:")

    def _attach(self, backend: Backend, create: bool) -> None:
        self.backend = backend
        self._mutex = threading.RLock()
        self._depth = 0
        #: The outermost hold is a glance: the lock is not held (see :meth:`glance`).
        self._glancing = False
        self._txn_depth = 0
        self._txn_counter = 0
        #: A fold asked for inside a transaction: it runs once the transaction commits.
        self._fold_wanted = False
        self._target_schema: int | None = None
        self._listeners: list[Listener] = []
        #: Indexes derived from tables, by whoever derives them (see table_stamp).
        self.derived: dict[str, Any] = {}
        #: Opened for one call, after which the process ends (the CLI's): whoever
        #: derives files from it saves them when the call ends, not in the background.
        self.one_call = False
        #: When a fold the log asked for runs, once the commit's lock is let go:
        #: ``"now"`` by the committing thread, ``"background"`` in a thread of its own
        #: (a long-lived process: no writer waits for it), ``"close"`` when the store is
        #: closed (a one-call process, after its answer).
        self.fold_mode = "now"
        self._folder: BackgroundFold | None = None
        self._fold_at_close = False
        #: A fold the background thread prepared, for the next hold of the lock in this
        #: process to commit (see :meth:`_fold_off_the_lock`); set once it did.
        self._prepared: object | None = None
        self._handed_over = threading.Event()
        self._closing = False
        head = backend.open(create)
        self.cache = TableCache(backend, head)
        self.cache.lock_held = lambda: self._depth > 0
        self.cache.before_read = self._before_read
        self._db: StoreDB | None = None  # TinyDB's API, made when a caller asks for a table
        if head.schema_version < schema.SCHEMA_VERSION:
            self._migrate()

    def _migrate(self) -> None:
        with self.transaction():
            version = self.cache.head.schema_version
            if version >= schema.SCHEMA_VERSION:
                return  # another process migrated it meanwhile
            if schema.needs_backup(version):
                #: Where the store was copied before the migration changed it.
                self.backup_path = self.backend.backup(version)
            for step in range(version, schema.SCHEMA_VERSION):
                schema.step(step)(self)
            self._target_schema = schema.SCHEMA_VERSION

    # -- what the rest of memwork sees ------------------------------------------------------
    @property
    def location(self) -> str:
        """Where the store lives, as messages name it (a folder path or a URL)."""
        return self.backend.location

    @property
    def label(self) -> str:
        """A short name for titles (the folder's name; ``host:port/db`` for Redis)."""
        return self.backend.label

    @property
    def scheme(self) -> str:
        """Which backend serves the store: ``file``, ``memory`` or ``redis``."""
        return self.backend.scheme

    @property
    def folder(self) -> Path | None:
        """The local folder the store keeps its files in (None: it has none)."""
        return self.backend.folder

    @property
    def path(self) -> Path:
        """The store's folder (a folder store only)."""
        folder = self.backend.folder
        if folder is None:
            raise StoreError(f"the store at {self.location} is not a folder")
        return folder

    @property
    def read_only(self) -> str | None:
        """Why this process may only read the store (None: it may write)."""
        return self.backend.read_only

    def committed_generation(self) -> int:
        """The commit counter of what is committed now; it moves whenever anyone writes."""
        return self.backend.committed_generation()

    def follow(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """Have ``on_change`` called after other processes' commits; returns a stop.

        None when the backend cannot push changes (a folder): the caller polls
        :meth:`committed_generation` instead.
        """
        return self.backend.follow(on_change)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(change)`` whenever a change becomes visible through this store:
        after each of its own commits, and when a read or write first adopts what other
        processes committed. Returns an unsubscribe.

        The listener runs in the thread that committed or read, with the lock held, so it
        may read the store (consistently) but must not write it; what it raises is
        ignored (a listener cannot undo a commit). See :class:`~core.storage.backend.Change`.
        """
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def _announce(self, change: Change) -> None:
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # noqa: BLE001, S112 - see subscribe(): a listener cannot undo it
                continue

    # -- locking ----------------------------------------------------------------------------
    def _locked(self) -> _Hold:
        """This thread's hold of the store's lock (re-entrant; the inter-process lock is
        taken by the outermost hold)."""
        return _Hold(self)

    def _enter_hold(self, reads: bool = False) -> None:
        waits = take(self._mutex)  # (a call that must not wait is told so: WouldWait)
        try:
            if self._depth == 0:
                self.backend.acquire(wait=waits, meanwhile=self._catch_up if waits else None)
            elif self._glancing and not reads:
                self._take_lock_in_glance()
        except BaseException:
            self._mutex.release()
            raise
        self._depth += 1
        if self._prepared is not None and self._depth == 1 and waits:
            try:
                self._finish_prepared()
            except BaseException:
                self._leave_hold(True)
                raise

    def _enter_glance(self) -> bool:
        """Begin a hold without the lock if this process holds everything committed
        (the outermost hold only); whether it did (else nothing is held)."""
        take(self._mutex)
        if (
            self._depth == 0
            and self._prepared is None
            and not self.cache.in_transaction
            and self.backend.current()
        ):
            self._depth = 1
            self._glancing = True
            return True
        self._mutex.release()
        return False

    def _take_lock_in_glance(self) -> None:
        """A glance needs the lock after all (a table to read from disk, a hold that
        may write): taken now, and the glance goes on as a hold begun at its start,
        provided nothing was committed since; else :class:`GlanceOutdated`, and the
        glance's caller reads again under the lock."""
        self.backend.acquire(wait=may_wait())
        self._glancing = False  # the hold's end lets the lock go, whatever follows
        if not self.backend.current(locked=True):
            raise GlanceOutdated

    def _before_read(self) -> None:
        """Called before a table is read from the backend (inside a hold)."""
        if self._glancing:
            self._take_lock_in_glance()

    def _leave_hold(self, failed: bool) -> None:
        try:
            self._depth -= 1
            if self._depth == 0 and self._glancing:
                self._glancing = False  # no lock to let go, nothing committed
            elif self._depth == 0:
                plan = None
                if self.backend.fold_due and not failed and self.fold_mode == "background":
                    plan = self._plan_fold()  # while this hold still has the lock
                self.backend.release(failed)
                if self.backend.fold_due and not failed:
                    self._fold_later(plan)
        finally:
            self._mutex.release()

    def _fold_later(self, plan: object | None = None) -> None:
        """Run the fold the last commit asked for, as :attr:`fold_mode` says (``plan``:
        the one :meth:`_plan_fold` made in that commit's hold)."""
        self.backend.fold_due = False  # asked again by the next commit if this one fails
        if self.fold_mode == "close":
            self._fold_at_close = True
        elif self.fold_mode == "background":
            if plan == NO_FOLD_NEEDED:
                return
            if self._folder is None:
                from .background_fold import BackgroundFold

                self._folder = BackgroundFold(self._fold_quietly)
            self._folder.wake(plan)
        else:
            self._fold_quietly()

    def _plan_fold(self) -> object | None:
        """In the hold of the commit that asked for a fold, before the lock is let go: its
        plan (:meth:`Backend.fold_begin`), so the thread that prepares it need not wait
        for the lock to begin (None: it begins one itself, or folds under the lock)."""
        if not self.backend.fold_wanted():
            return NO_FOLD_NEEDED  # folded, or being folded, by another process
        try:
            return self.backend.fold_begin()
        except (OSError, StoreError):
            return None
        finally:
            self.backend.fold_unwanted()  # what fold_wanted took and fold_begin did not

    def _finish_prepared(self) -> None:
        """Commit, in this hold of the lock, the fold the background thread prepared: it
        would otherwise wait for the lock holding this process's mutex, and every call in
        the meantime with it (~20-70 ms with eight writers)."""
        plan, self._prepared = self._prepared, None
        try:
            self._refresh()
            if not self.backend.fold_finish(plan):
                self.backend.fold_due = True  # the next commit asks again, under the lock
        except (OSError, StoreError, ValueError):
            pass  # the log keeps every commit; the next one past its limits asks again
        finally:
            self._handed_over.set()

    def settle(self, timeout: float = 30.0) -> None:
        """Wait for a fold this process runs in the background to end, so what is read
        next sees the store as its writers left it (``doctor`` would otherwise find the
        store's lock held, by this very process). A caller holding the store does not
        wait: the fold would be waiting for it."""
        folder = self._folder
        owned = getattr(self._mutex, "_is_owned", None)
        if folder is not None and not (owned is not None and owned()):
            folder.settle(timeout)

    def _fold_quietly(self, plan: object | None = None) -> None:
        """Fold now (``plan``: one begun already); a failure (a full disk) loses
        nothing, since the log holds every commit, and the next commit past the log's
        size or age asks again."""
        try:
            if not self._fold_off_the_lock(plan):
                self.fold_log()
        except (OSError, StoreError):
            pass

    def _fold_off_the_lock(self, plan: object | None = None) -> bool:
        """Fold with the lock held only to plan and to commit: the table files are
        written and fsynced while other writers commit (see
        :mod:`core.storage.fold_outside`). False when the backend cannot, or the plan
        was dropped; then :meth:`fold_log` folds under the lock.

        On the background thread, with ``plan`` made in the commit's own hold, the
        fold is committed here when the lock is free at once. When it is not (other
        writers queued for it), the commit is handed to the next hold this process
        takes (its next call, most often within milliseconds), and taken here only
        when none comes within :data:`HANDOVER_S`: this thread would otherwise wait for
        the lock holding the process's mutex, and every call of the process would wait
        behind it (20-70 ms with eight writers)."""
        handed = plan is not None
        if plan is None:
            if not self.backend.fold_wanted():
                return True  # folded, or being folded, by another process meanwhile
            try:
                with self._mutex:
                    if self._txn_depth > 0:
                        return False
                    with self._locked():
                        self._caught_up()
                        plan = self.backend.fold_begin()
            finally:
                self.backend.fold_unwanted()  # what fold_wanted took and fold_begin did not
        if plan is None:
            return False
        if plan == NO_FOLD_NEEDED:
            return True
        try:
            self.backend.fold_prepare(plan)  # neither the lock nor the mutex held
        except (OSError, StoreError, ValueError):
            return False
        offered = handed and not self._closing
        if offered:
            # The mutex is waited for (a call of this process lasts milliseconds), the
            # lock is not: free (one writer, a quiet moment), the fold is committed now.
            with self._mutex:
                try:
                    with never_waiting(), self._locked():
                        self._caught_up()
                        return self.backend.fold_finish(plan)
                except WouldWait:
                    pass
            self._handed_over.clear()
            self._prepared = plan
            self._handed_over.wait(HANDOVER_S)
        with self._mutex:
            if offered and self._prepared is not plan:
                return True  # a hold committed it (or dropped it, and asked again)
            self._prepared = None
            with self._locked():
                self._caught_up()
                return self.backend.fold_finish(plan)

    def _caught_up(self) -> None:
        """In the outermost hold of the lock, take in what other processes committed (a
        hold inside it has nothing new to take)."""
        if self._depth == 1:
            self._refresh()

    def _refresh(self) -> None:
        found = self.backend.refresh()
        if found is not None:
            change = self.cache.adopt(found, said=bool(self._listeners))
            if change is not None and change.tables:
                self._announce(change)

    def _catch_up(self) -> None:
        """While this process waits for the lock (holding its mutex, with no
        transaction under way): take in the commits other processes made that the
        backend can read without the lock, so the hold that follows has only the
        last few to read (:meth:`Backend.peek`)."""
        try:
            found = self.backend.peek()
        except (OSError, StoreError):
            return  # the read under the lock will say what is wrong
        if found is None:
            return
        before = self.cache.head
        try:
            change = self.cache.adopt(found, said=bool(self._listeners))
        except Exception:  # noqa: BLE001 - the backend has moved on: the cache must too
            # A table that would not replay is read again when next used, from what the
            # backend holds now (a document that will not decode fails that read, under
            # the lock, as it would have without this catch-up).
            self.cache.clear()
            self.cache.head = found.head
            change = Change.of_heads(before, found.head) if self._listeners else None
        if change is not None and change.tables:
            self._announce(change)

    def reading(self) -> _Reading:
        """A consistent view of the store: everything committed before it began (a
        ``with`` block; ``as`` gives the store)."""
        return _Reading(self)

    def read(self, fn: Callable[[], T]) -> T:
        """``fn()`` inside :meth:`glance`, and once more inside :meth:`reading` should the
        glance turn out outdated: for a read that may run twice (most reads, which only
        look). Inside another hold, ``fn`` runs in that one."""
        glance = _Glance(self)
        try:
            with glance:
                return fn()
        except GlanceOutdated:
            if not glance.began:
                raise  # a glance further out began it: that one reads again
        with _Reading(self):
            return fn()

    def glance(self) -> _Glance:
        """:meth:`reading`, without the store's lock when this process holds everything
        committed already (one look at the backend says so): the block answers from
        memory, as of that look, and neither waits for writers nor holds them up.
        Should it need the lock after all (a table to read from disk, a write), the lock
        is taken then, and if anything was committed meanwhile the block is left with
        :class:`GlanceOutdated`: the caller runs it again in :meth:`reading`. For blocks
        that only read and may run twice."""
        return _Glance(self)

    def defer_flushes(self) -> None:
        """From now on the commits this thread makes are not made durable as each one's
        hold ends (one fsync each), but all together by what :meth:`deferred_flush`
        gives: for a process that commits for several callers at once and answers each
        only once they are durable. Other threads' commits meanwhile are made durable
        as always."""
        self.backend.defer_flushes()

    def deferred_flush(self) -> Deferred:
        """Stop deferring: what makes durable every commit deferred since
        :meth:`defer_flushes` (its ``flush()``, once, from any thread: a process may
        commit the next callers' writes while one of its threads waits for the disk;
        :func:`~core.storage.backend.flush_together` shares one fsync between
        several)."""
        return self.backend.deferred()

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Read-modify-write under the lock; all of it lands, or none of it."""
        if not may_wait():  # a commit ends in an fsync: a wait, told at once
            raise WouldWait
        with self._locked():
            outermost = self._txn_depth == 0
            if outermost and self.read_only:
                # Refused before anything runs: a transaction may write files
                # (checkpoint snapshots) before its commit.
                raise StoreWriteFailed(
                    f"the store at {self.location} is read-only for this user "
                    f"({self.read_only}); nothing was written"
                )
            if outermost and self._depth == 1:
                self._refresh()
            if outermost:
                self.backend.begin()
                self._target_schema = None
            self._txn_depth += 1
            self.cache.in_transaction = True
            change: Change | None = None
            try:
                yield self
            except BaseException:
                if outermost:
                    self._fold_wanted = False
                    self._rollback()
                raise
            else:
                if outermost:
                    try:
                        change = self._commit()
                    except BaseException:
                        self._fold_wanted = False
                        self._rollback()
                        raise
                    if self._fold_wanted:
                        self._fold_wanted = False
                        self._fold_committed()
            finally:
                self._txn_depth -= 1
                if self._txn_depth == 0:
                    self.cache.in_transaction = False
            if change is not None and self._listeners:
                self._announce(change)

    def fold_log(self) -> None:
        """Write what the store holds only in its log into its table files now (a folder
        store; nothing to do on the others). Commits do this by themselves past the
        log's size or age; this is for a person or a test that wants the files current.
        Inside a transaction it runs once the transaction has committed (what it folds
        must include that commit)."""
        # The mutex first: another thread's transaction must not be mistaken for ours.
        with self._mutex:
            if self._txn_depth > 0:
                self._fold_wanted = True
                return
            with self._locked():
                self._caught_up()
                self.backend.fold_log()

    def _fold_committed(self) -> None:
        """The fold a transaction asked for, after its commit: the commit is acknowledged
        whatever happens here, and a fold that fails (a full disk) is tried again by the
        next commit past the log's size or age."""
        try:
            self.backend.fold_log()
        except (OSError, StoreError):
            pass

    def _commit(self) -> Change | None:
        commit = self.cache.prepare(
            self._new_txid(), self._target_schema, ends_hold=self._depth == 1
        )
        if commit.empty() and not self.backend.pending():
            self.cache.committed(commit, self.cache.head)
            return None
        head = self.backend.commit(commit)
        self.cache.committed(commit, head)
        if not self._listeners:
            return None  # nobody to tell: no need to list what changed
        return Change.of_commits([commit], head.generation, local=True)

    def _rollback(self) -> None:
        self.cache.rollback()
        self.backend.rollback()

    def _new_txid(self) -> str:
        self._txn_counter += 1
        return f"{os.getpid()}-{self._txn_counter}"

    # -- tables -----------------------------------------------------------------------------
    def table(self, name: str) -> StrTable:
        """The TinyDB table ``name`` (query cache off: other processes change data).

        Inside a transaction the table gets its own copies of the documents, since
        TinyDB's writes edit documents in place; it is then written whole."""
        if self.cache.in_transaction:
            self.cache.private(name)
        db = self._db
        if db is None:
            from .tinydb_api import StoreDB

            db = self._db = StoreDB(storage=lambda: self.cache)
        # TinyDB.table is typed Table; StoreDB.table_class makes every table a StrTable.
        return db.table(name, cache_size=0)  # type: ignore[return-value]

    def table_names(self, prefix: str | None = None) -> list[str]:
        """Tables in the store, optionally those named ``prefix`` or ``prefix.*``."""
        names = self.cache.names()
        if prefix is None:
            return names
        return [n for n in names if n == prefix or n.startswith(prefix + ".")]

    def has_table(self, name: str) -> bool:
        """Whether table ``name`` exists (a dictionary lookup: no listing, no file read)."""
        return self.cache.has(name)

    def table_version(self, name: str) -> int | None:
        """The committed version of table ``name`` (None: no such table); it changes
        whenever the table does."""
        return self.cache.head.tables.get(name)

    def table_stamp(self, name: str) -> tuple[int, int]:
        """A value that changes whenever table ``name``'s documents may have changed in
        this process (a write, a reload, another process's commit taken in): an index
        built from :meth:`docs` is current while the stamp and the dict are the same."""
        return self.cache.stamp(name)

    @property
    def tells_changes(self) -> bool:
        """Whether :meth:`changed_since` may answer (a folder store: from its log)."""
        return self.backend.tells_changes

    def holds_committed(self, name: str, docs: object) -> bool:
        """Whether ``docs`` (from :meth:`docs`) is table ``name`` as last committed, not
        written by the transaction under way: what :meth:`table_version` and
        :meth:`changed_since` describe."""
        return self.cache.is_committed(name, docs)

    def changed_since(self, name: str, version: int) -> dict[str, dict[str, Any] | None] | None:
        """The documents of table ``name`` that commits after its version ``version``
        put or deleted, as the last of them left each (None: deleted), when the backend
        can tell without reading the whole table (a folder store's log still holds
        those commits); None otherwise. Call inside :meth:`reading`."""
        return self.backend.changed_since(name, version)

    def is_loaded(self, name: str) -> bool:
        """Whether table ``name`` is in memory (reading it costs nothing more)."""
        return self.cache.loaded(name)

    def last_read(self, wanted: Callable[[str], bool]) -> dict[str, Docs]:
        """The tables ``wanted`` picks among those this process holds in memory, as it last
        read them, without asking the backend (which may not answer): what a fallback
        starts from. Treat them as read-only."""
        with self._mutex:
            held = dict.items(self.cache.tables)  # never loads: a plain dict's view
            return {name: docs for name, docs in list(held) if wanted(name)}

    def release(self, name: str) -> None:
        """Stop holding table ``name``'s documents in memory (read again when next used;
        kept while a transaction is under way). A pass over many tables that needs each
        once, such as building the recall index, need not keep them all."""
        with self._mutex:
            self.cache.release(name)

    def committed_docs(self, name: str) -> Docs:
        """Table ``name``'s documents as last committed ({}: no such table), read without
        keeping them in memory when they are not held already (call inside
        :meth:`reading` or :meth:`transaction`); treat them as read-only."""
        held = self.cache.tables.get(name) if self.cache.loaded(name) else None
        if held is not None and self.cache.is_committed(name, held):
            return held
        try:
            return self.backend.read_table(name)
        except KeyError:
            return {}

    def docs(self, name: str) -> Docs:
        """The raw documents of a table (id → document); treat them as read-only."""
        try:
            return self.cache.tables[name]
        except KeyError:
            return {}

    def get(self, name: str, doc_id: str) -> dict[str, Any] | None:
        """One document by id, or None."""
        doc = self.docs(name).get(doc_id)
        return dict(doc) if doc is not None else None

    def all(self, name: str) -> list[dict[str, Any]]:
        """Every document of a table, in id order."""
        docs = self.docs(name)
        return [dict(docs[k]) for k in sorted(docs)]

    def put(self, name: str, doc_id: str, doc: dict[str, Any]) -> None:
        """Insert or wholly replace one document."""
        self.put_many(name, {doc_id: doc})

    def put_many(self, name: str, docs: dict[str, dict[str, Any]]) -> None:
        """Insert or wholly replace several documents."""
        if docs:
            self.cache.put_docs(name, docs)

    def create_table(self, name: str) -> None:
        """Make table ``name`` exist, empty if it is new (inside a transaction)."""
        table_file(name)  # the name rule, as for every table
        self.cache.writable(name)

    def delete(self, name: str, doc_ids: Iterable[str]) -> None:
        """Remove documents by id (missing ids are ignored)."""
        ids = list(doc_ids)
        if ids:
            self.cache.delete_docs(name, ids)

    def drop(self, name: str) -> None:
        """Remove a whole table."""
        self.cache.drop(name)
        if self._db is not None:
            self._db.forget(name)

    def insert_document(self, name: str, doc_id: str, doc: dict[str, Any]) -> None:
        """Insert a new document through TinyDB's public API (fails if the id exists)."""
        from .tinydb_api import document

        self.table(name).insert(document(doc, doc_id))

    def table_path(self, name: str) -> Path:
        """The file that holds table ``name`` (a folder store only)."""
        return self.path / table_file(name)

    def close(self) -> None:
        """Release resources (the lock is only held inside reading/transaction), after
        the fold a commit left for later."""
        self._closing = True  # a prepared fold is committed now, not after a wait
        self._handed_over.set()
        if self._folder is not None:
            if self._folder.stop():
                self._fold_at_close = True
            self._folder = None
        if self._fold_at_close:
            self._fold_at_close = False
            self._fold_quietly()
        self.cache.clear()
        self.backend.close()

    def discard_if_new(self) -> bool:
        """Close the store and remove it if this open created it and nothing was written
        since (see :meth:`Backend.discard_created`); True when it was removed."""
        self.close()
        return self.backend.discard_created()


#: How long a fold prepared on the background thread waits for a hold of the lock in
#: its process to commit it, before taking the lock itself (the process is idle).
HANDOVER_S = 0.05


class _Hold:
    """``with store._locked():`` a hold of the store's lock (see :meth:`Store._locked`).

    A class rather than a generator: every search enters three nested reads, and a
    generator's context manager costs a few microseconds more each time."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    def __enter__(self) -> Store:
        self.store._enter_hold()
        return self.store

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.store._leave_hold(kind is not None)


class GlanceOutdated(BaseException):  # noqa: N818 - not an error: a signal to read again
    """A :meth:`Store.glance` needed the lock, and another process had committed since
    it began: its caller reads again under the lock. A BaseException, so that no
    ``except Exception`` on the way out takes it for a failure of its own."""


class _Reading(_Hold):
    """``with store.reading():`` a hold that first catches up with what other
    processes committed (the outermost one only)."""

    __slots__ = ()

    def __enter__(self) -> Store:
        store = self.store
        store._enter_hold(reads=True)
        if store._depth == 1:
            try:
                store._refresh()
            except BaseException:
                store._leave_hold(True)
                raise
        return store


class _Glance(_Reading):
    """``with store.glance():`` see :meth:`Store.glance`."""

    __slots__ = ("began",)

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        #: Whether this hold is a glance of its own (else a read, or one inside a hold).
        self.began = False

    def __enter__(self) -> Store:
        store = self.store
        self.began = store._enter_glance()
        if self.began:
            return store
        return _Reading.__enter__(self)
