"""The tables of a Redis store: one hash per table, one JSON value per document.

The same TinyDB storage as a folder store (lazy tables, copy-on-write per
transaction, a manifest of table versions), with a different unit of I/O: a
table is loaded with one ``HGETALL`` and a commit sends only the documents
that changed (each document's encoding is compared with the one it was loaded
with), in one Lua script that also moves the manifest and publishes the new
generation. Checkpoint snapshots are server-side copies of the table hashes,
made by the same script before it writes, so a checkpoint and its record land
together or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import names
from ..errors import StoreError, StoreUnreadable, StoreWriteFailed
from . import redis_scripts as scripts
from .folder_storage import Docs, FolderStorage
from .manifest import Manifest, is_table_name
from .resp import Arg, ConnectionLost, ReplyError

if TYPE_CHECKING:
    from .redis_store import RedisStore

PREFIX = "memwork:"
META = PREFIX + "meta"
TABLES = PREFIX + "tables"
LOCK = PREFIX + "lock"
SNAPS = PREFIX + "snaps"
#: Big tables decode faster with orjson; small ones stay on the stdlib (no import).
ORJSON_FROM_BYTES = 128 * 1024
#: Redis keeps a session's working memory this long past its last key's expiry
#: before it reclaims it (client clocks drift from the server's).
EXPIRY_GRACE_S = 60


def table_key(name: str) -> str:
    """The hash that holds table ``name``."""
    return f"{PREFIX}t:{name}"


def snapshot_key(key: str, name: str | None = None) -> str:
    """The index of snapshot ``key`` (table → version), or the copy of one of its tables."""
    base = f"{PREFIX}snap:{key}"
    return base if name is None else f"{base}:t:{name}"


def encode(doc: dict[str, Any]) -> bytes:
    """One document as stored: compact JSON with sorted keys."""
    import orjson

    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


def decode_pairs(raw: list[bytes], where: str) -> tuple[Docs, dict[str, int]]:
    """An ``HGETALL`` reply as documents, with a digest of each document's bytes."""
    loads: Callable[[bytes], Any] = json.loads
    if sum(len(v) for v in raw[1::2]) >= ORJSON_FROM_BYTES:
        import orjson

        loads = orjson.loads
    docs: Docs = {}
    digests: dict[str, int] = {}
    # In id order, as a folder store's table file keeps them (a hash has no order of
    # its own): whatever iterates a table sees the same sequence on both backends.
    for i in sorted(range(0, len(raw), 2), key=raw.__getitem__):
        doc_id = raw[i].decode("utf-8")
        value = raw[i + 1]
        try:
            doc = loads(value)
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            raise StoreUnreadable(
                f"document {doc_id[:60]!r} of {where} is not a JSON object; it was left untouched"
            )
        docs[doc_id] = doc
        digests[doc_id] = hash(value)
    return docs, digests


def wm_expiry_ms(docs: Docs) -> int:
    """When Redis may reclaim a session's working memory (unix ms; 0: never).

    Only a working memory that holds nothing but keys with a TTL (no task, no
    scratchpad, no checkpoint) goes away by itself, a grace period after its
    last key expires, and only when the writer runs on the real clock: under
    ``MEMWORK_NOW`` (a replay, a test) the store's own clock rule alone decides.
    """
    import os

    from .. import clock

    if os.environ.get(clock.ENV_NOW) or set(docs) != {"state"}:
        return 0
    state = docs["state"]
    kv = state.get("kv") or {}
    if not kv or state.get("task") or state.get("scratchpad"):
        return 0
    stamps = [entry.get("expires_at") for entry in kv.values()]
    if not all(stamps):
        return 0
    latest = max(clock.parse_instant(s) for s in stamps)
    # The clock may be shifted (the demo): turn the store's instant into the wall clock's.
    offset = clock.now() - datetime.now(UTC)
    return int(((latest - offset).timestamp() + EXPIRY_GRACE_S) * 1000)


class RedisStorage(FolderStorage):
    """TinyDB storage whose unit of I/O is one Redis hash per table."""

    def __init__(self, store: RedisStore, manifest: Manifest) -> None:
        super().__init__(Path("."), manifest)
        self.store = store
        self.conn = store.conn
        self.where = store.location
        self._digests: dict[str, dict[str, int]] = {}
        #: Snapshot operations queued by this transaction (they run before its writes).
        self._pending: list[Arg] = []

    @contextmanager
    def _io(self) -> Iterator[None]:
        with self.store.redis_errors():
            yield

    # -- loading ----------------------------------------------------------------------
    def _load(self, name: str) -> Docs:
        if self.manifest.tables.get(name) is None or name in self._dropped:
            raise KeyError(name)
        if not self.lock_held():
            raise RuntimeError("memwork reads must run inside store.reading()")
        if not is_table_name(name):
            raise StoreUnreadable(f"{self.where} names a table {name[:40]!r} that is not valid")
        self.store.lease.still_holding()
        with self._io():
            try:
                raw = self.conn.call("HGETALL", table_key(name))
            except ReplyError as exc:
                if exc.code == "WRONGTYPE":
                    raise StoreUnreadable(
                        f"{table_key(name)} in {self.where} is not a memwork table (not a hash); "
                        "it was left untouched"
                    ) from None
                raise
        docs, digests = decode_pairs(raw, f"table {name} in {self.where}")
        self._clean[name] = docs
        self._digests[name] = digests
        return docs

    def evict(self, name: str) -> None:
        super().evict(name)
        self._digests.pop(name, None)

    def drop(self, name: str) -> None:
        super().drop(name)
        self._digests.pop(name, None)

    # -- committing -------------------------------------------------------------------
    def commit(self, txid: str, *, schema_version: int | None = None) -> bool:
        """Send every changed document, dropped table and snapshot in one atomic script."""
        dirty = self.dirty()
        dropped = sorted(
            n for n in self._dropped if n in self.manifest.tables and n not in self.tables
        )
        replaced = sorted(n for n in self._dropped if n in self.tables)
        if not dirty and not dropped and not self._pending and schema_version is None:
            self._dropped.clear()
            return False
        if self.read_only:
            raise StoreWriteFailed(
                f"the store at {self.where} is read-only ({self.read_only}); nothing was written"
            )
        tables = dict(self.manifest.tables)
        ops: list[Arg] = list(self._pending)
        for name in (*dropped, *replaced):
            ops += ["D", name]
            if name in dropped:
                tables.pop(name, None)
        digests: dict[str, dict[str, int]] = {}
        for name in dirty:
            version = tables.get(name, 0) + 1
            tables[name] = version
            old = self._digests.get(name, {}) if name not in replaced else {}
            expiring = name.startswith("working_memory.")
            if expiring:
                # Redis may have reclaimed this table since it was loaded (see
                # wm_expiry_ms): send every document, not only the changed ones.
                old = {doc_id: -1 for doc_id in old}  # CPython never hashes to -1
            new: dict[str, int] = {}
            sets: list[Arg] = []
            for doc_id, doc in self.tables[name].items():
                value = encode(doc)
                new[doc_id] = digest = hash(value)
                if old.get(doc_id) != digest:
                    sets += [doc_id, value]
            gone = [doc_id for doc_id in old if doc_id not in new]
            ops += ["H", name, version, len(sets) // 2, len(gone), *sets, *gone]
            if expiring:
                ops += ["E", name, wm_expiry_ms(self.tables[name])]
            digests[name] = new
        manifest = Manifest(
            schema_version=schema_version or self.manifest.schema_version,
            generation=self.manifest.generation + 1,
            tables=tables,
        )
        self._run_commit(txid, manifest, ops)
        self.manifest = manifest
        for name in dirty:
            self._clean[name] = self.tables[name]
            self._digests[name] = digests[name]
        self._dropped.clear()
        self._pending = []
        return True

    def _run_commit(self, txid: str, manifest: Manifest, ops: list[Arg]) -> None:
        token = self.store.lease.token
        if token is None:
            raise RuntimeError("a Redis commit must run while the store's lock is held")
        # The outermost hold ends right after this commit: let the script release it.
        release = self.store.releases_after_commit()
        keys: list[Arg] = [LOCK, META, TABLES, SNAPS]
        args: list[Arg] = [
            token,
            txid,
            self.store.channel,
            PREFIX,
            manifest.generation,
            manifest.schema_version,
            "1" if release else "0",
            *ops,
        ]
        try:
            scripts.commit(self.conn, keys, args)
            if release:
                self.store.lease.released_by_commit()
        except ReplyError as exc:
            raise self._refused(exc) from None
        except ConnectionLost as exc:
            # The script may have run before the connection went: the txid it
            # records says whether it did.
            last = self.store.committed_txid()
            if last == txid:
                return
            if last is None:
                raise StoreError(
                    f"lost the connection to Redis at {self.where} during a commit ({exc}); "
                    "the server is not back, so whether this write landed is unknown: "
                    "check with `memwork history` once it is"
                ) from None
            raise StoreError(
                f"lost the connection to Redis at {self.where} during a commit ({exc}); "
                "nothing was written"
            ) from None

    def _refused(self, exc: ReplyError) -> Exception:
        code = exc.code
        if code == "MEMWORK_LEASE_LOST":
            return StoreError(
                f"this process's lease on the lock of {self.where} ran out before it committed "
                "(it was paused or cut off for longer than the lease) and another writer may "
                "have gone on; nothing was written"
            )
        if code == "OOM" or "OOM command not allowed" in str(exc):
            return StoreWriteFailed(
                f"Redis at {self.where} is out of memory (maxmemory reached); nothing was written"
            )
        if code in ("READONLY", "NOPERM", "MISCONF", "NOREPLICAS"):
            return StoreWriteFailed(
                f"Redis at {self.where} refused the write ({exc}); nothing was written"
            )
        return StoreError(f"Redis at {self.where} refused the commit ({exc}); nothing was written")

    def rollback(self) -> None:
        super().rollback()
        self._pending = []

    def _refuse_unlisted(self, new_tables: list[str]) -> None:
        pass  # every key of a table is written by the commit that lists it

    # -- snapshots (store checkpoints) --------------------------------------------------
    def snapshot(self, names_: list[str], key: str) -> None:
        """Copy the committed tables ``names_`` into snapshot ``key`` when this commits."""
        names.check_id(key, "checkpoint")
        self._pending += ["S", key, len(names_), *names_]

    def import_snapshot(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        """Write snapshot ``key`` from given tables (table → (version, docs)) at commit."""
        names.check_id(key, "checkpoint")
        if not tables:
            self._pending += ["S", key, 0]
        for name, (version, docs) in tables.items():
            names.check_file_name(name)
            pairs: list[Arg] = []
            for doc_id, doc in docs.items():
                pairs += [doc_id, encode(doc)]
            self._pending += ["I", key, name, version, len(docs), *pairs]

    def snapshot_tables(self, key: str) -> dict[str, Docs]:
        """The tables snapshot ``key`` holds."""
        return {name: docs for name, (_, docs) in self.snapshot_versions(key).items()}

    def snapshot_versions(self, key: str) -> dict[str, tuple[int, Docs]]:
        """The tables snapshot ``key`` holds, each with the version it was taken at."""
        names.check_id(key, "checkpoint")
        with self._io():
            member, index = self.conn.pipeline(
                [("SISMEMBER", SNAPS, key), ("HGETALL", snapshot_key(key))]
            )
            if isinstance(index, ReplyError) or isinstance(member, ReplyError):
                raise StoreUnreadable(
                    f"the snapshot of checkpoint {key} in {self.where} is damaged"
                )
            if not member:
                raise StoreUnreadable(
                    f"the snapshot of checkpoint {key} is missing from {self.where}"
                )
            versions = {
                index[i].decode("utf-8"): int(index[i + 1]) for i in range(0, len(index), 2)
            }
            replies = self.conn.pipeline([("HGETALL", snapshot_key(key, n)) for n in versions])
        result = {}
        for (name, version), raw in zip(versions.items(), replies, strict=True):
            if isinstance(raw, ReplyError) or not is_table_name(name):
                raise StoreUnreadable(
                    f"table {name[:40]} in checkpoint {key} is damaged; the checkpoint cannot "
                    "be read"
                )
            docs, _ = decode_pairs(raw, f"table {name} of checkpoint {key} in {self.where}")
            result[name] = (version, docs)
        return result

    def delete_snapshot(self, key: str) -> None:
        """Remove a snapshot (inside a transaction: when it commits)."""
        names.check_id(key, "checkpoint")
        if self.in_transaction:
            self._pending += ["X", key]
            return
        # After the transaction that removed its checkpoint: nothing names it any
        # more, so it goes without the lock (a kill here leaves an orphan the next
        # checkpoint command sweeps).
        with self._io():
            index = self.conn.call("HKEYS", snapshot_key(key))
            self.conn.pipeline(
                [
                    *(("DEL", snapshot_key(key, n.decode("utf-8"))) for n in index),
                    ("DEL", snapshot_key(key)),
                    ("SREM", SNAPS, key),
                ]
            )

    def snapshot_folder(self, key: str) -> Path | None:
        names.check_id(key, "checkpoint")
        return None

    def snapshot_keys(self) -> list[str]:
        """Every snapshot in the store (whether a checkpoint names it or not)."""
        with self._io():
            members = self.conn.call("SMEMBERS", SNAPS)
        return sorted(m.decode("utf-8") for m in members)

    def sweep_snapshots(self, keep: set[str]) -> int:
        """Remove, at commit, snapshots no checkpoint names (left by killed deletes)."""
        orphans = [k for k in self.snapshot_keys() if k not in keep]
        for key in orphans:
            if names.is_safe_file_name(key):
                self._pending += ["X", key]
        return len(orphans)
