"""A store in this process's memory (``memory:``): the same tables, transactions and
snapshots with nothing on disk, for tests, previews and scratch work.

Committed documents are kept encoded, one JSON text per document, and decoded on
every read of a table: a value that would not survive JSON fails at commit here as
it would on disk, and nothing a caller does to what it read can reach what is
committed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.errors import StoreUnreadable
from . import schema
from .backend import Backend, Commit, Docs, Refresh
from .codec import dumps_small, loads
from .manifest import Manifest, table_file

Encoded = dict[str, bytes]


class MemoryBackend(Backend):
    """One store in memory; it lives as long as the object does."""

    scheme = "memory"

    def __init__(self) -> None:
        self._head = Manifest(schema_version=schema.SCHEMA_VERSION)
        self._tables: dict[str, Encoded] = {}
        self._snapshots: dict[str, dict[str, tuple[int, Encoded]]] = {}

    @property
    def location(self) -> str:
        return "memory:"

    @property
    def label(self) -> str:
        return "memory"

    @property
    def head(self) -> Manifest:
        return self._head

    def open(self, create: bool) -> Manifest:
        return self._head

    # One process, one store object: the store's own mutex is the whole lock.
    def acquire(self, wait: bool = True, meanwhile: Callable[[], None] | None = None) -> None:
        pass

    def release(self, failed: bool) -> None:
        pass

    def refresh(self) -> Refresh | None:
        return None  # nobody else writes here

    def read_table(self, name: str) -> Docs:
        table = self._tables[name]
        # In id order, as a table file keeps them: a fresh read sees one sequence everywhere.
        return {doc_id: loads(table[doc_id]) for doc_id in sorted(table)}

    def commit(self, commit: Commit) -> Manifest:
        # Everything is encoded before anything changes: a refused value writes nothing.
        encoded = {
            name: {doc_id: dumps_small(doc) for doc_id, doc in write.put.items()}
            for name, write in commit.writes.items()
        }
        for name in commit.writes:
            table_file(name)  # the name rule, as for a folder
        tables = dict(self._head.tables)
        generation = self._head.generation + 1
        for name, write in commit.writes.items():
            table = {} if write.replace else dict(self._tables.get(name, {}))
            table.update(encoded[name])
            for doc_id in write.delete:
                table.pop(doc_id, None)
            self._tables[name] = table
            tables[name] = generation  # a table's version is the commit that last wrote it
        for name in commit.drops:
            self._tables.pop(name, None)
            tables.pop(name, None)
        self._head = Manifest(
            schema_version=commit.schema_version or self._head.schema_version,
            generation=generation,
            tables=tables,
        )
        commit.generation = self._head.generation
        return self._head

    # -- snapshots --------------------------------------------------------------------------
    def snapshot_create(
        self, key: str, names: list[str], about: dict[str, Any] | None = None
    ) -> None:
        self.snapshot_check(key)
        self._snapshots[key] = {
            n: (self._head.tables[n], dict(self._tables[n])) for n in names if n in self._tables
        }

    def snapshot_import(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        self.snapshot_check(key)
        self._snapshots[key] = {
            name: (version, {doc_id: dumps_small(doc) for doc_id, doc in docs.items()})
            for name, (version, docs) in tables.items()
        }

    def snapshot_read(self, key: str) -> dict[str, tuple[int, Docs]]:
        self.snapshot_check(key)
        try:
            snapshot = self._snapshots[key]
        except KeyError:
            raise StoreUnreadable(f"the snapshot of checkpoint {key} is missing") from None
        return {
            name: (version, {doc_id: loads(raw) for doc_id, raw in docs.items()})
            for name, (version, docs) in snapshot.items()
        }

    def snapshot_check(self, key: str) -> None:
        from ..base import names

        names.check_id(key, "checkpoint")

    def snapshot_keys(self) -> list[str]:
        return sorted(self._snapshots)

    def snapshot_delete(self, key: str) -> None:
        self._snapshots.pop(key, None)

    def snapshot_sweep(self, keep: set[str]) -> int:
        gone = [k for k in self._snapshots if k not in keep]
        for key in gone:
            del self._snapshots[key]
        return len(gone)
