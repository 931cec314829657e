"""A TinyDB ``Storage`` over a folder with one JSON file per table.

TinyDB hands a storage the whole database on every write. Here ``read()``
returns a lazy mapping that parses a table file only when a table is first
touched, and a commit writes back only the tables whose dict object TinyDB
replaced, so a write costs the size of the table it changes, not the store.
Writes are buffered until :meth:`FolderStorage.commit`, which the store calls
while it holds the inter-process lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from core.errors import StoreUnreadable
from core.storage import journal
from core.storage.atomic import atomic_write
from core.storage.codec import dumps, load_file, loads
from core.storage.manifest import MANIFEST_NAME, Manifest

Docs = dict[str, dict[str, Any]]
SNAPSHOTS = "snapshots"
SNAPSHOT_MANIFEST = "snapshot.json"


def table_file(name: str) -> str:
    """The file that holds table ``name``."""
    return f"{name}.json"


class TableMap(dict):
    """Loaded tables; a missing key is loaded from its file on first access."""

    def __init__(self, loader: Callable[[str], Docs]) -> None:
        super().__init__()
        self._loader = loader

    def __missing__(self, name: str) -> Docs:
        docs = self._loader(name)  # raises KeyError when the table does not exist
        self[name] = docs
        return docs


class FolderStorage(Storage):
    """TinyDB storage whose unit of I/O is one table file."""

    def __init__(self, folder: Path, manifest: Manifest) -> None:
        self.folder = folder
        self.manifest = manifest
        self.tables = TableMap(self._load)
        # The dict object each table had when it was loaded or last committed;
        # TinyDB swaps in a new dict for a table it changes, so identity marks dirt.
        self._clean: dict[str, Docs] = {}
        self._dropped: set[str] = set()
        self.in_transaction = False
        self.lock_held: Callable[[], bool] = lambda: True

    # -- TinyDB's Storage interface -------------------------------------------------
    def read(self) -> dict[str, Docs]:
        return self.tables

    def write(self, data: dict[str, Docs]) -> None:
        if not self.in_transaction:
            raise RuntimeError("memwork writes must run inside store.transaction()")
        if data is not self.tables:
            # drop_tables() hands us a fresh dict: adopt it table by table.
            for name in list(self.tables):
                if name not in data:
                    self.drop(name)
            self.tables.update(data)

    def close(self) -> None:
        pass

    # -- loading and freshness ------------------------------------------------------
    def _load(self, name: str) -> Docs:
        expected = self.manifest.tables.get(name)
        if expected is None or name in self._dropped:
            raise KeyError(name)
        if not self.lock_held():
            raise RuntimeError("memwork reads must run inside store.reading()")
        path = self.folder / table_file(name)
        data = self._read_table_file(path)
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
        docs = data["documents"]
        self._clean[name] = docs
        return docs

    def refresh(self, manifest: Manifest) -> bool:
        """Adopt the manifest on disk; forget cached tables another process replaced."""
        if manifest.generation == self.manifest.generation and manifest.tables == (
            self.manifest.tables
        ):
            return False
        for name in list(self.tables):
            if manifest.tables.get(name) != self.manifest.tables.get(name) or (
                name not in manifest.tables
            ):
                self.evict(name)
        self.manifest = manifest
        return True

    def evict(self, name: str) -> None:
        """Forget a cached table so the next access reads its file again."""
        self.tables.pop(name, None)
        self._clean.pop(name, None)

    def loaded(self, name: str) -> bool:
        """Whether table ``name`` is in memory."""
        return name in self.tables

    def has(self, name: str) -> bool:
        """Whether table ``name`` exists, including one created in this transaction."""
        if name in self.tables:
            return True
        return name in self.manifest.tables and name not in self._dropped

    def names(self) -> list[str]:
        """Every table the store holds, including ones created in this transaction."""
        gone = self._dropped - set(self.tables)
        return sorted((set(self.manifest.tables) | set(self.tables)) - gone)

    # -- direct writes ----------------------------------------------------------------
    def _writable(self, name: str) -> Docs:
        """The table's dict, copied once per transaction so the committed one stays intact."""
        if not self.in_transaction:
            raise RuntimeError("memwork writes must run inside store.transaction()")
        try:
            docs = self.tables[name]
        except KeyError:
            docs = {}
            self.tables[name] = docs
            return docs
        if self._clean.get(name) is docs:
            docs = dict(docs)
            self.tables[name] = docs
        return docs

    def put_docs(self, name: str, docs: dict[str, dict[str, Any]]) -> None:
        """Insert or replace whole documents.

        TinyDB's own update path rebuilds the whole table dict twice per call;
        this copies it once per transaction, so a batch of writes stays linear.
        """
        self._writable(name).update(docs)

    def delete_docs(self, name: str, ids: list[str]) -> None:
        """Remove documents by id."""
        table = self._writable(name)
        for doc_id in ids:
            table.pop(doc_id, None)

    # -- transactions ---------------------------------------------------------------
    def drop(self, name: str) -> None:
        """Delete a whole table at the next commit."""
        self.tables.pop(name, None)
        self._dropped.add(name)

    def dirty(self) -> list[str]:
        """Tables changed since they were loaded or last committed."""
        return sorted(
            name for name, docs in self.tables.items() if self._clean.get(name) is not docs
        )

    def commit(self, txid: str, *, schema_version: int | None = None) -> bool:
        """Write every changed table and the manifest in one atomic step."""
        dirty = self.dirty()
        # A table dropped and then written again in one transaction is replaced, not gone.
        dropped = sorted(
            n for n in self._dropped if n in self.manifest.tables and n not in self.tables
        )
        if not dirty and not dropped and schema_version is None:
            self._dropped.clear()
            return False
        tables = dict(self.manifest.tables)
        files: dict[str, bytes] = {}
        for name in dirty:
            version = tables.get(name, 0) + 1
            tables[name] = version
            files[table_file(name)] = dumps(
                {"documents": self.tables[name], "table": name, "version": version}
            )
        for name in dropped:
            tables.pop(name, None)
        manifest = Manifest(
            schema_version=schema_version or self.manifest.schema_version,
            generation=self.manifest.generation + 1,
            tables=tables,
        )
        files[MANIFEST_NAME] = manifest.to_bytes()
        self._write_files(files, [table_file(n) for n in dropped], txid)
        self.manifest = manifest
        for name in dirty:
            self._clean[name] = self.tables[name]
        self._dropped.clear()
        return True

    # -- snapshots (store checkpoints) ---------------------------------------------------
    def snapshot(self, names: list[str], key: str) -> None:
        """Keep the committed files of ``names`` under ``snapshots/<key>``.

        Commits replace files by rename and never write into one, so a hard
        link is a cheap, exact copy; a copy is the fallback where links fail.
        """
        target = self.folder / SNAPSHOTS / key
        target.mkdir(parents=True)
        versions = {}
        for name in names:
            if name not in self.manifest.tables:
                continue
            source = self.folder / table_file(name)
            try:
                os.link(source, target / table_file(name))
            except OSError:
                import shutil

                shutil.copy2(source, target / table_file(name))
            versions[name] = self.manifest.tables[name]
        atomic_write(target / SNAPSHOT_MANIFEST, dumps({"tables": versions}), "snap")

    def snapshot_tables(self, key: str) -> dict[str, Docs]:
        """The tables a snapshot holds."""
        folder = self.folder / SNAPSHOTS / key
        plan = load_file(folder / SNAPSHOT_MANIFEST)
        result = {}
        for name in plan["tables"]:
            data = self._read_table_file(folder / table_file(name))
            result[name] = data["documents"]
        return result

    def delete_snapshot(self, key: str) -> None:
        """Remove a snapshot's files."""
        import shutil

        shutil.rmtree(self.folder / SNAPSHOTS / key, ignore_errors=True)

    # -- file I/O (the memory variant overrides these) ---------------------------------
    def _read_table_file(self, path: Path) -> Any:
        return load_file(path)

    def _write_files(self, files: dict[str, bytes], deletes: list[str], txid: str) -> None:
        journal.commit(self.folder, files, deletes, txid)

    def rollback(self) -> None:
        """Forget uncommitted changes; the files on disk were never touched."""
        # A changed table is evicted whole (TinyDB edits documents in place, so
        # no in-memory copy can be trusted) and read again from its file.
        for name in self.dirty():
            self.evict(name)
        for name in list(self._dropped):
            self.evict(name)
        self._dropped.clear()


class MemoryTableStorage(FolderStorage):
    """The same tables and transactions with nothing on disk, for fast tests.

    Committed bytes live in TinyDB's own ``MemoryStorage``; tables are stored
    encoded, so a value that would not survive JSON fails here too, and a
    rolled-back transaction cannot leak into what is committed.
    """

    def __init__(self) -> None:
        from tinydb.storages import MemoryStorage

        super().__init__(Path("<memory>"), Manifest(schema_version=0))
        self.files = MemoryStorage()
        self.files.write({})
        self.snapshots: dict[str, dict[str, bytes]] = {}

    def read_manifest(self) -> Manifest:
        """The committed manifest."""
        raw = (self.files.read() or {}).get(MANIFEST_NAME)
        if raw is None:
            return self.manifest
        return Manifest(**{k: v for k, v in loads(raw).items() if k != "format"})

    def _read_table_file(self, path: Path) -> Any:
        return loads((self.files.read() or {})[path.name])

    def snapshot(self, names: list[str], key: str) -> None:
        committed = self.files.read() or {}
        self.snapshots[key] = {
            n: committed[table_file(n)] for n in names if table_file(n) in committed
        }

    def snapshot_tables(self, key: str) -> dict[str, Docs]:
        return {name: loads(raw)["documents"] for name, raw in self.snapshots[key].items()}

    def delete_snapshot(self, key: str) -> None:
        self.snapshots.pop(key, None)

    def _write_files(self, files: dict[str, bytes], deletes: list[str], txid: str) -> None:
        committed = dict(self.files.read() or {})
        committed.update(files)
        for name in deletes:
            committed.pop(name, None)
        self.files.write(committed)
