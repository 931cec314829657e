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
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

from .. import names
from ..errors import InvalidInput, StoreUnreadable, StoreWriteFailed
from . import journal
from .atomic import (
    DIR_MODE,
    FILE_MODE,
    atomic_write,
    failed_write,
    fsync_dir,
    fsync_enabled,
)
from .codec import dumps, load_file, loads, read_store_file, table_bytes
from .manifest import MANIFEST_NAME, Manifest, is_table_name

Docs = dict[str, dict[str, Any]]
SNAPSHOTS = "snapshots"
#: Where ``memwork search`` keeps the prepared text of big tables (core/search_corpus.py),
#: one ``<table>.txt`` each, and which tables it keeps there.
SEARCH_CACHE = ("cache", "search")
SEARCH_CACHED = ("episodes.", "rules.", "observations.")
SNAPSHOT_MANIFEST = "snapshot.json"
SNAPSHOT_PACK = "tables.pack"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def table_file(name: str) -> str:
    """The file that holds table ``name``.

    Every table name passes here before it becomes a path, so this is the last
    guard against a name that would lead outside the store folder.
    """
    if not is_table_name(name):
        raise InvalidInput("table", f"{names.FILE_NAME_RULE} (got {name[:40]!r})")
    return f"{name}.json"


class TableMap(dict[str, Docs]):
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
        # Ids written since a table was loaded or committed: a commit keeps the file's
        # bytes for the other documents that are still the very objects it read
        # (see codec.table_bytes).
        self._touched: dict[str, set[str]] = {}
        # TinyDB's own writes edit documents in place: those tables are encoded whole.
        self._whole: set[str] = set()
        self.in_transaction = False
        self.lock_held: Callable[[], bool] = lambda: True
        #: Why this process may not write the store (None: it may); set by the store.
        self.read_only: str | None = None

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
        self._whole.update(name for name, docs in data.items() if self._clean.get(name) is not docs)

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
        docs: Docs = data["documents"]
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
        self._touched.pop(name, None)

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
        self._touched.setdefault(name, set()).update(docs)

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
        if self.read_only:
            raise StoreWriteFailed(
                f"the store at {self.folder} is read-only for this user ({self.read_only}); "
                "nothing was written"
            )
        self._refuse_unlisted([n for n in dirty if n not in self.manifest.tables])
        tables = dict(self.manifest.tables)
        files: dict[str, bytes] = {}
        for name in dirty:
            version = tables.get(name, 0) + 1
            files[table_file(name)] = self._table_bytes(name, version, tables.get(name))
            tables[name] = version
        for name in dropped:
            tables.pop(name, None)
        manifest = Manifest(
            schema_version=schema_version or self.manifest.schema_version,
            generation=self.manifest.generation + 1,
            tables=tables,
        )
        files[MANIFEST_NAME] = manifest.to_bytes()
        self._write_files(files, [table_file(n) for n in dropped], txid)
        self._forget_search_text([*dirty, *dropped])
        self.manifest = manifest
        for name in dirty:
            self._clean[name] = self.tables[name]
        self._dropped.clear()
        self._touched.clear()
        self._whole.clear()
        return True

    def _forget_search_text(self, changed: list[str]) -> None:
        """Remove the search cache's copy of tables a commit changed or dropped.

        A cached file was only ever valid for the table file it was made from; once that
        file changes, the copy would keep text the store no longer holds (an observation
        forgotten, a table a restore replaced) until the next search of that table.
        """
        folder = self.folder.joinpath(*SEARCH_CACHE)
        for name in changed:
            if name.startswith(SEARCH_CACHED):
                try:
                    os.unlink(folder / f"{name}.txt")
                except OSError:
                    pass  # none was made (the common case), or a read-only folder

    def _table_bytes(self, name: str, version: int, committed: int | None) -> bytes:
        """The new file of a changed table, keeping the bytes of its unchanged documents."""
        before_docs = self._clean.get(name)
        before = None
        if before_docs is not None and committed is not None and name not in self._whole:
            before = self._committed_bytes(name)
        return table_bytes(
            name,
            self.tables[name],
            version,
            before=before,
            before_docs=before_docs,
            before_version=committed,
            touched=self._touched.get(name, ()),
        )

    def _committed_bytes(self, name: str) -> bytes | None:
        """The table's committed file (None when it cannot be read: it is then encoded whole)."""
        try:
            return read_store_file(self.folder / table_file(name))
        except StoreUnreadable:
            return None

    def _refuse_unlisted(self, new_tables: list[str]) -> None:
        """Never overwrite a table file that store.json does not name.

        Such a file means the manifest lost its entry (damage, a hand edit): its
        records are still on disk, invisible, and writing the "new" table would
        destroy them.
        """
        for name in new_tables:
            path = self.folder / table_file(name)
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
                f'"{name}": {version} to "tables" in {self.folder / MANIFEST_NAME}; to discard '
                f"them, move {path.name} out of the store"
            )

    # -- snapshots (store checkpoints) ---------------------------------------------------
    def _snapshots(self, create: bool = False) -> Path | None:
        """``snapshots/``, a real folder inside the store (None when absent)."""
        base = self.folder / SNAPSHOTS
        try:
            mode = os.lstat(base).st_mode
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(base, DIR_MODE)
            return base
        if not stat.S_ISDIR(mode):
            what = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
            raise StoreUnreadable(
                f"{base} is {what}; memwork keeps checkpoints only in a real folder inside "
                "the store (move it away); nothing was changed"
            )
        return base

    def snapshot_folder(self, key: str) -> Path | None:
        """The folder of snapshot ``key`` (None when it does not exist).

        ``key`` is a checkpoint id read from the store; it is checked like any
        name that becomes a path, and the folder must be a real one inside
        ``snapshots/``.
        """
        names.check_id(key, "checkpoint")
        base = self._snapshots()
        if base is None:
            return None
        folder = base / key
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(mode) or not names.inside(base, folder):
            raise StoreUnreadable(f"{folder} is not a snapshot folder; nothing was changed")
        return folder

    def snapshot(self, names_: list[str], key: str) -> None:
        """Copy the committed files of ``names_`` into ``snapshots/<key>``.

        Independent copies (reflinks where the filesystem offers them), not
        hard links: a checkpoint must survive anything done to the live files.
        They go into one pack file (``tables.pack``, each table at a 4 KiB
        boundary) indexed by ``snapshot.json``: one file to create and fsync
        instead of one per table.
        """
        from .filecopy import aligned, copy_into

        names.check_id(key, "checkpoint")
        try:
            base = self._snapshots(create=True)
        except OSError as exc:
            raise failed_write(exc, f"checkpoint files in {self.folder / SNAPSHOTS}") from None
        assert base is not None
        target = base / key
        try:
            os.mkdir(target, DIR_MODE)
            versions: dict[str, int] = {}
            index: dict[str, list[int]] = {}
            fd = os.open(target / SNAPSHOT_PACK, _CREATE, FILE_MODE)
            try:
                offset = 0
                for name in names_:
                    if name not in self.manifest.tables:
                        continue
                    size, _ = copy_into(self.folder / table_file(name), fd, offset)
                    index[name] = [offset, size]
                    versions[name] = self.manifest.tables[name]
                    offset = aligned(offset + size)
                if fsync_enabled():
                    os.fsync(fd)
            finally:
                os.close(fd)
            plan = {"pack": index, "tables": versions}
            atomic_write(target / SNAPSHOT_MANIFEST, dumps(plan), "snap")
            fsync_dir(target)
            fsync_dir(base)
        except BaseException as exc:
            # A half-made snapshot goes at once (a full disk must not stay full).
            import shutil

            shutil.rmtree(target, ignore_errors=True)
            if isinstance(exc, OSError):
                raise failed_write(exc, f"checkpoint files in {base}") from None
            raise

    def import_snapshot(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        """Write snapshot ``key`` from given tables (table → (version, docs)): a copied
        store's checkpoints, packed like :meth:`snapshot` packs them."""
        from .filecopy import aligned

        names.check_id(key, "checkpoint")
        base = self._snapshots(create=True)
        assert base is not None
        target = base / key
        try:
            os.mkdir(target, DIR_MODE)
            index: dict[str, list[int]] = {}
            versions: dict[str, int] = {}
            fd = os.open(target / SNAPSHOT_PACK, _CREATE, FILE_MODE)
            try:
                offset = 0
                for name, (version, docs) in tables.items():
                    table_file(name)  # the name rule, as for every table
                    data = dumps({"documents": docs, "table": name, "version": version})
                    os.pwrite(fd, data, offset)
                    index[name] = [offset, len(data)]
                    versions[name] = version
                    offset = aligned(offset + len(data))
                if fsync_enabled():
                    os.fsync(fd)
            finally:
                os.close(fd)
            atomic_write(
                target / SNAPSHOT_MANIFEST, dumps({"pack": index, "tables": versions}), "snap"
            )
            fsync_dir(target)
            fsync_dir(base)
        except BaseException as exc:
            import shutil

            shutil.rmtree(target, ignore_errors=True)
            if isinstance(exc, OSError):
                raise failed_write(exc, f"checkpoint files in {base}") from None
            raise

    def snapshot_tables(self, key: str) -> dict[str, Docs]:
        """The tables a snapshot holds (a pack, or one file per table in older stores)."""
        return {name: docs for name, (_, docs) in self.snapshot_versions(key).items()}

    def snapshot_versions(self, key: str) -> dict[str, tuple[int, Docs]]:
        """The tables a snapshot holds, each with the version it was taken at."""
        folder = self.snapshot_folder(key)
        if folder is None:
            raise StoreUnreadable(
                f"the files of checkpoint {key} are missing from {self.folder / SNAPSHOTS}"
            )
        plan = load_file(folder / SNAPSHOT_MANIFEST)
        damaged = StoreUnreadable(
            f"{folder / SNAPSHOT_MANIFEST} is damaged; the checkpoint cannot be read"
        )
        tables = plan.get("tables") if isinstance(plan, dict) else None
        if not isinstance(tables, dict) or not all(is_table_name(n) for n in tables):
            raise damaged
        if "pack" in plan:
            raw = self._read_pack(folder, plan["pack"], set(tables), damaged)
        else:  # snapshots taken before packs: one (hard-linked) file per table
            raw = {name: read_store_file(folder / table_file(name)) for name in tables}
        result = {}
        for name, data_bytes in raw.items():
            try:
                data = loads(data_bytes)
            except ValueError:
                data = None
            if not isinstance(data, dict) or not isinstance(data.get("documents"), dict):
                raise StoreUnreadable(
                    f"table {name} in checkpoint {key} is damaged; the checkpoint cannot be read"
                )
            version = tables[name] if type(tables[name]) is int else 0
            result[name] = (version, data["documents"])
        return result

    def _read_pack(
        self, folder: Path, index: object, tables: set[str], damaged: StoreUnreadable
    ) -> dict[str, bytes]:
        """Each table's bytes from the pack, read one at a time (a pack can be large)."""
        if not isinstance(index, dict) or set(index) != tables:
            raise damaged
        path = folder / SNAPSHOT_PACK
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError as exc:
            raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise StoreUnreadable(f"{path} is not a regular file")
            raw = {}
            for name, span in index.items():
                if not (
                    isinstance(span, list)
                    and len(span) == 2
                    and all(type(x) is int and x >= 0 for x in span)
                    and span[0] + span[1] <= st.st_size
                ):
                    raise damaged
                raw[name] = os.pread(fd, span[1], span[0])
            return raw
        finally:
            os.close(fd)

    def delete_snapshot(self, key: str) -> None:
        """Remove a snapshot's files."""
        import shutil

        folder = self.snapshot_folder(key)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    def snapshot_keys(self) -> list[str]:
        """The snapshot folders on disk (whether a checkpoint names them or not)."""
        base = self._snapshots()
        if base is None:
            return []
        return sorted(e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False))

    def sweep_snapshots(self, keep: set[str]) -> int:
        """Remove snapshot folders no checkpoint names (left by killed checkpoint commands)."""
        import shutil

        removed = 0
        for key in self.snapshot_keys():
            if key not in keep:
                shutil.rmtree(self.folder / SNAPSHOTS / key, ignore_errors=True)
                removed += 1
        return removed

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
        self._touched.clear()
        self._whole.clear()


class MemoryTableStorage(FolderStorage):
    """The same tables and transactions with nothing on disk, for fast tests.

    Committed bytes live in a dict of file name → bytes; tables are stored
    encoded, so a value that would not survive JSON fails here too, and a
    rolled-back transaction cannot leak into what is committed.
    """

    def __init__(self) -> None:
        super().__init__(Path("<memory>"), Manifest(schema_version=0))
        #: The committed files, file name → bytes (replaced whole by each commit).
        self.files: dict[str, bytes] = {}
        self._commit_files({})
        self.snapshots: dict[str, dict[str, bytes]] = {}

    def _committed(self) -> dict[str, bytes]:
        """The committed files, file name → bytes."""
        return self.files

    def _forget_search_text(self, changed: list[str]) -> None:
        """Nothing on disk to forget."""

    def _commit_files(self, files: dict[str, bytes]) -> None:
        self.files = files

    def read_manifest(self) -> Manifest:
        """The committed manifest."""
        raw = self._committed().get(MANIFEST_NAME)
        if raw is None:
            return self.manifest
        return Manifest(**{k: v for k, v in loads(raw).items() if k != "format"})

    def _read_table_file(self, path: Path) -> Any:
        return loads(self._committed()[path.name])

    def _committed_bytes(self, name: str) -> bytes | None:
        return self._committed().get(table_file(name))

    def snapshot(self, names_: list[str], key: str) -> None:
        names.check_id(key, "checkpoint")
        committed = self._committed()
        self.snapshots[key] = {
            n: committed[table_file(n)] for n in names_ if table_file(n) in committed
        }

    def snapshot_versions(self, key: str) -> dict[str, tuple[int, Docs]]:
        names.check_id(key, "checkpoint")
        return {
            name: (loads(raw)["version"], loads(raw)["documents"])
            for name, raw in self.snapshots[key].items()
        }

    def snapshot_tables(self, key: str) -> dict[str, Docs]:
        names.check_id(key, "checkpoint")
        return {name: loads(raw)["documents"] for name, raw in self.snapshots[key].items()}

    def import_snapshot(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        names.check_id(key, "checkpoint")
        self.snapshots[key] = {
            n: dumps({"documents": d, "table": n, "version": v}) for n, (v, d) in tables.items()
        }

    def delete_snapshot(self, key: str) -> None:
        self.snapshots.pop(key, None)

    def snapshot_folder(self, key: str) -> Path | None:
        names.check_id(key, "checkpoint")
        return None

    def snapshot_keys(self) -> list[str]:
        return sorted(self.snapshots)

    def sweep_snapshots(self, keep: set[str]) -> int:
        gone = [k for k in self.snapshots if k not in keep]
        for key in gone:
            del self.snapshots[key]
        return len(gone)

    def _refuse_unlisted(self, new_tables: list[str]) -> None:
        pass

    def _write_files(self, files: dict[str, bytes], deletes: list[str], txid: str) -> None:
        committed = dict(self._committed())
        committed.update(files)
        for name in deletes:
            committed.pop(name, None)
        self._commit_files(committed)
