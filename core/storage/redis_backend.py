"""A memwork store in a Redis database: ``--db redis://host:port/N``.

The same store as a folder (the same reads, transactions and guarantees, so every
verb, the workbench and the Python API work on it unchanged), on three Redis
mechanisms:

* the lock is a lease with a fencing token (:mod:`core.storage.redis_lease`),
  held across every read and read-modify-write;
* a commit is one Lua script (:mod:`core.storage.redis_scripts`): all of a
  transaction's writes land together or none does, and with the server's AOF on
  ``appendfsync always`` an acknowledged commit survives a crash;
* every commit publishes the new generation on ``memwork:commits:<db>``, so the
  workbench follows other writers without polling (:meth:`RedisBackend.follow`).

A table is one hash (:mod:`core.storage.redis_keys`), loaded with one ``HGETALL``;
a commit sends the documents it put and the ids it deleted. Checkpoint snapshots are
server-side copies of the table hashes, made by the commit script before it writes,
so a checkpoint and its record land together or not at all.

A store owns its database: every key starts with ``memwork:``, and a store is never
created in a database that holds anything else.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..base import names
from ..base.errors import (
    Conflict,
    InvalidInput,
    NoStore,
    StoreError,
    StoreTooNew,
    StoreUnreachable,
    StoreUnreadable,
    StoreWriteFailed,
    UserError,
)
from . import redis_scripts as scripts
from . import schema
from .backend import Backend, Commit, Docs, Refresh
from .lock import LockTimeout, lock_timeout
from .manifest import FORMAT, Manifest, is_table_name
from .redis_keys import (
    BACKUP_PREFIX,
    DAMAGED_PREFIX,
    LOCK,
    META,
    PREFIX,
    SNAPS,
    TABLES,
    decode_pairs,
    encode,
    snapshot_key,
    table_key,
    wm_expiry_ms,
)
from .redis_lease import Lease, lease_seconds
from .resp import Arg, Connection, ConnectionLost, ReplyError
from .url import StoreURL, parse

#: How many foreign keys a refusal names.
FOREIGN_SAMPLE = 3


def _pairs(flat: list[bytes] | None) -> dict[str, bytes]:
    flat = flat or []
    return {flat[i].decode("utf-8", "replace"): flat[i + 1] for i in range(0, len(flat), 2)}


def reply_error(url: StoreURL, exc: ReplyError) -> Exception:
    """What an error reply of the server means for memwork, as the exception to raise."""
    location = url.display
    text = str(exc)
    if exc.code in ("WRONGPASS", "NOAUTH") or "invalid password" in text:
        if exc.code == "NOAUTH" or url.password is None:
            return StoreUnreadable(
                f"Redis at {location} needs a password: put it in the URL "
                "(redis://:PASSWORD@host:port/db) or in MEMWORK_REDIS_PASSWORD; "
                "nothing was written"
            )
        return StoreUnreadable(
            f"Redis at {location} refused the password ({text}); nothing was written"
        )
    if "without any password configured" in text:
        return StoreUnreadable(
            f"Redis at {location} has no password set, but one was given; nothing was written"
        )
    if "DB index is out of range" in text:
        return InvalidInput("--db", f"Redis at {location} has no database {url.db} ({text})")
    if exc.code in ("NOPERM", "READONLY", "OOM", "MISCONF"):
        return StoreWriteFailed(
            f"Redis at {location} refused memwork ({text}); nothing was written"
        )
    return StoreError(f"Redis at {location} answered an error: {text}")


class RedisBackend(Backend):
    """The store in Redis database ``url`` (``deferred``: a store created by its first
    commit, a copy's target, in a database that must be empty)."""

    scheme = "redis"

    def __init__(self, url: str | StoreURL, *, deferred: bool = False) -> None:
        self.url = url if isinstance(url, StoreURL) else parse(url)
        self._deferred = deferred
        self._opening = True
        self.conn = Connection(self.url)
        self.lease = Lease(self.conn, (LOCK, META, TABLES), lease_seconds(), lock_timeout())
        self._head = Manifest(schema_version=schema.SCHEMA_VERSION)
        self._fresh: list[Any] | None = None
        self._generation_at_lock = -1
        self._committed = False
        self._followers: list[_Follower] = []
        #: Snapshot operations queued for the next commit (they run before its writes).
        self._pending: list[Arg] = []

    # -- what callers see -------------------------------------------------------------------
    @property
    def location(self) -> str:
        """The store's URL (without its password)."""
        return self.url.display

    @property
    def label(self) -> str:
        """A short name for titles: ``host:port/db``."""
        return f"{self.url.host}:{self.url.port}/{self.url.db}"

    @property
    def head(self) -> Manifest:
        return self._head

    @property
    def channel(self) -> str:
        """The pub/sub channel every commit announces its generation on."""
        return f"{PREFIX}commits:{self.url.db}"

    # -- errors -----------------------------------------------------------------------------
    @contextmanager
    def redis_errors(self) -> Iterator[None]:
        """Turn connection failures and refusals into one-line store errors."""
        try:
            yield
        except ConnectionLost as exc:
            if self._opening:
                raise StoreUnreachable(
                    f"cannot reach Redis at {self.location}: {exc} (is the server running?); "
                    "nothing was written"
                ) from None
            raise StoreUnreachable(
                f"lost the connection to Redis at {self.location}: {exc}; nothing more was written"
            ) from None
        except ReplyError as exc:
            raise self._reply_error(exc) from None

    def _reply_error(self, exc: ReplyError) -> Exception:
        return reply_error(self.url, exc)

    # -- opening ----------------------------------------------------------------------------
    def open(self, create: bool) -> Manifest:
        try:
            return self._open(create)
        finally:
            self._opening = False

    def _open(self, create: bool) -> Manifest:
        with self.redis_errors():
            (reply,) = self.conn.connect(then=[("HGETALL", META)])  # one round trip
            if isinstance(reply, ReplyError):
                raise reply
            meta = _pairs(reply)
        if meta and self._deferred:
            raise self._not_empty()
        if not meta:
            if not create:
                raise NoStore(self.location)
            if not self._deferred:
                self._create_store()
            return self._head
        version = self._check_meta(meta)
        # Generation -1: the first hold of the lock brings the table versions with it.
        self._head = Manifest(schema_version=version, generation=-1)
        return self._head

    def _not_empty(self) -> Conflict:
        return Conflict(
            f"DST: {self.location} already holds a memwork store; memwork copies only into an "
            "empty database (to add records to a store, use export and import); "
            "nothing was copied"
        )

    def _check_meta(self, meta: dict[str, bytes]) -> int:
        if meta.get("format") != FORMAT.encode():
            raise StoreUnreadable(
                f"{META} in {self.location} is not a memwork store header; it was left untouched"
            )
        try:
            version = int(meta["schema_version"])
            int(meta["generation"])
        except (KeyError, ValueError):
            raise StoreUnreadable(
                f"{META} in {self.location} has a damaged header; it was left untouched"
            ) from None
        if version > schema.SCHEMA_VERSION:
            raise StoreTooNew(
                f"the store at {self.location} has schema version {version}, newer than this "
                f"memwork understands ({schema.SCHEMA_VERSION}); upgrade memwork. "
                "Nothing was changed."
            )
        return version

    def _create_store(self) -> None:
        self.acquire()
        released = False
        try:
            if self._fresh and _pairs(self._fresh[0]):
                self._adopt_fresh()  # another process created it first
                return
            with self.redis_errors():
                size = self.conn.call("DBSIZE")
                if size > 1:  # our own lock key is one
                    self._refuse_foreign()
            create = Commit(
                {}, schema_version=schema.SCHEMA_VERSION, txid=self._txid("init"), ends_hold=True
            )
            self.commit(create)
            released = True
        finally:
            if not released:
                self.release(False)
            else:
                self.lease.release()

    def _refuse_foreign(self) -> None:
        foreign: list[str] = []
        ours = 0
        cursor = b"0"
        with self.redis_errors():
            while True:
                cursor, batch = self.conn.call("SCAN", cursor, "COUNT", 200)
                for raw in batch:
                    key = raw.decode("utf-8", "replace")
                    if key.startswith(PREFIX):
                        ours += 1
                    elif len(foreign) < FOREIGN_SAMPLE:
                        foreign.append(key)
                if cursor == b"0" or len(foreign) >= FOREIGN_SAMPLE:
                    break
        if foreign:
            shown = ", ".join(repr(k[:40]) for k in foreign)
            raise StoreUnreadable(
                f"Redis database {self.location} holds keys that are not memwork's ({shown}); "
                "a memwork store needs a database of its own: pick an empty database number "
                "(redis://host:port/N); nothing was written"
            )
        if ours > 1:
            raise StoreUnreadable(
                f"Redis database {self.location} holds memwork keys but no store header "
                f"({META}); it was left untouched (run `memwork doctor`)"
            )

    def backup(self, version: int) -> str:
        """Copy every key of the store under ``memwork:backup:v<N>-<time>:`` first."""
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        target = f"{BACKUP_PREFIX}v{version}-{stamp}:"
        with self.redis_errors():
            cursor = b"0"
            while True:
                cursor, batch = self.conn.call("SCAN", cursor, "MATCH", PREFIX + "*", "COUNT", 500)
                commands = [
                    ("COPY", k, target + k.decode()[len(PREFIX) :], "REPLACE")
                    for k in batch
                    if k != LOCK.encode() and not k.startswith(BACKUP_PREFIX.encode())
                ]
                self.conn.pipeline(commands)
                if cursor == b"0":
                    break
        return target

    # -- locking ----------------------------------------------------------------------------
    def begin(self) -> None:
        """A writer's lease is kept alive by a heartbeat."""
        self.lease.keep_alive()

    def _txid(self, n: str) -> str:
        return f"{self.lease.token or os.getpid()}-{n}"

    def acquire(self, wait: bool = True, meanwhile: Callable[[], None] | None = None) -> None:
        if not wait:
            # Taking the lease is a round trip to Redis: a wait, however short.
            from ..base.no_wait import WouldWait

            raise WouldWait
        try:
            with self.redis_errors():
                self._fresh = self.lease.acquire(self._head.generation)
        except LockTimeout:
            holder = self.lease.holder()
            raise StoreError(
                f"the store at {self.location} is locked by another process"
                f"{f' ({holder})' if holder else ''} (waited {self.lease.timeout_s:.0f} s; "
                "a killed holder's lease runs out by itself)"
            ) from None
        self._committed = False
        meta = _pairs(self._fresh[0])
        self._generation_at_lock = int(meta.get("generation", b"-1") or -1)

    def release(self, failed: bool) -> None:
        kept = self.lease.release()
        self._fresh = None
        if kept or failed or self._committed:
            return
        # The lease ran out while this process read: its view is sound only if
        # nobody committed meanwhile.
        if self.committed_generation() != self._generation_at_lock:
            raise StoreError(
                f"this process's lease on the lock of {self.location} ran out while it read, "
                "and another process wrote meanwhile; run the command again"
            )

    # -- reading ----------------------------------------------------------------------------
    def refresh(self) -> Refresh | None:
        if self._fresh is None:
            return None
        if self._deferred:
            if _pairs(self._fresh[0]):
                raise self._not_empty()  # another copy got here first
            with self.redis_errors():
                if self.conn.call("DBSIZE") > 1:  # our own lock key is one
                    self._refuse_foreign()
            return None
        return self._adopt_fresh()

    def _adopt_fresh(self) -> Refresh | None:
        assert self._fresh is not None
        meta = _pairs(self._fresh[0])
        if not meta:
            raise StoreUnreadable(
                f"the store at {self.location} is gone ({META} was deleted); nothing was written"
            )
        version = self._check_meta(meta)
        generation = int(meta["generation"])
        if len(self._fresh) == 1:
            return None  # the head this process has is current
        tables = {}
        for name, raw in _pairs(self._fresh[1]).items():
            if not is_table_name(name):
                raise StoreUnreadable(
                    f"{TABLES} in {self.location} names a table {name[:40]!r} that is not a plain "
                    "name; it was left untouched"
                )
            try:
                tables[name] = int(raw)
            except ValueError:
                raise StoreUnreadable(
                    f"{TABLES} in {self.location} is damaged; it was left untouched"
                ) from None
        self._head = Manifest(schema_version=version, generation=generation, tables=tables)
        return Refresh(self._head, None)

    def table_sizes(self, names: list[str]) -> list[int] | None:
        """What Redis says each table's hash takes (``MEMORY USAGE``, from a few sampled
        fields: one pipelined round trip; 0 where it will not say); None when the
        server cannot be asked."""
        if not names:
            return []
        try:
            with self.redis_errors():
                replies = self.conn.pipeline(
                    [("MEMORY", "USAGE", table_key(name), "SAMPLES", "5") for name in names]
                )
        except (StoreError, ReplyError):
            return None
        return [r if isinstance(r, int) else 0 for r in replies]

    def read_table(self, name: str) -> Docs:
        if name not in self._head.tables:
            raise KeyError(name)
        if not is_table_name(name):
            raise StoreUnreadable(f"{self.location} names a table {name[:40]!r} that is not valid")
        self.lease.still_holding()
        with self.redis_errors():
            try:
                raw = self.conn.call("HGETALL", table_key(name))
            except ReplyError as exc:
                if exc.code == "WRONGTYPE":
                    raise StoreUnreadable(
                        f"{table_key(name)} in {self.location} is not a memwork table (not a "
                        "hash); it was left untouched"
                    ) from None
                raise
        docs, _ = decode_pairs(raw, f"table {name} in {self.location}")
        return docs

    def committed_generation(self) -> int:
        """The generation of the last commit (no lock: one ``HGET``)."""
        with self.redis_errors():
            raw = self.conn.call("HGET", META, "generation")
        return int(raw) if raw is not None else -1

    def committed_txid(self) -> str | None:
        """The id of the last transaction committed, after a reconnect (None if unknown)."""
        for attempt in range(6):  # about 2 s: a restarting server, not a dead one
            try:
                self.conn.connect()
                raw = self.conn.call("HGET", META, "txid")
                return raw.decode() if raw is not None else ""
            except (ConnectionLost, ReplyError):
                time.sleep(0.1 * (attempt + 1))
        return None

    def set_aside(self, name: str, stamp: str) -> str | None:
        """Copy table ``name``'s key under ``memwork:damaged:<stamp>:`` (kept, never
        expiring) before a restore replaces it."""
        names.check_id(stamp, "damaged folder")
        target = f"{DAMAGED_PREFIX}{stamp}:t:{name}"
        with self.redis_errors():
            copied, _ = self.conn.pipeline(
                [("COPY", table_key(name), target, "REPLACE"), ("PERSIST", target)]
            )
        return target if copied == 1 else None

    # -- committing -------------------------------------------------------------------------
    def pending(self) -> bool:
        return bool(self._pending)

    def rollback(self) -> None:
        self._pending = []

    def commit(self, commit: Commit) -> Manifest:
        """Send every write, dropped table and snapshot in one atomic script."""
        head = self._head
        tables = dict(head.tables)
        ops: list[Arg] = list(self._pending)
        for name in commit.drops:
            ops += ["D", name]
            tables.pop(name, None)
        generation = head.generation + 1
        for name, write in commit.writes.items():
            version = generation  # a table's version is the commit that last wrote it
            tables[name] = version
            # Redis may have reclaimed a session's working memory since it was loaded
            # (see wm_expiry_ms): send every document of it, not only the changed ones.
            expiring = name.startswith("working_memory.")
            if write.replace:
                ops += ["D", name]
                sets, gone = write.docs, []
            elif expiring:
                sets = write.docs
                gone = sorted({*(write.base or ()), *write.delete} - write.docs.keys())
            else:
                sets, gone = write.put, write.delete
            pairs: list[Arg] = []
            for doc_id, doc in sets.items():
                pairs += [doc_id, encode(doc)]
            ops += ["H", name, version, len(sets), len(gone), *pairs, *gone]
            if expiring:
                ops += ["E", name, wm_expiry_ms(write.docs)]
        manifest = Manifest(
            schema_version=commit.schema_version or head.schema_version,
            generation=generation,
            tables=tables,
        )
        self._run_commit(commit, manifest, ops)
        self._head = manifest
        self._pending = []
        self._committed = True
        self._deferred = False
        commit.generation = manifest.generation
        return manifest

    def _run_commit(self, commit: Commit, manifest: Manifest, ops: list[Arg]) -> None:
        token = self.lease.token
        if token is None:
            raise RuntimeError("a Redis commit must run while the store's lock is held")
        txid = f"{token}-{commit.txid}"
        keys: list[Arg] = [LOCK, META, TABLES, SNAPS]
        args: list[Arg] = [
            token,
            txid,
            self.channel,
            PREFIX,
            manifest.generation,
            manifest.schema_version,
            # The lock's hold ends with this commit: the script lets it go too.
            "1" if commit.ends_hold else "0",
            *ops,
        ]
        try:
            scripts.commit(self.conn, keys, args)
            if commit.ends_hold:
                self.lease.released_by_commit()
        except ReplyError as exc:
            raise self._refused(exc) from None
        except ConnectionLost as exc:
            # The script may have run before the connection went: the txid it
            # records says whether it did.
            last = self.committed_txid()
            if last == txid:
                return
            if last is None:
                raise StoreUnreachable(
                    f"lost the connection to Redis at {self.location} during a commit ({exc}); "
                    "the server is not back, so whether this write landed is unknown: "
                    "check with `memwork history` once it is"
                ) from None
            raise StoreError(
                f"lost the connection to Redis at {self.location} during a commit ({exc}); "
                "nothing was written"
            ) from None

    def _refused(self, exc: ReplyError) -> Exception:
        code = exc.code
        if code == "MEMWORK_LEASE_LOST":
            return StoreError(
                f"this process's lease on the lock of {self.location} ran out before it "
                "committed (it was paused or cut off for longer than the lease) and another "
                "writer may have gone on; nothing was written"
            )
        if code == "OOM" or "OOM command not allowed" in str(exc):
            return StoreWriteFailed(
                f"Redis at {self.location} is out of memory (maxmemory reached); "
                "nothing was written"
            )
        if code in ("READONLY", "NOPERM", "MISCONF", "NOREPLICAS"):
            return StoreWriteFailed(
                f"Redis at {self.location} refused the write ({exc}); nothing was written"
            )
        return StoreError(
            f"Redis at {self.location} refused the commit ({exc}); nothing was written"
        )

    # -- snapshots (store checkpoints) ------------------------------------------------------
    def snapshot_create(
        self, key: str, names_: list[str], about: dict[str, Any] | None = None
    ) -> None:
        """Copy the committed tables ``names_`` into snapshot ``key`` when this commits."""
        names.check_id(key, "checkpoint")
        self._pending += ["S", key, len(names_), *names_]

    def snapshot_import(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
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

    def snapshot_read(self, key: str) -> dict[str, tuple[int, Docs]]:
        names.check_id(key, "checkpoint")
        with self.redis_errors():
            member, index = self.conn.pipeline(
                [("SISMEMBER", SNAPS, key), ("HGETALL", snapshot_key(key))]
            )
            if isinstance(index, ReplyError) or isinstance(member, ReplyError):
                raise StoreUnreadable(
                    f"the snapshot of checkpoint {key} in {self.location} is damaged"
                )
            if not member:
                raise StoreUnreadable(
                    f"the snapshot of checkpoint {key} is missing from {self.location}"
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
            docs, _ = decode_pairs(raw, f"table {name} of checkpoint {key} in {self.location}")
            result[name] = (version, docs)
        return result

    def snapshot_check(self, key: str) -> None:
        names.check_id(key, "checkpoint")

    def snapshot_delete(self, key: str) -> None:
        """Remove a snapshot, after the transaction that removed its checkpoint: nothing
        names it any more, so it goes without the lock (a kill here leaves an orphan the
        next checkpoint command sweeps)."""
        names.check_id(key, "checkpoint")
        with self.redis_errors():
            index = self.conn.call("HKEYS", snapshot_key(key))
            self.conn.pipeline(
                [
                    *(("DEL", snapshot_key(key, n.decode("utf-8"))) for n in index),
                    ("DEL", snapshot_key(key)),
                    ("SREM", SNAPS, key),
                ]
            )

    def snapshot_keys(self) -> list[str]:
        with self.redis_errors():
            members = self.conn.call("SMEMBERS", SNAPS)
        return sorted(m.decode("utf-8") for m in members)

    def snapshot_sweep(self, keep: set[str]) -> int:
        """Remove, at commit, snapshots no checkpoint names (left by killed deletes)."""
        orphans = [k for k in self.snapshot_keys() if k not in keep]
        for key in orphans:
            if names.is_safe_file_name(key):
                self._pending += ["X", key]
        return len(orphans)

    # -- change notification ----------------------------------------------------------------
    def follow(self, on_commit: Callable[[], None]) -> Callable[[], None]:
        """Call ``on_commit`` (from a thread) after every commit by anyone; returns a stop.

        A subscriber on the store's channel: no polling. After a lost connection it
        resubscribes and calls ``on_commit`` once, since commits may have been missed
        meanwhile.
        """
        follower = _Follower(self.url, self.channel, on_commit)
        self._followers.append(follower)
        follower.start()
        return follower.stop

    def close(self) -> None:
        """Close the connections and stop followers and the lease heartbeat."""
        for follower in self._followers:
            follower.stop()
        self.lease.close()
        self.conn.close()


class _Follower:
    """A thread subscribed to the commit channel of one store."""

    def __init__(self, url: StoreURL, channel: str, on_change: Callable[[], None]) -> None:
        self.url = url
        self.channel = channel
        self.on_change = on_change
        self._stop = threading.Event()
        self._conn: Connection | None = None
        self.thread = threading.Thread(target=self._run, name="memwork-follow", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._conn is not None:
            self._conn.shutdown()

    def _run(self) -> None:
        first = True
        delay = 0.2
        while not self._stop.is_set():
            conn = Connection(self.url)
            self._conn = conn
            try:
                conn.connect()
                conn.send("SUBSCRIBE", self.channel)
                conn.read_push()  # the subscription's confirmation
                if not first:
                    self._notify()  # commits may have gone by while disconnected
                first = False
                delay = 0.2
                while not self._stop.is_set():
                    message = conn.read_push()
                    if isinstance(message, list) and message and message[0] == b"message":
                        self._notify()
            except (ConnectionLost, ReplyError, OSError, UserError):
                conn.close()
                self._stop.wait(delay)
                delay = min(delay * 2, 5.0)
        if self._conn is not None:
            self._conn.close()

    def _notify(self) -> None:
        try:
            self.on_change()
        except Exception:  # noqa: BLE001 - a listener's failure must not end the follow
            pass
