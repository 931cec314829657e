"""The store: a folder of TinyDB tables guarded by one inter-process lock.

Every read runs inside :meth:`Store.reading` and every write inside
:meth:`Store.transaction`. Both take the lock (re-entrant within a process)
and first adopt whatever another process committed, so an agent's CLI and
the open workbench see each other's writes and never lose one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.table import Document, Table

from core.errors import StoreError, StoreTooNew, StoreUnreadable
from core.storage import journal, schema
from core.storage.folder_storage import Docs, FolderStorage, MemoryTableStorage, table_file
from core.storage.lock import InterProcessLock, LockTimeout
from core.storage.manifest import MANIFEST_NAME, Manifest

LOCK_NAME = ".lock"
LOCK_TIMEOUT_S = float(os.environ.get("MEMWORK_LOCK_TIMEOUT", "30"))


class StrTable(Table):
    """A TinyDB table keyed by the records' own string ids.

    Integer ids cached per process collide when two processes insert; a
    record's stable id cannot.
    """

    document_id_class = str  # type: ignore[assignment]


class _StoreDB(TinyDB):
    table_class = StrTable
    default_table_name = "_unused"


class Store:
    """A memwork store at ``path`` (a folder, created when missing)."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        self.path = Path(path).expanduser().absolute()
        self._prepare_folder(create)
        self._lock: InterProcessLock | None = InterProcessLock(
            self.path / LOCK_NAME, LOCK_TIMEOUT_S
        )
        self._init_state()
        self._open()

    @classmethod
    def in_memory(cls) -> Store:
        """A store with the same semantics and nothing on disk (tests, previews)."""
        self = cls.__new__(cls)
        self.path = Path("<memory>")
        self._lock = None
        self._init_state()
        self._attach(MemoryTableStorage())
        self.storage.manifest = Manifest(schema_version=schema.SCHEMA_VERSION)
        return self

    @property
    def in_memory_only(self) -> bool:
        """Whether this store lives only in memory."""
        return self._lock is None

    def _init_state(self) -> None:
        self._mutex = threading.RLock()
        self._depth = 0
        self._txn_depth = 0
        self._txn_counter = 0
        self._target_schema: int | None = None

    def _attach(self, storage: FolderStorage) -> None:
        self.storage = storage
        self.storage.lock_held = lambda: self._depth > 0
        self._db = _StoreDB(storage=lambda: self.storage)  # type: ignore[arg-type]

    # -- opening ----------------------------------------------------------------------
    def _prepare_folder(self, create: bool) -> None:
        if self.path.is_file():
            raise StoreUnreadable(
                f"{self.path} is a file; a memwork store is a folder "
                "(use `memwork import` to bring a JSON file in)"
            )
        if not self.path.exists():
            if not create:
                raise StoreUnreadable(f"no memwork store at {self.path}")
            self.path.mkdir(parents=True, exist_ok=True)
        elif not (self.path / MANIFEST_NAME).exists() and self._foreign_files():
            # Checked before the lock file is created: a folder that is not ours
            # must not even gain a .lock.
            raise StoreUnreadable(
                f"{self.path} is not empty and has no {MANIFEST_NAME}; refusing to write into it"
            )

    def _foreign_files(self) -> list[str]:
        return [
            e.name
            for e in os.scandir(self.path)
            if e.name not in (LOCK_NAME, journal.JOURNAL_NAME) and journal.TMP_MARK not in e.name
        ]

    def _open(self) -> None:
        with self._locked():
            manifest_path = self.path / MANIFEST_NAME
            journal.recover(self.path)
            if not manifest_path.exists():
                if self._foreign_files():
                    raise StoreUnreadable(
                        f"{self.path} is not empty and has no {MANIFEST_NAME}; "
                        "refusing to write into it"
                    )
                journal.remove_strays(self.path)
                manifest = Manifest(schema_version=schema.SCHEMA_VERSION)
                journal.commit(self.path, {MANIFEST_NAME: manifest.to_bytes()}, [], "init")
            else:
                journal.remove_strays(self.path)
            manifest = Manifest.read(manifest_path)
            if manifest.schema_version > schema.SCHEMA_VERSION:
                raise StoreTooNew(
                    f"{manifest_path} has schema version {manifest.schema_version}, newer than "
                    f"this memwork understands ({schema.SCHEMA_VERSION}); upgrade memwork. "
                    "Nothing was changed."
                )
            self._attach(FolderStorage(self.path, manifest))
            if manifest.schema_version < schema.SCHEMA_VERSION:
                self._migrate(manifest.schema_version)

    def _migrate(self, version: int) -> None:
        self.backup_path = schema.backup_folder(self.path, version)
        with self.transaction():
            for step in range(version, schema.SCHEMA_VERSION):
                schema.MIGRATIONS[step](self)
            self._target_schema = schema.SCHEMA_VERSION

    # -- locking ----------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex:
            if self._depth == 0 and self._lock is not None:
                try:
                    self._lock.acquire()
                except LockTimeout:
                    raise StoreError(
                        f"the store at {self.path} is locked by another process "
                        f"(waited {LOCK_TIMEOUT_S:.0f} s for {self.path / LOCK_NAME})"
                    ) from None
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._lock is not None:
                    self._lock.release()

    def _refresh(self) -> None:
        if self._lock is None:
            return
        journal.recover(self.path)
        self.storage.refresh(Manifest.read(self.path / MANIFEST_NAME))

    @contextmanager
    def reading(self) -> Iterator[Store]:
        """A consistent view of the store: everything committed before it began."""
        with self._locked():
            if self._depth == 1:
                self._refresh()
            yield self

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Read-modify-write under the lock; all of it lands, or none of it."""
        with self._locked():
            outermost = self._txn_depth == 0
            if outermost and self._depth == 1:
                self._refresh()
            self._txn_depth += 1
            self.storage.in_transaction = True
            if outermost:
                self._target_schema = None
            try:
                yield self
            except BaseException:
                if outermost:
                    self.storage.rollback()
                raise
            else:
                if outermost:
                    self._txn_counter += 1
                    txid = f"{os.getpid()}-{self._txn_counter}"
                    try:
                        self.storage.commit(txid, schema_version=self._target_schema)
                    except BaseException:
                        self.storage.rollback()
                        raise
            finally:
                self._txn_depth -= 1
                if self._txn_depth == 0:
                    self.storage.in_transaction = False

    # -- tables -----------------------------------------------------------------------
    def table(self, name: str) -> StrTable:
        """The TinyDB table ``name`` (query cache off: other processes change data)."""
        return self._db.table(name, cache_size=0)  # type: ignore[return-value]

    def table_names(self, prefix: str | None = None) -> list[str]:
        """Tables in the store, optionally those named ``prefix`` or ``prefix.*``."""
        names = self.storage.names()
        if prefix is None:
            return names
        return [n for n in names if n == prefix or n.startswith(prefix + ".")]

    def has_table(self, name: str) -> bool:
        """Whether table ``name`` exists (a dictionary lookup: no listing, no file read)."""
        return self.storage.has(name)

    def docs(self, name: str) -> Docs:
        """The raw documents of a table (id → document); treat them as read-only."""
        try:
            return self.storage.tables[name]
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
            self.storage.put_docs(name, docs)

    def delete(self, name: str, doc_ids: Iterable[str]) -> None:
        """Remove documents by id (missing ids are ignored)."""
        ids = list(doc_ids)
        if ids:
            self.storage.delete_docs(name, ids)

    def drop(self, name: str) -> None:
        """Remove a whole table."""
        if not self.storage.in_transaction:
            raise RuntimeError("memwork writes must run inside store.transaction()")
        self.storage.drop(name)
        self._db._tables.pop(name, None)

    def insert_document(self, name: str, doc_id: str, doc: dict[str, Any]) -> None:
        """Insert a new document through TinyDB's public API (fails if the id exists)."""
        self.table(name).insert(Document(doc, doc_id=doc_id))

    def table_path(self, name: str) -> Path:
        """The file that holds table ``name``."""
        return self.path / table_file(name)

    def close(self) -> None:
        """Release resources (the lock is only held inside reading/transaction)."""
        self.storage.tables.clear()
