"""A folder store's snapshots: ``snapshots/<key>/``, the files of store checkpoints.

A snapshot holds independent copies of committed table files (reflinks where the
filesystem offers them, :mod:`core.storage.filecopy`), not hard links: a checkpoint
must survive anything done to the live files. They go into one pack file
(``tables.pack``, each table at a 4 KiB boundary) indexed by ``snapshot.json``: one
file to create and fsync instead of one per table. Snapshots taken before packs hold
one file per table and still read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..base import names
from ..base.errors import InvalidInput, StoreUnreadable
from .atomic import (
    DIR_MODE,
    FILE_MODE,
    atomic_write,
    failed_write,
    fsync_dir,
    fsync_enabled,
)
from .backend import Docs
from .codec import dumps, load_file, loads, read_store_file
from .manifest import is_table_name, table_file
from .table_sums import checksum

SNAPSHOTS = "snapshots"
SNAPSHOT_MANIFEST = "snapshot.json"
SNAPSHOT_PACK = "tables.pack"
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def _rmtree(path: Path, ignore_errors: bool = True) -> None:
    import shutil  # here: shutil loads compression modules no read needs

    shutil.rmtree(path, ignore_errors=ignore_errors)


class SnapshotFiles:
    """The ``snapshots/`` folder of the store at ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _base(self, create: bool = False) -> Path | None:
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

    def folder_of(self, key: str) -> Path | None:
        """The folder of snapshot ``key`` (None when it does not exist).

        ``key`` is a checkpoint id read from the store; it is checked like any name
        that becomes a path, and the folder must be a real one inside ``snapshots/``.
        """
        names.check_id(key, "checkpoint")
        base = self._base()
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

    def create(
        self,
        key: str,
        tables: Iterable[tuple[str, int, str | Path | Callable[[], bytes]]],
        about: dict[str, Any] | None = None,
        sums: dict[str, str] | None = None,
    ) -> None:
        """Write snapshot ``key``: each table (name, version, its committed file, or what
        makes its bytes, called when the table's turn comes) copied into one pack, and
        ``about``, the checkpoint's record, in its index (what lets a restore find it when
        neither the checkpoints table nor ``store.json`` can be read). Each table's
        checksum goes in the index too, checked when the snapshot is read: ``sums`` holds
        those of the copied files (``store.json``'s), the rest are made from their bytes."""
        from .filecopy import aligned, copy_into

        names.check_id(key, "checkpoint")
        try:
            base = self._base(create=True)
        except OSError as exc:
            raise failed_write(exc, f"checkpoint files in {self.folder / SNAPSHOTS}") from None
        assert base is not None
        target = base / key
        try:
            os.mkdir(target, DIR_MODE)
            versions: dict[str, int] = {}
            index: dict[str, list[int]] = {}
            known: dict[str, str] = {}
            fd = os.open(target / SNAPSHOT_PACK, _CREATE, FILE_MODE)
            try:
                offset = 0
                for name, version, source in tables:
                    table_file(name)  # the name rule, as for every table
                    if isinstance(source, (str, Path)):
                        size, _ = copy_into(source, fd, offset)
                        if sums and name in sums:
                            known[name] = sums[name]
                    else:
                        data = source()
                        _pwrite_all(fd, data, offset)
                        size = len(data)
                        known[name] = checksum(data)
                    index[name] = [offset, size]
                    versions[name] = version
                    offset = aligned(offset + size)
                if fsync_enabled():
                    os.fsync(fd)
            finally:
                os.close(fd)
            plan: dict[str, Any] = {"pack": index, "tables": versions}
            if known:
                plan["sums"] = known
            if about is not None:
                plan["checkpoint"] = about
            atomic_write(target / SNAPSHOT_MANIFEST, dumps(plan), "snap")
            fsync_dir(target)
            fsync_dir(base)
        except BaseException as exc:
            # A half-made snapshot goes at once (a full disk must not stay full).
            _rmtree(target, ignore_errors=True)
            if isinstance(exc, OSError):
                raise failed_write(exc, f"checkpoint files in {base}") from None
            raise

    def read(self, key: str, only: set[str] | None = None) -> dict[str, tuple[int, Docs]]:
        """The tables a snapshot holds (``only``: those of them), each with the version it
        was taken at."""
        folder = self.folder_of(key)
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
        wanted = set(tables) if only is None else set(tables) & only
        if "pack" in plan:
            raw = _read_pack(folder, plan["pack"], set(tables), wanted, damaged)
        else:  # snapshots taken before packs: one (hard-linked) file per table
            raw = {name: read_store_file(folder / table_file(name)) for name in wanted}
        sums = plan.get("sums")
        result = {}
        for name, data_bytes in raw.items():
            expected = sums.get(name) if isinstance(sums, dict) else None
            if expected is not None and checksum(data_bytes) != expected:
                raise StoreUnreadable(
                    f"table {name} in checkpoint {key} does not match its checksum (its copy "
                    f"in {folder} changed on disk); the checkpoint cannot be read"
                )
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

    def about(self, key: str) -> dict[str, Any] | None:
        """The checkpoint record snapshot ``key`` keeps in its index (None: none, or it
        cannot be read)."""
        try:
            folder = self.folder_of(key)
            plan = load_file(folder / SNAPSHOT_MANIFEST) if folder is not None else None
        except (StoreUnreadable, InvalidInput):
            return None
        about = plan.get("checkpoint") if isinstance(plan, dict) else None
        if not isinstance(about, dict) or about.get("id") != key:
            return None
        return about

    def delete(self, key: str) -> None:
        """Remove a snapshot's files."""
        folder = self.folder_of(key)
        if folder is not None:
            _rmtree(folder, ignore_errors=True)

    def keys(self) -> list[str]:
        """The snapshot folders on disk (whether a checkpoint names them or not)."""
        base = self._base()
        if base is None:
            return []
        return sorted(e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False))

    def sweep(self, keep: set[str]) -> int:
        """Remove snapshot folders not in ``keep``."""
        removed = 0
        for key in self.keys():
            if key not in keep:
                _rmtree(self.folder / SNAPSHOTS / key, ignore_errors=True)
                removed += 1
        return removed


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def _read_pack(
    folder: Path, index: object, tables: set[str], wanted: set[str], damaged: StoreUnreadable
) -> dict[str, bytes]:
    """The wanted tables' bytes from the pack, read one at a time (a pack can be large)."""
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
            if name in wanted:
                raw[name] = os.pread(fd, span[1], span[0])
        return raw
    finally:
        os.close(fd)
