"""The store: a folder of TinyDB tables guarded by one inter-process lock.

Every read runs inside :meth:`Store.reading` and every write inside
:meth:`Store.transaction`. Both take the lock (re-entrant within a process)
and first adopt whatever another process committed, so an agent's CLI and
the open workbench see each other's writes and never lose one.

``Store(location)`` opens a folder, or, when ``location`` is a ``redis://`` or
``rediss://`` URL, a store in that Redis database
(:class:`~core.storage.redis_store.RedisStore`, the same interface on Redis;
the Redis code is imported only then).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tinydb import TinyDB
from tinydb.table import Document, Table

from ..errors import (
    InvalidInput,
    NoStore,
    StoreError,
    StoreTooNew,
    StoreUnreadable,
    StoreWriteFailed,
)
from ..paths import might_be_url
from . import journal, schema
from .atomic import DIR_MODE
from .codec import parse_file, read_store_file
from .folder_storage import Docs, FolderStorage, MemoryTableStorage, table_file
from .lock import InterProcessLock, LockTimeout
from .manifest import MANIFEST_NAME, Manifest

LOCK_NAME = ".lock"
LOCK_TIMEOUT_ENV = "MEMWORK_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 30.0


def _is_url(text: str) -> bool:
    from .url import is_url

    return is_url(text)


def lock_timeout() -> float:
    """Seconds to wait for the store's lock (``MEMWORK_LOCK_TIMEOUT``, default 30)."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if raw is None:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):  # also refuses nan
        raise InvalidInput(LOCK_TIMEOUT_ENV, f"must be a number of seconds >= 0 (got {raw!r})")
    return value


class StrTable(Table):
    """A TinyDB table keyed by the records' own string ids.

    Integer ids cached per process collide when two processes insert; a
    record's stable id cannot.
    """

    # TinyDB declares document_id_class as type[int]; this table's ids are strings.
    document_id_class = str  # type: ignore[assignment]


class _StoreDB(TinyDB):
    table_class = StrTable
    default_table_name = "_unused"


class Store:
    """A memwork store at ``path``: a folder, created when missing (``create=False``: a
    missing store is :class:`~core.errors.NoStore` and nothing is created). A Redis URL
    (text) opens a :class:`~core.storage.redis_store.RedisStore` instead."""

    def __new__(cls, path: str | os.PathLike[str] = "", **_: Any) -> Store:
        # A folder path costs a string test: the URL code loads only for a URL.
        if cls is Store and isinstance(path, str) and might_be_url(path):
            from .url import is_url

            if is_url(path):
                from .redis_store import RedisStore

                return super().__new__(RedisStore)
        return super().__new__(cls)

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True) -> None:
        if not os.fspath(path):
            raise InvalidInput("store path", "must not be empty")
        if might_be_url(os.fspath(path)) and _is_url(os.fspath(path)):
            # A URL that became a Path ("redis:/host") must not become a folder.
            raise InvalidInput(
                "store path",
                f"{os.fspath(path)[:60]!r} is a URL, not a folder; pass Redis URLs as text",
            )
        self.path = Path(path).expanduser().absolute()
        self._create = create
        self._lock_timeout = lock_timeout()
        self._prepare_folder(create)
        self._lock: InterProcessLock | None = InterProcessLock(
            self.path / LOCK_NAME, self._lock_timeout
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

    @property
    def backend(self) -> str:
        """``folder``, ``memory`` or ``redis``."""
        return "memory" if self.in_memory_only else "folder"

    @property
    def location(self) -> str:
        """Where the store lives, as messages name it (a folder path or a URL)."""
        return str(self.path)

    @property
    def label(self) -> str:
        """A short name for titles (the folder's name; ``host:port/db`` for Redis)."""
        return self.path.name

    def committed_generation(self) -> int:
        """The commit counter of what is committed now; it moves whenever anyone writes."""
        if self.in_memory_only:
            return self.storage.manifest.generation
        return Manifest.read(self.path / MANIFEST_NAME).generation

    def follow(self, on_change: Callable[[], None]) -> Callable[[], None] | None:
        """Have ``on_change`` called after other processes' commits; returns a stop.

        None when the backend cannot push changes (a folder): the caller polls
        :meth:`committed_generation` instead.
        """
        return None

    @property
    def read_only(self) -> str | None:
        """Why this process may only read the store (None: it may write)."""
        return self._lock.read_only if self._lock is not None else None

    def _init_state(self) -> None:
        self._mutex = threading.RLock()
        self._depth = 0
        self._txn_depth = 0
        self._txn_counter = 0
        self._target_schema: int | None = None
        self._manifest_seen: tuple[bytes, Manifest] | None = None

    def _attach(self, storage: FolderStorage) -> None:
        self.storage = storage
        self.storage.lock_held = lambda: self._depth > 0
        self._db = _StoreDB(storage=lambda: self.storage)

    # -- opening ----------------------------------------------------------------------
    def _prepare_folder(self, create: bool) -> None:
        # The store folder itself may be a symbolic link (a user's choice of
        # where it lives); links *inside* it are refused (see _scan).
        try:
            mode: int | None = os.stat(self.path).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise StoreUnreadable(f"cannot use {self.path} as a store: {exc.strerror}") from None
        if mode is None:
            if not create:
                raise NoStore(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                os.mkdir(self.path, DIR_MODE)
            except FileExistsError:
                pass  # another process made it first
            except OSError as exc:
                raise StoreUnreadable(
                    f"cannot create a store at {self.path}: {exc.strerror}"
                ) from None
            return
        if stat.S_ISREG(mode):
            raise StoreUnreadable(
                f"{self.path} is a file; a memwork store is a folder "
                "(use `memwork import` to bring a JSON file in)"
            )
        if not stat.S_ISDIR(mode):
            raise StoreUnreadable(
                f"{self.path} is not a folder (a device or another special file); "
                "a memwork store is a folder"
            )
        if not os.path.lexists(self.path / MANIFEST_NAME):
            if not create:
                raise NoStore(self.path)
            if self._foreign_files():
                # Checked before the lock file is created: a folder that is not ours
                # must not even gain a .lock.
                raise StoreUnreadable(
                    f"{self.path} is not empty and has no {MANIFEST_NAME}; "
                    "refusing to write into it"
                )

    def _foreign_files(self) -> list[str]:
        return [
            e.name
            for e in os.scandir(self.path)
            if e.name not in (LOCK_NAME, journal.JOURNAL_NAME) and not journal.is_temp_name(e.name)
        ]

    def _scan(self) -> list[str]:
        """Refuse symbolic links in the store folder; return the temp files found.

        A link inside a store (a table file, store.json, the journal, snapshots/)
        could send a read or a write anywhere on disk, so the store is refused
        until it is replaced by the real thing. One scandir, done on every open.
        """
        temps = []
        for entry in os.scandir(self.path):
            if entry.is_symlink():
                raise StoreUnreadable(
                    f"{entry.path} is a symbolic link; memwork does not follow links inside "
                    "a store (replace it with the file or folder itself); nothing was changed"
                )
            if journal.is_temp_name(entry.name):
                temps.append(entry.name)
        return temps

    def _open(self) -> None:
        with self._locked():
            manifest_path = self.path / MANIFEST_NAME
            temps = self._scan()
            journal.recover(self.path)
            writable = self.read_only is None
            if not os.path.lexists(manifest_path):
                if not self._create:
                    raise NoStore(self.path)
                if self._foreign_files():
                    raise StoreUnreadable(
                        f"{self.path} is not empty and has no {MANIFEST_NAME}; "
                        "refusing to write into it"
                    )
                if not writable:
                    raise StoreWriteFailed(
                        f"cannot create a store at {self.path}: {self.read_only}"
                    )
                journal.remove_strays(self.path, temps)
                manifest = Manifest(schema_version=schema.SCHEMA_VERSION)
                journal.commit(self.path, {MANIFEST_NAME: manifest.to_bytes()}, [], "init")
            elif writable:
                journal.remove_strays(self.path, temps)
            manifest = Manifest.read(manifest_path)
            if manifest.schema_version > schema.SCHEMA_VERSION:
                raise StoreTooNew(
                    f"{manifest_path} has schema version {manifest.schema_version}, newer than "
                    f"this memwork understands ({schema.SCHEMA_VERSION}); upgrade memwork. "
                    "Nothing was changed."
                )
            self._attach(FolderStorage(self.path, manifest))
            self.storage.read_only = self.read_only
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
                        f"(waited {self._lock_timeout:.0f} s for {self.path / LOCK_NAME})"
                    ) from None
                storage = getattr(self, "storage", None)
                if storage is not None:
                    storage.read_only = self._lock.read_only
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
        path = self.path / MANIFEST_NAME
        raw = read_store_file(path)
        seen = self._manifest_seen
        if self.storage.manifest_bytes is not None:  # this process's own last commit
            seen = (self.storage.manifest_bytes, self.storage.manifest)
            self.storage.manifest_bytes = None
            self._manifest_seen = seen
        if seen is not None and seen[1] is self.storage.manifest and seen[0] == raw:
            # The very bytes the storage's manifest was read from: nothing was committed
            # since. A long-lived reader (an MCP server, a search) opens a read before
            # every call, and parsing a manifest of ~1,000 tables each time cost more
            # than comparing its bytes.
            return
        self.storage.refresh(Manifest.parse(parse_file(path, raw), path))
        self._manifest_seen = (raw, self.storage.manifest)

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
            if outermost and self.read_only:
                # Refused before anything runs: a transaction may write files
                # (checkpoint snapshots) before its commit.
                raise StoreWriteFailed(
                    f"the store at {self.path} is read-only for this user "
                    f"({self.read_only}); nothing was written"
                )
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
                    try:
                        self.storage.commit(self._new_txid(), schema_version=self._target_schema)
                    except BaseException:
                        self.storage.rollback()
                        raise
                    self._committed_hook()
            finally:
                self._txn_depth -= 1
                if self._txn_depth == 0:
                    self.storage.in_transaction = False

    def _new_txid(self) -> str:
        self._txn_counter += 1
        return f"{os.getpid()}-{self._txn_counter}"

    def _committed_hook(self) -> None:
        """Called after each commit (the Redis store notes it for its lease check)."""

    # -- tables -----------------------------------------------------------------------
    def table(self, name: str) -> StrTable:
        """The TinyDB table ``name`` (query cache off: other processes change data)."""
        # TinyDB.table is typed Table; _StoreDB.table_class makes every table a StrTable.
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
        # TinyDB types doc_id as int; a StrTable's ids are the records' own strings.
        self.table(name).insert(Document(doc, doc_id=doc_id))  # type: ignore[arg-type]

    def table_path(self, name: str) -> Path:
        """The file that holds table ``name``."""
        return self.path / table_file(name)

    def close(self) -> None:
        """Release resources (the lock is only held inside reading/transaction)."""
        self.storage.tables.clear()
