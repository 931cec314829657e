"""The backend contract: what a :class:`~core.storage.store.Store` needs from the place
its tables live.

A store is the document API (``reading``, ``transaction``, ``docs``, ``put``, TinyDB
tables) over one backend. Three backends are siblings, chosen by the location's
scheme (:func:`core.storage.url.parse_location` is the one place that reads it):

==========================  =====================================================
``PATH`` or ``file:PATH``   :class:`~core.storage.folder_backend.FolderBackend`:
                            one JSON file per table, a write-ahead log, a lock file
``memory:``                 :class:`~core.storage.memory_backend.MemoryBackend`:
                            nothing on disk (tests, previews, scratch work)
``redis://``, ``rediss://`` :class:`~core.storage.redis_backend.RedisBackend`:
                            one hash per table, a lease, one Lua script per commit
==========================  =====================================================

A new backend subclasses :class:`Backend`, adds its scheme to
``core/storage/backends.py`` and must pass the conformance suite: every test that
takes the ``store`` fixture (``tests/conftest.py``) runs on every backend.

The contract
------------

**State.** A store's committed state is a *head* (a
:class:`~core.storage.manifest.Manifest`: a generation that every commit moves on by
one, the schema version, and each table's version) and the documents of each table
(id → JSON object). A table's version changes whenever the table does and is never
given to two different states of that table (a table dropped and made again does
not start over).

**Locking.** :meth:`Backend.acquire` takes the store's inter-process lock (a folder's
``flock``, a Redis lease) and :meth:`Backend.release` lets it go; the store counts
re-entry and calls them once per outermost hold. Every method below that reads or
writes state runs with the lock held; :meth:`Backend.committed_generation`,
:meth:`Backend.follow`, :meth:`Backend.snapshot_delete` and :meth:`Backend.close`
do not need it.

**Reading.** :meth:`Backend.refresh` adopts whatever other processes committed since
this backend last looked and says what that was (a :class:`Refresh`). :meth:`Backend.read_table`
returns a table's committed documents at the head (``KeyError``: no such table); the
caller never changes them.

**Committing.** :meth:`Backend.commit` takes a :class:`Commit` (per table, the
documents put and the ids deleted, or the whole table; the tables dropped) and makes
all of it durable and visible at once, or raises with none of it visible. A
transaction bigger than memory hands tables to :meth:`Backend.stage` as it goes
(optional: a backend that returns None keeps them in the store's memory); they land
with its commit or go with its rollback. When it
returns the commit is *acknowledged*: a crash at any instant afterwards loses none of
it, and a crash before leaves the store with all of it or nothing. A value that would
not survive JSON is refused before anything is written.

**Damage.** :meth:`Backend.check_table` says why a table cannot be read, and
:meth:`Backend.set_aside` keeps its stored form out of the way (never deleted) before
a restore replaces it (``core/services/checkpoints.py``).

**Snapshots** (the files of store checkpoints, ``core/services/checkpoints.py``): a snapshot is
an independent copy of some tables' committed state under a key, readable after
anything is done to the live tables. :meth:`Backend.snapshot_create` and
:meth:`Backend.snapshot_import` run inside a transaction and exist once its commit
returns (a backend may make them at once or with the commit; one made by a
transaction that rolled back is an orphan, which :meth:`Backend.snapshot_sweep`
removes).

**Change notification.** Every commit says what it changed, so an index can follow
the store without rescanning it: :meth:`Backend.commit` is handed the commit itself,
and :meth:`Backend.refresh` returns the commits other processes made, each with its
documents, when the backend can list them (a folder reads them from its log), or
``None`` when it can only say which tables moved (their versions differ). The store
turns both into :class:`Change` events for its subscribers
(:meth:`core.storage.store.Store.subscribe`), once the change is visible through it.
:meth:`Backend.follow` is the push: it calls back (from a thread) when another process
commits, where the backend can tell (Redis pub/sub); a folder returns None and is
polled through :meth:`Backend.committed_generation`.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .manifest import Manifest

if TYPE_CHECKING:
    from pathlib import Path

Doc = dict[str, Any]
Docs = dict[str, Doc]


class TableWrite:
    """What one commit does to one table.

    ``put`` holds the documents inserted or replaced and ``delete`` the ids removed.
    With ``replace`` the table's earlier documents are all gone first and ``put`` is
    the whole table (a new table, one dropped and written again, one TinyDB edited in
    place). ``docs`` is the whole table after the commit and ``base`` the committed
    documents the transaction started from (None for a new or replaced table, and for
    a write read back from a log), for backends that rewrite a table whole; both are
    read-only. A write read back from a log, or staged, decodes its documents only
    when they are first asked for (``load``); ``put_ids`` are known without them.
    """

    __slots__ = ("_put", "_put_ids", "delete", "_load", "replace", "_docs", "base", "staged")

    def __init__(
        self,
        put: Docs | None = None,
        delete: Iterable[str] = (),
        *,
        replace: bool = False,
        docs: Docs | None = None,
        base: Docs | None = None,
        put_ids: Iterable[str] | None = None,
        load: Callable[[], Docs] | None = None,
        staged: object | None = None,
    ) -> None:
        self._put = put
        self._put_ids = list(put_ids) if put_ids is not None else None
        #: The ids removed.
        self.delete = list(delete)
        self._load = load
        self.replace = replace
        self._docs = docs
        self.base = base
        #: The whole table as the backend already holds it aside for this commit
        #: (:meth:`Backend.stage`); its documents are then read back only if asked for.
        self.staged = staged

    @classmethod
    def logged(
        cls, replace: bool, put_ids: list[str], delete: list[str], load: Callable[[], Docs]
    ) -> TableWrite:
        """A write read back from a log: its ids known, its documents decoded by ``load``
        when first asked for (the lists are kept, not copied: a reader makes one of
        these for every table of every record in the log)."""
        self = cls.__new__(cls)
        self._put = None
        self._put_ids = put_ids
        self.delete = delete
        self._load = load
        self.replace = replace
        self._docs = None
        self.base = None
        self.staged = None
        return self

    @property
    def put(self) -> Docs:
        """The documents inserted or replaced (the whole table with ``replace``)."""
        put = self._put
        if put is None:
            # Safe without a lock: a fold prepared off the lock (core/storage/fold_outside.py)
            # may decode the same write as the committing thread. ``_put`` is set before
            # ``_load`` is dropped, so a thread that finds no loader finds the documents.
            load = self._load
            if load is None:
                assert self._put is not None, "a TableWrite needs its documents or a loader"
                return self._put
            put = load()
            self._put = put
            self._load = None
        return put

    @property
    def put_ids(self) -> Collection[str]:
        """The ids of the documents put, known without decoding them."""
        if self._put is not None:
            return self._put.keys()
        assert self._put_ids is not None
        return self._put_ids

    @property
    def docs(self) -> Docs:
        """The whole table after the commit (``put`` itself for a replace)."""
        return self._docs if self._docs is not None else self.put

    def light(self) -> TableWrite:
        """The same write without the whole table or its base (what a log keeps)."""
        if self._docs is None and self.base is None:
            return self
        return TableWrite(self._put, self.delete, replace=self.replace)

    def __repr__(self) -> str:
        return (
            f"TableWrite(put={sorted(self.put_ids)}, delete={self.delete}, replace={self.replace})"
        )

    def applied_to(self, docs: Mapping[str, Doc] | None) -> Docs:
        """The table after this write, given it before (a new dict; ``docs`` is kept)."""
        if self.replace or docs is None:
            return dict(self.put)
        result = dict(docs)
        result.update(self.put)
        for doc_id in self.delete:
            result.pop(doc_id, None)
        return result


def table_writes(commits: Iterable[Commit], name: str) -> list[TableWrite]:
    """What ``commits`` did to table ``name``, in order (a drop as an empty replace)."""
    found = []
    for commit in commits:
        if name in commit.drops:
            found.append(TableWrite({}, replace=True))
        elif name in commit.writes:
            found.append(commit.writes[name])
    return found


def replay(
    writes: list[TableWrite],
    before: Callable[[], Docs | None],
    listed: Callable[[int], Collection[str] | None] | None = None,
    *,
    owned: bool = False,
) -> Docs:
    """A table after ``writes`` (in commit order; a drop is a replace with nothing put),
    in id order, given how to read it before them. ``owned``: the dict ``before`` gives
    is the caller's alone, and may be changed in place and returned (copying a table of
    1,000 documents to change a few was most of a catch-up's replay).

    Read from the last write back, so a write whose documents all come again later is
    never decoded (an aggregate rewritten by every commit costs one decode, not one per
    commit), and the table before is read only when the writes do not replace it, nor
    write again every document it holds. ``listed(n)`` names the ids the table held
    before, without decoding it, when it held at most ``n`` (None when it cannot
    tell): an aggregate table every commit rewrites whole is then never decoded from
    its file while the log holds a later copy.
    """
    if not writes:
        return before() or {}  # a table file keeps its documents in id order already
    settled: set[str] = set()
    found: Docs = {}
    replaced = False
    for write in reversed(writes):
        wanted = [i for i in write.put_ids if i not in settled]
        if wanted:
            put = write.put
            for doc_id in wanted:
                found[doc_id] = put[doc_id]
        settled.update(write.put_ids)
        settled.update(write.delete)
        if write.replace:
            replaced = True
            break
    held = listed(len(settled)) if listed is not None and not replaced else None
    if replaced or (held is not None and settled.issuperset(held)):
        base = None  # replaced, or every document it held was written or deleted since
    else:
        base = before()
    if not base:
        return dict(sorted(found.items()))
    # In id order, as a table file keeps them: a fresh read sees one sequence everywhere.
    # The base is in id order already, so only the ids it lacks need placing; those
    # usually sort after all of it (ids grow with time), and then no sort of the whole
    # table is needed (a links table of a big store is tens of thousands of documents).
    result = base if owned else dict(base)
    for doc_id in settled.difference(found):
        result.pop(doc_id, None)
    new = []
    for doc_id, doc in found.items():
        if doc_id in result:
            result[doc_id] = doc
        else:
            new.append(doc_id)
    if not new:
        return result
    new.sort()
    # Writers make their ids before they take the lock, so a commit's new id may sort
    # before another writer's committed just ahead of it: only the table's last few
    # documents, those from the first new id on, are put back in order behind it (with
    # eight writers, sorting the whole table again was a fifth of every catch-up's
    # replay).
    tail: list[str] = []
    for doc_id in reversed(result):
        if doc_id < new[0]:
            break
        tail.append(doc_id)
        if len(tail) > _TAIL_MOST:
            return dict(sorted({**result, **{i: found[i] for i in new}}.items()))
    moved = {doc_id: result.pop(doc_id) for doc_id in reversed(tail)}
    moved.update((doc_id, found[doc_id]) for doc_id in new)
    result.update(sorted(moved.items()) if tail else moved.items())
    return result


#: Past this many documents after a write's first new id, :func:`replay` sorts the
#: whole table instead of putting its tail back in order.
_TAIL_MOST = 64


class Commit:
    """Everything one transaction changes: per table a :class:`TableWrite`, the tables
    dropped (and not written again), and the schema version when it changes."""

    __slots__ = ("writes", "drops", "schema_version", "txid", "ends_hold", "generation")

    def __init__(
        self,
        writes: dict[str, TableWrite],
        drops: Iterable[str] = (),
        *,
        schema_version: int | None = None,
        txid: str = "",
        ends_hold: bool = False,
        generation: int = 0,
    ) -> None:
        self.writes = writes
        self.drops = list(drops)
        self.schema_version = schema_version
        #: Names the commit in files and logs (``<pid>-<n>``, a lease token on Redis).
        self.txid = txid
        #: The lock's hold ends right after this commit (a backend may release with it).
        self.ends_hold = ends_hold
        #: The generation this commit made (set by the backend that committed it).
        self.generation = generation

    def __repr__(self) -> str:
        return f"Commit(g={self.generation}, writes={self.writes}, drops={self.drops})"

    def empty(self) -> bool:
        """Whether the commit changes nothing at all."""
        return not self.writes and not self.drops and self.schema_version is None


class Refresh:
    """What :meth:`Backend.refresh` found: the new head, and the commits that led to it
    (each with its documents), or None when the backend cannot list them."""

    __slots__ = ("head", "commits")

    def __init__(self, head: Manifest, commits: list[Commit] | None) -> None:
        self.head = head
        self.commits = commits


class TableChange:
    """How one table changed: the ids put and deleted; ``whole`` when the documents not
    named may have changed or gone too (the table was replaced, or the backend can only
    say that it moved), ``dropped`` when it is gone."""

    __slots__ = ("put", "deleted", "whole", "dropped")

    def __init__(
        self,
        put: Iterable[str] = (),
        deleted: Iterable[str] = (),
        *,
        whole: bool = False,
        dropped: bool = False,
    ) -> None:
        self.put = frozenset(put)
        self.deleted = frozenset(deleted)
        self.whole = whole
        self.dropped = dropped

    def __repr__(self) -> str:
        if self.dropped:
            return "TableChange(dropped)"
        whole = ", whole" if self.whole else ""
        return f"TableChange(put={sorted(self.put)}, deleted={sorted(self.deleted)}{whole})"


class Change:
    """What became visible through a store: its own commit (``local``), or what other
    processes committed since it last looked. ``tables`` maps each table that changed
    to how; ``generation`` is the head after it."""

    __slots__ = ("generation", "tables", "local")

    def __init__(self, generation: int, tables: dict[str, TableChange], *, local: bool) -> None:
        self.generation = generation
        self.tables = tables
        self.local = local

    def __repr__(self) -> str:
        return f"Change(g={self.generation}, local={self.local}, tables={self.tables})"

    @classmethod
    def of_commits(cls, commits: list[Commit], generation: int, *, local: bool) -> Change:
        """The change a run of commits made, table by table, in order."""
        tables: dict[str, TableChange] = {}
        for commit in commits:
            for name, write in commit.writes.items():
                before = tables.get(name)
                whole = write.replace or (before is not None and before.whole)
                put = set() if write.replace or before is None else set(before.put)
                deleted = set() if write.replace or before is None else set(before.deleted)
                put.update(write.put_ids)
                deleted.difference_update(write.put_ids)
                deleted.update(write.delete)
                put.difference_update(write.delete)
                tables[name] = TableChange(put, deleted, whole=whole)
            for name in commit.drops:
                tables[name] = TableChange(whole=True, dropped=True)
        return cls(generation, tables, local=local)

    @classmethod
    def of_heads(cls, before: Manifest, after: Manifest) -> Change:
        """The change between two heads when the commits are unknown: every table whose
        version moved changed whole."""
        tables = {
            name: TableChange(whole=True)
            for name, version in after.tables.items()
            if before.tables.get(name) != version
        }
        for name in before.tables.keys() - after.tables.keys():
            tables[name] = TableChange(whole=True, dropped=True)
        return cls(after.generation, tables, local=False)


Listener = Callable[[Change], None]


#: What :meth:`Backend.fold_begin` returns while another process prepares the same fold.
NO_FOLD_NEEDED = "no fold needed"


class Backend(ABC):
    """Where a store's tables live; see the module docstring for the contract."""

    #: The location scheme that names this backend (``file``, ``memory``, ``redis``).
    scheme: str = ""
    #: Set before :meth:`open` by a repair (``checkpoint restore``): a store whose head
    #: cannot be read opens on one rebuilt from what can be, where the backend knows how.
    rescue: bool = False
    #: The last commit left the store wanting a fold (a folder store's log past its
    #: record count or age): the store runs it once the lock is let go
    #: (:attr:`core.storage.store.Store.fold_mode`), never inside a writer's commit.
    fold_due: bool = False
    #: Whether :meth:`changed_since` can answer at all (a backend that never can would
    #: have its callers ask in vain, then read the table anyway).
    tells_changes: bool = False

    # -- what messages and callers see ------------------------------------------------------
    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store lives, as messages name it (a folder path, a URL without
        its password)."""

    @property
    @abstractmethod
    def label(self) -> str:
        """A short name for titles (a folder's name, ``host:port/db``)."""

    @property
    def folder(self) -> Path | None:
        """The local folder the store keeps its files in (caches may live there too);
        None when it has none."""
        return None

    @property
    def read_only(self) -> str | None:
        """Why this process may only read the store (None: it may write)."""
        return None

    # -- opening and locking ----------------------------------------------------------------
    @abstractmethod
    def open(self, create: bool) -> Manifest:
        """Open the store (creating it when missing and ``create`` is set, else
        :class:`~core.base.errors.NoStore`); returns its head. Takes the lock itself when
        it needs it; a schema newer than this memwork is refused untouched."""

    @abstractmethod
    def acquire(self, wait: bool = True, meanwhile: Callable[[], None] | None = None) -> None:
        """Take the inter-process lock, waiting up to the lock timeout
        (:class:`~core.base.errors.StoreError` naming the holder when it stays busy);
        with ``wait=False``, a lock that is not free at once raises
        :class:`~core.base.no_wait.WouldWait`. A backend that waits in this process may
        call ``meanwhile`` while the lock is busy (the store catches up then: see
        :meth:`peek`)."""

    @abstractmethod
    def release(self, failed: bool) -> None:
        """Let the lock go (``failed``: the hold ended with an exception), then make
        durable what the hold committed, where the backend defers that past the lock."""

    def times_found_busy(self) -> int:
        """How many times this process found the store's lock held by another process
        and waited for it (0 where the backend cannot tell)."""
        return 0

    def defer_flushes(self) -> None:  # noqa: B027 - a backend that flushes at commit
        """From now on, the commits this thread makes are not made durable when their
        hold ends but by what :meth:`deferred` gives, once for all of them (a backend that
        makes each commit durable inside it has nothing to defer)."""

    def deferred(self) -> Deferred:
        """Stop deferring; what makes durable every commit :meth:`defer_flushes` left
        (see :class:`Deferred`)."""
        return Deferred({}, "")

    def peek(self) -> Refresh | None:
        """What other processes committed, read without the lock where the backend can
        prove each commit whole (None: nothing, or a backend that cannot tell without
        the lock). What it returns is taken in as :meth:`refresh`'s answer is, and the
        next refresh reads only what came after it."""
        return None

    def begin(self) -> None:  # noqa: B027 - an optional hook; most backends need none
        """An outermost transaction starts (the lock is held): a writer's lease starts
        its heartbeat here."""

    def backup(self, version: int) -> str:
        """Copy the whole store aside before a migration from schema ``version``
        rewrites it; returns where the copy is. Called inside the migration's
        transaction."""
        raise NotImplementedError(f"{type(self).__name__} keeps no backups")

    # -- reading ----------------------------------------------------------------------------
    @property
    @abstractmethod
    def head(self) -> Manifest:
        """The head as this backend last saw it."""

    @abstractmethod
    def refresh(self) -> Refresh | None:
        """Adopt what other processes committed since this backend last looked; None
        when nothing was."""

    def current(self, *, locked: bool = False) -> bool:
        """Whether this process holds everything committed so far, told without reading
        it: then a read may answer from what the process holds without taking the lock
        (:meth:`Store.glance`). ``locked``: asked with the lock held, where the answer
        must also say no interrupted commit waits to be completed. False (the default)
        where the backend cannot tell cheaply: every read takes the lock."""
        return False

    def size_hint(self, names: list[str]) -> int | None:
        """About how many bytes tables ``names`` take as stored, found without reading
        them (None: this backend cannot tell cheaply)."""
        sizes = self.table_sizes(names)
        return None if sizes is None else sum(sizes)

    def table_sizes(self, names: list[str]) -> list[int] | None:
        """About how many bytes each of tables ``names`` takes as stored, found without
        reading them (None: this backend cannot tell cheaply)."""
        return None

    @abstractmethod
    def read_table(self, name: str) -> Docs:
        """The committed documents of table ``name`` at the head (``KeyError`` when it
        does not exist; :class:`~core.base.errors.StoreUnreadable` when it cannot be read)."""

    def committed_generation(self) -> int:
        """The generation committed now, read without the lock (it moves whenever
        anyone commits)."""
        return self.head.generation

    def changed_since(self, name: str, version: int) -> dict[str, Doc | None] | None:
        """The documents of table ``name`` that commits after generation ``version``
        put or deleted, each as the last of them left it (None: deleted), known without
        reading the table; None when this backend cannot tell (call under the lock)."""
        return None

    # -- damage ---------------------------------------------------------------------------
    def check_table(self, name: str) -> str | None:
        """Why table ``name`` cannot be read (None: it reads), without keeping it."""
        from ..base.errors import StoreUnreadable

        try:
            self.read_table(name)
        except StoreUnreadable as exc:
            return str(exc)
        return None

    def set_aside(self, name: str, stamp: str) -> str | None:
        """Keep what holds table ``name`` now where no commit will touch it (a folder's
        ``damaged/<stamp>/``), before a commit replaces or drops it; returns where it
        went, or None when there was nothing to keep (a missing file)."""
        return None

    # -- committing -------------------------------------------------------------------------
    @abstractmethod
    def commit(self, commit: Commit) -> Manifest:
        """Make ``commit`` durable and visible at once; returns the new head and sets
        ``commit.generation``."""

    def fold_log(self) -> None:  # noqa: B027 - an optional hook; most backends need none
        """Write whatever the backend holds only in a log into its tables (a folder's
        ``store.log`` into its table files). With the lock held."""

    def fold_wanted(self) -> bool:
        """Without the lock: whether the fold a commit asked for may still be needed
        (False when another process has folded that log, or is folding it). A cheap
        look, so a writer's fold does not take the lock only to find nothing to do; it
        may claim the fold, which :meth:`fold_begin` then takes over."""
        return True

    def fold_unwanted(self) -> None:  # noqa: B027 - an optional hook; most backends need none
        """Let go of what :meth:`fold_wanted` took when :meth:`fold_begin` will not run."""

    def fold_begin(self) -> object | None:
        """With the lock held: a plan for a fold whose heavy part runs without it
        (:meth:`fold_prepare`, then :meth:`fold_finish` under the lock again),
        :data:`NO_FOLD_NEEDED` (another process is folding), or None when the backend
        cannot fold that way now (then :meth:`fold_log` does it)."""
        return None

    def fold_prepare(self, plan: object) -> None:  # noqa: B027 - an optional hook
        """Without the lock: the plan's heavy part (raises when the plan must be dropped)."""

    def fold_finish(self, plan: object) -> bool:
        """With the lock held again: commit the plan's fold (True also when another
        process folded the same log meanwhile); False when :meth:`fold_log` must run
        instead."""
        return False

    # -- staging: a transaction bigger than memory -------------------------------------------
    def stage(self, name: str, docs: Docs) -> object | None:
        """Hold table ``name`` aside, whole, as the current transaction will commit it
        (the store then forgets its documents); returns a handle, or None when this
        backend cannot (the store keeps the table in memory). A staged table lands with
        the commit, or goes with a rollback (:meth:`discard`)."""
        return None

    def read_staged(self, handle: object) -> Docs:
        """The documents of a staged table."""
        raise NotImplementedError(f"{type(self).__name__} stages nothing")

    def unstage(self, handle: object) -> Docs:
        """The documents of a staged table, which the transaction changes again: the copy
        aside is dropped."""
        docs = self.read_staged(handle)
        self.discard(handle)
        return docs

    def discard(self, handle: object) -> None:  # noqa: B027 - nothing staged by default
        """Drop a staged table (its transaction rolled back)."""

    def pending(self) -> bool:
        """Whether operations wait for the next commit (snapshots a backend makes with
        the commit): the store then commits even when no table changed."""
        return False

    def rollback(self) -> None:  # noqa: B027 - an optional hook; most backends need none
        """The transaction was abandoned: forget anything queued for its commit."""

    # -- snapshots (the files of store checkpoints) -----------------------------------------
    @abstractmethod
    def snapshot_create(
        self, key: str, names: list[str], about: dict[str, Any] | None = None
    ) -> None:
        """Snapshot the committed state of tables ``names`` under ``key``; ``about`` is the
        checkpoint's own record, kept with the snapshot where the backend can (a folder's
        snapshot then describes itself when the checkpoints table cannot be read)."""

    def damage_found(self) -> bool:
        """Whether this open found part of the store's history unreadable (a damaged log
        or head): records it held may be missing, a checkpoint's among them."""
        return False

    def snapshot_about(self, key: str) -> dict[str, Any] | None:
        """The checkpoint record snapshot ``key`` keeps of itself (None: it keeps none)."""
        return None

    @abstractmethod
    def snapshot_import(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        """Write snapshot ``key`` from given tables (table → (version, documents))."""

    @abstractmethod
    def snapshot_read(self, key: str) -> dict[str, tuple[int, Docs]]:
        """The tables snapshot ``key`` holds, each with the version it was taken at
        (:class:`~core.base.errors.StoreUnreadable` when it is missing or damaged)."""

    def snapshot_tables(self, key: str) -> dict[str, Docs]:
        """The tables snapshot ``key`` holds."""
        return {name: docs for name, (_, docs) in self.snapshot_read(key).items()}

    @abstractmethod
    def snapshot_check(self, key: str) -> None:
        """Refuse a key that cannot name a snapshot here (an unsafe name, a snapshot
        that is not what it should be), before anything changes."""

    @abstractmethod
    def snapshot_keys(self) -> list[str]:
        """Every snapshot the backend holds, whether a checkpoint names it or not."""

    @abstractmethod
    def snapshot_delete(self, key: str) -> None:
        """Remove snapshot ``key`` at once (after the transaction that dropped its
        checkpoint; the lock is not needed)."""

    @abstractmethod
    def snapshot_sweep(self, keep: set[str]) -> int:
        """Remove snapshots not in ``keep`` (orphans of interrupted commands); returns
        how many. Runs inside a transaction; a backend may do it with the commit."""

    # -- change notification ----------------------------------------------------------------
    def follow(self, on_commit: Callable[[], None]) -> Callable[[], None] | None:
        """Call ``on_commit`` (from a thread) after other processes' commits; returns a
        stop, or None when the backend cannot push (the caller polls
        :meth:`committed_generation`)."""
        return None

    def close(self) -> None:  # noqa: B027 - an optional hook; most backends need none
        """Release connections, threads and open files."""

    def discard_created(self) -> bool:
        """Remove the store this backend's :meth:`open` created, if it still holds only
        what the open wrote (no table, no commit); True when it did. The CLI calls it
        after a refused command, so bad input to a missing store leaves nothing behind.
        Optional: a backend that returns False keeps the new, empty store."""
        return False


class Deferred:
    """Commits a thread deferred (:meth:`Backend.defer_flushes`), made durable by
    :meth:`flush`, once and from any thread; ``files``: a descriptor of its own of each
    file they were written to, by the file's identity."""

    __slots__ = ("files", "where")

    def __init__(self, files: dict[tuple[int, int], int], where: str) -> None:
        self.files = files
        self.where = where

    def flush(self) -> None:
        """Make them durable (:class:`~core.base.errors.StoreError` when the disk refuses:
        none of them is then durable for sure)."""
        flush_together([self])


def flush_together(batches: list[Deferred]) -> None:
    """Make several :class:`Deferred` durable with one fsync of each file they share
    (the latest descriptor of each: an fsync covers every write made to the file
    before it), in the order given; every descriptor is closed. StoreError when the
    disk refuses."""
    from .atomic import failed_write

    if not batches:
        return
    last: dict[tuple[int, int], int] = {}
    for batch in batches:
        last.update(batch.files)
    failure: OSError | None = None
    for fd in last.values():
        try:
            os.fsync(fd)
        except OSError as exc:
            failure = failure or exc
    for batch in batches:
        for fd in batch.files.values():
            os.close(fd)
        batch.files = {}
    if failure is not None:
        raise failed_write(failure, batches[-1].where) from None
