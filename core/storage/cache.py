"""A store's tables in memory: the committed ones it has read, and a transaction's
changes to them, as TinyDB's ``Storage``.

TinyDB hands a storage the whole database on every write. Here ``read()`` returns a
lazy mapping that asks the backend for a table only when it is first touched, and a
write copies a table's dict once per transaction, so the committed dict stays intact
until the commit and a rollback is a matter of forgetting the copies. The commit is
built from what the transaction did: per table the documents put and the ids deleted
(a :class:`~core.storage.backend.Commit`), never a diff of whole tables.

Committed dicts are never changed in place while anything else holds them: what another
process committed replaces a cached table with a new dict (the old one may still be
held by a reader, such as an index derived from the table, that compares identities to
notice change). A dict nothing but the cache holds is changed in place instead, so
catching up with a few documents of a big table does not copy all of it; its stamp
(:meth:`TableCache.stamp`) moves either way.

A transaction's changes stay in bounded memory: once its changed tables hold more
than ``MEMWORK_STAGE_DOCUMENTS`` documents (default 100,000), the ones written
longest ago are *staged*: the backend writes each whole, as it will commit it, beside
its target (a folder: a temp file the commit's journal renames in) and the cache
forgets its documents, reading them back only if the transaction touches that table
again. A bulk record or an import streams through; the commit still lands all of it
or nothing.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from ..base.numbers import is_whole_number
from .backend import (
    Backend,
    Change,
    Commit,
    Docs,
    Refresh,
    TableWrite,
    replay,
    table_writes,
)
from .manifest import Manifest

_OUTSIDE = "memwork writes must run inside store.transaction()"
STAGE_ENV = "MEMWORK_STAGE_DOCUMENTS"
#: Documents a transaction's changed tables hold in memory before the oldest are staged.
STAGE_DOCUMENTS = 100_000


def stage_documents() -> int:
    """The staging threshold (``MEMWORK_STAGE_DOCUMENTS``; tests make it small)."""
    raw = os.environ.get(STAGE_ENV)
    return int(raw) if raw and is_whole_number(raw) else STAGE_DOCUMENTS


class TableMap(dict[str, Docs]):
    """Loaded tables; a missing key is loaded from the backend on first access."""

    def __init__(self, loader: Callable[[str], Docs]) -> None:
        super().__init__()
        self._loader = loader

    def __missing__(self, name: str) -> Docs:
        docs = self._loader(name)  # raises KeyError when the table does not exist
        self[name] = docs
        return docs


#: How many references an object has, where the interpreter can count them (CPython);
#: elsewhere, more than any table could be changed in place with.
_references: Callable[[object], int] = getattr(sys, "getrefcount", lambda _obj: 1 << 30)


def _given(docs: Docs) -> Callable[[], Docs]:
    return lambda: docs


def _unstaged(backend: Backend, handle: object) -> Callable[[], Docs]:
    return lambda: backend.read_staged(handle)


def _canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, ensure_ascii=False)


class TableCache:
    """TinyDB storage over a :class:`~core.storage.backend.Backend`.

    It has TinyDB's ``Storage`` methods (``read``, ``write``, ``close``) without
    subclassing it: importing TinyDB is left to the callers of its API
    (:mod:`core.storage.tinydb_api`)."""

    def __init__(self, backend: Backend, head: Manifest) -> None:
        self.backend = backend
        self.head = head
        self.tables = TableMap(self._load)
        # The dict object each table had when it was loaded or last committed; a
        # transaction's first write swaps in a copy, so identity marks a changed table.
        self._clean: dict[str, Docs] = {}
        self._dropped: set[str] = set()
        #: Ids put and deleted in this transaction, per table.
        self._touched: dict[str, set[str]] = {}
        self._deleted: dict[str, set[str]] = {}
        # Tables TinyDB's own API wrote: it edits documents in place, so they go whole.
        self._whole: set[str] = set()
        #: Changed tables the backend holds aside for this transaction (name → handle).
        self._staged: dict[str, object] = {}
        # Documents in this transaction's changed tables, and when each was last written.
        self._held = 0
        self._tick = 0
        self._written: dict[str, int] = {}
        self._stage_limit = stage_documents()
        self._stage_off = False
        self.in_transaction = False
        self.lock_held: Callable[[], bool] = lambda: True
        #: Called before a table is read from the backend (the store's lock may be taken).
        self.before_read: Callable[[], None] = lambda: None
        # Per table, the last change that may have touched its documents (and one for
        # every table at once): what an index derived from a table checks (stamp()).
        self._changes: dict[str, int] = {}
        self._every = 0
        self._change_count = 0
        # MEMWORK_VERIFY_WRITES (the test suite): each loaded document as it was read,
        # so a commit can tell a document changed in place without a put.
        self._pristine: dict[str, dict[str, str]] | None = (
            {} if os.environ.get("MEMWORK_VERIFY_WRITES") else None
        )

    # -- TinyDB's Storage interface ---------------------------------------------------------
    def read(self) -> dict[str, Docs]:
        return self.tables

    def write(self, data: dict[str, Docs]) -> None:
        if not self.in_transaction:
            raise RuntimeError(_OUTSIDE)
        self._changed_all()  # TinyDB's API edited documents in place
        if data is not self.tables:
            # drop_tables() hands us a fresh dict: adopt it table by table.
            for name in list(self.tables):
                if name not in data:
                    self.drop(name)
            self.tables.update(data)
        self._whole.update(name for name, docs in data.items() if self._clean.get(name) is not docs)

    def close(self) -> None:
        pass

    # -- loading and freshness --------------------------------------------------------------
    def _load(self, name: str) -> Docs:
        self._changed(name)
        handle = self._staged.pop(name, None)
        if handle is not None:
            # Touched again: back in memory, and the copy aside goes.
            docs = self.backend.unstage(handle)
            self._held += len(docs)
            return docs
        if name not in self.head.tables or name in self._dropped:
            raise KeyError(name)
        if not self.lock_held():
            raise RuntimeError("memwork reads must run inside store.reading()")
        self.before_read()
        docs = self.backend.read_table(name)
        self._clean[name] = docs
        if self._pristine is not None:
            self._pristine[name] = {k: _canonical(d) for k, d in docs.items()}
        return docs

    def adopt(self, refresh: Refresh, *, said: bool = True) -> Change | None:
        """Take in what other processes committed (outside any transaction); returns
        what changed (None without ``said``: nobody listens, and a writer that adopts
        others' commits does it while it holds the lock)."""
        before = self.head
        commits = refresh.commits
        change = None
        if commits is None:
            for name in list(self.tables):
                if refresh.head.tables.get(name) != before.tables.get(name):
                    self.evict(name)
            if said:
                change = Change.of_heads(before, refresh.head)
        else:
            touched = {n for c in commits for n in (*c.writes, *c.drops)}
            for name in touched & self.tables.keys():
                if name not in refresh.head.tables:
                    self.evict(name)
                    continue
                cached = self.tables[name]
                # Held by nothing but this cache (its two maps, ``cached`` and the count's
                # own argument): no reader can see it change, so it changes in place.
                owned = _references(cached) <= 4
                writes = table_writes(commits, name)
                self._replace_clean(name, replay(writes, _given(cached), owned=owned))
            if said:
                change = Change.of_commits(commits, refresh.head.generation, local=False)
        self.head = refresh.head
        return change

    def _replace_clean(self, name: str, docs: Docs) -> None:
        self._changed(name)
        self.tables[name] = self._clean[name] = docs
        if self._pristine is not None:
            self._pristine[name] = {k: _canonical(d) for k, d in docs.items()}

    def evict(self, name: str) -> None:
        """Forget a cached table so the next access reads it again."""
        self._changed(name)
        self.tables.pop(name, None)
        self._clean.pop(name, None)
        self._touched.pop(name, None)
        self._deleted.pop(name, None)
        if self._pristine is not None:
            self._pristine.pop(name, None)

    def release(self, name: str) -> None:
        """Forget a table's documents unless a transaction is under way (it may hold
        changes to them): they are read again when next used."""
        if not self.in_transaction and name in self.tables:
            self.evict(name)

    def clear(self) -> None:
        """Forget every cached table (they are read again when next used)."""
        self._changed_all()
        self.tables.clear()
        self._clean.clear()
        if self._pristine is not None:
            self._pristine.clear()

    def loaded(self, name: str) -> bool:
        """Whether table ``name`` is in memory."""
        return name in self.tables

    def has(self, name: str) -> bool:
        """Whether table ``name`` exists, including one created in this transaction."""
        if name in self.tables or name in self._staged:
            return True
        return name in self.head.tables and name not in self._dropped

    def names(self) -> list[str]:
        """Every table the store holds, including ones created in this transaction."""
        here = set(self.tables) | set(self._staged)
        return sorted((set(self.head.tables) | here) - (self._dropped - here))

    def is_committed(self, name: str, docs: object) -> bool:
        """Whether ``docs`` is table ``name``'s committed dict as this process holds it,
        not written by the transaction under way (its first write swaps in a copy).
        (A write through TinyDB's API edits documents in place: :meth:`stamp` tells.)"""
        return self._clean.get(name) is docs

    def stamp(self, name: str) -> tuple[int, int]:
        """A value that differs whenever table ``name``'s documents may have changed
        since it was taken, in this process (an index derived from the table, kept
        beside the dict :attr:`tables` holds, is current while both are the same)."""
        return self._every, self._changes.get(name, 0)

    def _changed(self, name: str) -> None:
        self._change_count += 1
        self._changes[name] = self._change_count

    def _changed_all(self) -> None:
        self._change_count += 1
        self._every = self._change_count

    # -- writes -----------------------------------------------------------------------------
    def writable(self, name: str) -> Docs:
        """The table's dict, copied once per transaction so the committed one stays intact
        (an empty new table when it does not exist)."""
        if not self.in_transaction:
            raise RuntimeError(_OUTSIDE)
        try:
            docs = self.tables[name]
        except KeyError:
            docs = {}
            self.tables[name] = docs
            return docs
        if self._clean.get(name) is docs:
            docs = dict(docs)
            self.tables[name] = docs
            self._held += len(docs)
        return docs

    def put_docs(self, name: str, docs: dict[str, dict[str, Any]]) -> None:
        """Insert or replace whole documents.

        TinyDB's own update path rebuilds the whole table dict twice per call;
        this copies it once per transaction, so a batch of writes stays linear.
        """
        table = self.tables.get(name)
        if table is None or not self.in_transaction or self._clean.get(name) is table:
            table = self.writable(name)  # the first write this transaction (or refused)
        self._change_count += 1  # _changed, inline: recording puts hundreds per episode
        self._changes[name] = self._change_count
        before = len(table)
        table.update(docs)
        self._touched.setdefault(name, set()).update(docs)
        self._held += len(table) - before
        self._tick += 1
        self._written[name] = self._tick
        if self._held > self._stage_limit and not self._stage_off:
            self._stage(keep=name)

    def _stage(self, keep: str) -> None:
        """Hand the changed tables written longest ago to the backend to hold aside,
        until half the threshold is left in memory (``keep``, written just now, stays)."""
        in_memory = [n for n in self.dirty() if n not in self._staged]
        for _, name in sorted((self._written.get(n, -1), n) for n in in_memory):
            if self._held <= self._stage_limit // 2:
                return
            if name == keep:
                continue
            docs = self.tables[name]
            handle = self.backend.stage(name, docs)
            if handle is None:
                self._stage_off = True  # this backend keeps everything in memory
                return
            self._staged[name] = handle
            del self.tables[name]
            self._touched.pop(name, None)
            self._deleted.pop(name, None)
            self._whole.add(name)  # it comes back, if ever, as the whole table
            self._held -= len(docs)

    def delete_docs(self, name: str, ids: list[str]) -> None:
        """Remove documents by id."""
        table = self.writable(name)
        self._changed(name)
        deleted = self._deleted.setdefault(name, set())
        for doc_id in ids:
            if table.pop(doc_id, None) is not None:
                deleted.add(doc_id)
                self._held -= 1

    def private(self, name: str) -> None:
        """Give TinyDB's API a table it may edit in place: its own copies of the
        documents (the committed ones stay as they were), written whole at commit."""
        if not self.has(name):
            return  # TinyDB makes a new table of its own
        self._changed(name)
        docs = self.writable(name)
        for doc_id, doc in docs.items():
            docs[doc_id] = json.loads(json.dumps(doc))
        self._whole.add(name)

    def drop(self, name: str) -> None:
        """Delete a whole table at the next commit."""
        if not self.in_transaction:
            raise RuntimeError(_OUTSIDE)
        self._changed(name)
        handle = self._staged.pop(name, None)
        if handle is not None:
            self.backend.discard(handle)
        docs = self.tables.get(name)
        if docs is not None and docs is not self._clean.get(name):
            self._held -= len(docs)
        self.tables.pop(name, None)
        self._touched.pop(name, None)
        self._deleted.pop(name, None)
        self._dropped.add(name)

    def dirty(self) -> list[str]:
        """Tables changed since they were loaded or last committed (staged ones too)."""
        changed = {name for name, docs in self.tables.items() if self._clean.get(name) is not docs}
        return sorted(changed | self._staged.keys())

    # -- commit and rollback ----------------------------------------------------------------
    def prepare(self, txid: str, schema_version: int | None, *, ends_hold: bool) -> Commit:
        """The commit this transaction makes (it may be empty)."""
        writes: dict[str, TableWrite] = {}
        for name, handle in self._staged.items():
            writes[name] = TableWrite(
                replace=True, put_ids=(), staged=handle, load=_unstaged(self.backend, handle)
            )
        for name in self.dirty():
            if name in self._staged:
                continue
            docs = self.tables[name]
            base = self._clean.get(name)
            if name in self._whole or name in self._dropped or name not in self.head.tables:
                writes[name] = TableWrite(dict(docs), replace=True, docs=docs)
                continue
            touched = self._touched.get(name, set())
            self._verify(name, docs, touched)
            put = {doc_id: docs[doc_id] for doc_id in touched if doc_id in docs}
            gone = [i for i in self._deleted.get(name, ()) if i not in docs]
            writes[name] = TableWrite(put, sorted(gone), docs=docs, base=base)
        # A table dropped and then written again in one transaction is replaced, not gone,
        # whether its new documents are in memory or staged (a restore drops every table
        # before writing the checkpoint's back, and past the threshold the first written
        # wait on disk: counted as drops, they were lost).
        drops = sorted(
            n
            for n in self._dropped
            if n in self.head.tables and n not in self.tables and n not in self._staged
        )
        return Commit(writes, drops, schema_version=schema_version, txid=txid, ends_hold=ends_hold)

    def _verify(self, name: str, docs: Docs, touched: set[str]) -> None:
        """MEMWORK_VERIFY_WRITES: a document nobody put must read as it was loaded."""
        if self._pristine is None or name not in self._pristine:
            return
        pristine = self._pristine[name]
        for doc_id, doc in docs.items():
            if doc_id not in touched and pristine.get(doc_id) != _canonical(doc):
                raise AssertionError(
                    f"table {name}: document {doc_id!r} differs from a full encoding of what "
                    "was read: it was changed in place without a put, so no commit carries it"
                )

    def committed(self, commit: Commit, head: Manifest) -> None:
        """The backend acknowledged ``commit``: its tables are the committed ones now."""
        for name, write in commit.writes.items():
            if write.staged is not None:
                self.evict(name)  # committed aside: read again if it is wanted
                continue
            self._clean[name] = self.tables[name]
            if self._pristine is not None:
                table = self._pristine.setdefault(name, {})
                if write.replace:
                    table.clear()
                    table.update((k, _canonical(d)) for k, d in write.docs.items())
                else:
                    table.update((k, _canonical(d)) for k, d in write.put.items())
                    for doc_id in write.delete:
                        table.pop(doc_id, None)
        for name in commit.drops:
            self.evict(name)
        self.head = head
        self._forget_changes()

    def rollback(self) -> None:
        """Forget uncommitted changes; the backend was never touched."""
        # Committed dicts are never changed in place (TinyDB edits private copies), so
        # each changed table goes back to the one it was copied from.
        self._changed_all()
        for handle in self._staged.values():
            self.backend.discard(handle)
        for name in {*self.dirty(), *self._dropped}:
            clean = self._clean.get(name)
            if clean is None:
                self.tables.pop(name, None)
            else:
                self.tables[name] = clean
        self._forget_changes()

    def _forget_changes(self) -> None:
        self._staged.clear()
        self._held = 0
        self._written.clear()
        self._dropped.clear()
        self._touched.clear()
        self._deleted.clear()
        self._whole.clear()
