"""A store in a folder: one JSON file per table, ``store.json``, a lock file.

``store.json`` names the schema version, the commit counter and each table file's
version. A commit writes every changed table file beside its target, then the
journal naming the renames, then renames (:mod:`core.storage.journal`), under
``<store>/.lock`` (:mod:`core.storage.lock`). A table file is written with the
bytes of its unchanged documents kept (:func:`core.storage.codec.table_bytes`).

Nothing reaches outside the folder: symbolic links inside it are refused on every
open, every table name passes :func:`~core.storage.manifest.table_file` before it
becomes a path, and files are opened with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import (
    NoStore,
    StoreError,
    StoreTooNew,
    StoreUnreadable,
    StoreWriteFailed,
)
from . import journal, schema
from .atomic import DIR_MODE
from .backend import Backend, Commit, Docs, Refresh
from .codec import dumps, load_file, read_store_file, table_bytes
from .lock import InterProcessLock, LockTimeout, lock_timeout
from .manifest import MANIFEST_NAME, Manifest, table_file
from .snapshot_files import SnapshotFiles

LOCK_NAME = ".lock"


class FolderBackend(Backend):
    """The store in folder ``path`` (see the module docstring)."""

    scheme = "file"

    def __init__(self, path: Path) -> None:
        self.path = path.expanduser().absolute()
        self._lock_timeout = lock_timeout()
        self._lock: InterProcessLock | None = None
        self._head = Manifest(schema_version=schema.SCHEMA_VERSION)
        self.snapshots = SnapshotFiles(self.path)

    # -- what callers see -------------------------------------------------------------------
    @property
    def location(self) -> str:
        return str(self.path)

    @property
    def label(self) -> str:
        return self.path.name

    @property
    def folder(self) -> Path:
        return self.path

    @property
    def read_only(self) -> str | None:
        return self._lock.read_only if self._lock is not None else None

    @property
    def head(self) -> Manifest:
        return self._head

    def table_path(self, name: str) -> Path:
        """The file that holds table ``name``."""
        return self.path / table_file(name)

    # -- opening ----------------------------------------------------------------------------
    def open(self, create: bool) -> Manifest:
        self._prepare_folder(create)
        self._lock = InterProcessLock(self.path / LOCK_NAME, self._lock_timeout)
        self.acquire()
        try:
            return self._open(create)
        finally:
            self.release(False)

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

    def _open(self, create: bool) -> Manifest:
        manifest_path = self.path / MANIFEST_NAME
        temps = self._scan()
        journal.recover(self.path)
        writable = self.read_only is None
        if not os.path.lexists(manifest_path):
            if not create:
                raise NoStore(self.path)
            if self._foreign_files():
                raise StoreUnreadable(
                    f"{self.path} is not empty and has no {MANIFEST_NAME}; "
                    "refusing to write into it"
                )
            if not writable:
                raise StoreWriteFailed(f"cannot create a store at {self.path}: {self.read_only}")
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
        self._head = manifest
        return manifest

    def backup(self, version: int) -> str:
        return str(schema.backup_folder(self.path, version))

    # -- locking ----------------------------------------------------------------------------
    def acquire(self) -> None:
        assert self._lock is not None, "open() first"
        try:
            self._lock.acquire()
        except LockTimeout:
            raise StoreError(
                f"the store at {self.path} is locked by another process "
                f"(waited {self._lock_timeout:.0f} s for {self.path / LOCK_NAME})"
            ) from None

    def release(self, failed: bool) -> None:
        if self._lock is not None:
            self._lock.release()

    # -- reading ----------------------------------------------------------------------------
    def refresh(self) -> Refresh | None:
        journal.recover(self.path)
        manifest = Manifest.read(self.path / MANIFEST_NAME)
        if manifest.generation == self._head.generation and manifest.tables == self._head.tables:
            return None
        self._head = manifest
        return Refresh(manifest, None)

    def committed_generation(self) -> int:
        return Manifest.read(self.path / MANIFEST_NAME).generation

    def read_table(self, name: str) -> Docs:
        expected = self._head.tables.get(name)
        if expected is None:
            raise KeyError(name)
        path = self.path / table_file(name)
        data = load_file(path)
        if (
            not isinstance(data, dict)
            or data.get("table") != name
            or not isinstance(data.get("documents"), dict)
        ):
            raise StoreUnreadable(f"{path} is not a memwork table file; it was left untouched")
        if data.get("version") != expected:
            raise StoreUnreadable(
                f"{path} holds version {data.get('version')} but store.json expects {expected}; "
                "run `memwork doctor`"
            )
        docs: Docs = data["documents"]
        return docs

    # -- committing -------------------------------------------------------------------------
    def commit(self, commit: Commit) -> Manifest:
        """Write every changed table file and ``store.json`` in one journaled step."""
        if self.read_only:
            raise StoreWriteFailed(
                f"the store at {self.path} is read-only for this user ({self.read_only}); "
                "nothing was written"
            )
        head = self._head
        self._refuse_unlisted([n for n in commit.writes if n not in head.tables])
        tables = dict(head.tables)
        files: dict[str, bytes] = {}
        for name, write in commit.writes.items():
            version = tables.get(name, 0) + 1
            committed = tables.get(name)
            before = None
            if not write.replace and write.base is not None and committed is not None:
                before = self._committed_bytes(name)
            files[table_file(name)] = table_bytes(
                name,
                write.docs,
                version,
                before=before,
                before_docs=write.base,
                before_version=committed,
                touched=write.put,
            )
            tables[name] = version
        for name in commit.drops:
            tables.pop(name, None)
        manifest = Manifest(
            schema_version=commit.schema_version or head.schema_version,
            generation=head.generation + 1,
            tables=tables,
        )
        files[MANIFEST_NAME] = manifest.to_bytes()
        journal.commit(self.path, files, [table_file(n) for n in commit.drops], commit.txid)
        self._head = manifest
        commit.generation = manifest.generation
        return manifest

    def _committed_bytes(self, name: str) -> bytes | None:
        """The table's committed file (None when it cannot be read: it is then encoded whole)."""
        try:
            return read_store_file(self.path / table_file(name))
        except StoreUnreadable:
            return None

    def _refuse_unlisted(self, new_tables: list[str]) -> None:
        """Never overwrite a table file that store.json does not name.

        Such a file means the manifest lost its entry (damage, a hand edit): its
        records are still on disk, invisible, and writing the "new" table would
        destroy them.
        """
        for name in new_tables:
            path = self.path / table_file(name)
            try:
                os.lstat(path)
            except FileNotFoundError:
                continue
            try:
                version = load_file(path).get("version", "N")
            except (StoreUnreadable, AttributeError):
                version = "N"
            raise StoreUnreadable(
                f"{path} exists but store.json does not list table {name!r}, so memwork will "
                f"not overwrite it; nothing was written. To keep its records, add "
                f'"{name}": {version} to "tables" in {self.path / MANIFEST_NAME}; to discard '
                f"them, move {path.name} out of the store"
            )

    # -- snapshots (store checkpoints) ------------------------------------------------------
    def snapshot_create(self, key: str, names: list[str]) -> None:
        tables = self._head.tables
        self.snapshots.create(
            key, [(n, tables[n], self.path / table_file(n)) for n in names if n in tables]
        )

    def snapshot_import(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        self.snapshots.create(
            key,
            [
                (name, version, dumps({"documents": docs, "table": name, "version": version}))
                for name, (version, docs) in tables.items()
            ],
        )

    def snapshot_read(self, key: str) -> dict[str, tuple[int, Docs]]:
        return self.snapshots.read(key)

    def snapshot_check(self, key: str) -> None:
        self.snapshots.folder_of(key)

    def snapshot_keys(self) -> list[str]:
        return self.snapshots.keys()

    def snapshot_delete(self, key: str) -> None:
        self.snapshots.delete(key)

    def snapshot_sweep(self, keep: set[str]) -> int:
        return self.snapshots.sweep(keep)
