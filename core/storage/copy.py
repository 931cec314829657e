"""``memwork copy SRC DST``: a whole store, from any backend to any backend.

Everything a store holds goes: every table (the audit log included) and the
snapshot of every checkpoint, so checkpoints restore on the copy. Nothing is
added (no audit entry: a copy is the same memory somewhere else), so
``memwork export`` of the copy is byte-identical to the source's.

All or nothing, and never over existing data:

* a folder target must not exist or be an empty folder; the copy is built in a
  hidden folder beside it (``.<name>.copy-<random>``) and renamed into place
  in one step, so the target holds the whole copy or nothing;
* a Redis target must be an empty database; the copy is one commit (one Lua
  script), so the database holds the whole copy or nothing.

Anything else is refused with the store untouched: memwork never merges two
stores (``memwork export`` and ``memwork import`` add one's records to another).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from ..base.errors import Conflict, InvalidInput, StoreUnreadable
from .backend import Docs
from .store import Store
from .url import FILE, MEMORY, REDIS, Location, parse, parse_location

Snapshots = dict[str, dict[str, tuple[int, Docs]]]


def read_whole(store: Store) -> tuple[dict[str, Docs], Snapshots]:
    """Every table and every checkpoint's snapshot, in one consistent read."""
    with store.reading():
        tables = {name: dict(store.docs(name)) for name in store.table_names()}
        snapshots = {
            key: store.backend.snapshot_read(key) for key in sorted(tables.get("checkpoints", {}))
        }
    return tables, snapshots


def copy_store(source: Path | str, target: Path | str) -> dict[str, Any]:
    """Copy the store at ``source`` into ``target`` (a new folder or an empty database)."""
    src_at, dst_at = parse_location(source, "SRC"), parse_location(target, "DST")
    if _same(src_at, dst_at):
        raise InvalidInput("DST", "is the same store as SRC")
    if dst_at.scheme == MEMORY:
        raise InvalidInput("DST", "memory: lives only as long as this command; copy to a folder")
    src = Store(src_at, create=False)
    try:
        tables, snapshots = read_whole(src)
    finally:
        src.close()
    if dst_at.scheme == REDIS:
        _into_redis(dst_at.url, tables, snapshots)
        shown = dst_at.url
    else:
        shown = str(_into_folder(dst_at.path(), tables, snapshots))
    return {
        "source": src.location,
        "target": shown,
        "tables": len(tables),
        "documents": sum(len(d) for d in tables.values()),
        "checkpoints": len(snapshots),
    }


def _same(source: Location, target: Location) -> bool:
    if source.scheme != target.scheme:
        return False
    if source.scheme == REDIS:
        a, b = parse(source.url, "SRC"), parse(target.url, "DST")
        return (a.host, a.port, a.db) == (b.host, b.port, b.db)
    if source.scheme == FILE:
        return source.path().absolute() == target.path().absolute()
    return False


def fill(store: Store, tables: dict[str, Docs], snapshots: Snapshots) -> None:
    """Write every table and snapshot into a new, empty store in one transaction."""
    with store.transaction():
        for name, docs in tables.items():
            store.put_many(name, docs)
            if not docs:  # an empty table still exists
                store.create_table(name)
        for key, snapshot in snapshots.items():
            store.backend.snapshot_import(key, snapshot)


def _into_redis(url: str, tables: dict[str, Docs], snapshots: Snapshots) -> None:
    """Create the store in the empty database ``url`` by one commit: header, tables and
    snapshots land together, or nothing does."""
    from .redis_backend import RedisBackend

    store = Store.over(RedisBackend(url, deferred=True))
    try:
        fill(store, tables, snapshots)
    finally:
        store.close()


def _into_folder(target: Path, tables: dict[str, Docs], snapshots: Snapshots) -> Path:
    target = target.expanduser().absolute()
    _check_empty_folder(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.copy-{os.urandom(4).hex()}"
    try:
        fill(Store(staging), tables, snapshots)
        lock = staging / ".lock"
        if lock.exists():
            lock.unlink()
        try:
            # rename() replaces an empty folder and refuses a non-empty one: the
            # target can only ever hold the whole copy.
            os.rename(staging, target)
        except OSError as exc:
            raise Conflict(
                f"DST: {target} changed while copying ({exc.strerror}); nothing was copied"
            ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _check_empty_folder(target: Path) -> None:
    try:
        entries = os.listdir(target)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise StoreUnreadable(f"DST: {target} is a file; copy into a new folder") from None
    except OSError as exc:
        raise StoreUnreadable(f"DST: cannot use {target}: {exc.strerror}") from None
    if entries:
        what = "a memwork store" if "store.json" in entries else "files"
        raise Conflict(
            f"DST: {target} already holds {what}; memwork copies only into a new or empty "
            "folder (to add records to a store, use export and import); nothing was copied"
        )
