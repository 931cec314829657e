"""A memwork store in a Redis database: ``--db redis://host:port/N``.

The same :class:`~core.storage.store.Store` as a folder (the same reads,
transactions and guarantees, so every verb, the workbench and the Python API
work on it unchanged), on three Redis mechanisms:

* the lock is a lease with a fencing token (:mod:`core.storage.redis_lease`),
  held across every read and read-modify-write;
* a commit is one Lua script (:mod:`core.storage.redis_scripts`): all of a
  transaction's writes land together or none does, and with the server's
  AOF on ``appendfsync always`` an acknowledged commit survives a crash;
* every commit publishes the new generation on ``memwork:commits:<db>``, so
  the workbench follows other writers without polling (:meth:`RedisStore.follow`).

A store owns its database: every key starts with ``memwork:``, and a store is
never created in a database that holds anything else.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from ..errors import (
    Conflict,
    InvalidInput,
    NoStore,
    StoreError,
    StoreTooNew,
    StoreUnreadable,
    StoreWriteFailed,
    UserError,
)
from . import schema
from .lock import LockTimeout
from .manifest import FORMAT, Manifest, is_table_name
from .redis_lease import Lease, lease_seconds
from .redis_storage import LOCK, META, PREFIX, TABLES, RedisStorage
from .resp import Connection, ConnectionLost, ReplyError
from .store import Store, lock_timeout
from .url import StoreURL, parse

#: How many foreign keys a refusal names.
FOREIGN_SAMPLE = 3
#: Where a migration copies the store before it changes anything.
BACKUP_PREFIX = PREFIX + "backup:"


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


class RedisStore(Store):
    """A memwork store in Redis database ``url`` (``create=False``: a database without a
    store is :class:`~core.errors.NoStore` and nothing is written)."""

    def __init__(
        self, url: str | StoreURL, *, create: bool = True, _deferred: bool = False
    ) -> None:
        self.url = url if isinstance(url, StoreURL) else parse(url)
        # A Redis store has no folder. Store.path stays typed Path: this class overrides
        # every member that reads it (location, label, table_path, ...), and code outside
        # the store reads it only for backend == "folder".
        self.path = None  # type: ignore[assignment]
        self._create = create
        #: A store created by its first commit (a copy), not by opening.
        self._deferred = _deferred
        self._lock = None
        self._init_state()
        self._opening = True
        self.conn = Connection(self.url)
        self.lease = Lease(self.conn, (LOCK, META, TABLES), lease_seconds(), lock_timeout())
        self._fresh: list[Any] | None = None
        self._generation_at_lock = -1
        self._committed = False
        self._followers: list[_Follower] = []
        self._open()
        self._opening = False

    # -- what the rest of memwork sees ---------------------------------------------------
    @property
    def location(self) -> str:
        """The store's URL (without its password)."""
        return self.url.display

    @property
    def label(self) -> str:
        """A short name for titles: ``host:port/db``."""
        return f"{self.url.host}:{self.url.port}/{self.url.db}"

    @property
    def backend(self) -> str:
        return "redis"

    @property
    def in_memory_only(self) -> bool:
        return False

    @property
    def read_only(self) -> str | None:
        return None

    @property
    def channel(self) -> str:
        """The pub/sub channel every commit announces its generation on."""
        return f"{PREFIX}commits:{self.url.db}"

    def table_path(self, name: str) -> NoReturn:
        raise StoreError(f"table {name} lives in Redis ({self.location}), not in a file")

    # -- errors -------------------------------------------------------------------------
    @contextmanager
    def redis_errors(self) -> Iterator[None]:
        """Turn connection failures and refusals into one-line store errors."""
        try:
            yield
        except ConnectionLost as exc:
            if self._opening:
                raise StoreUnreadable(
                    f"cannot reach Redis at {self.location}: {exc} (is the server running?); "
                    "nothing was written"
                ) from None
            raise StoreError(
                f"lost the connection to Redis at {self.location}: {exc}; nothing more was written"
            ) from None
        except ReplyError as exc:
            raise self._reply_error(exc) from None

    def _reply_error(self, exc: ReplyError) -> Exception:
        return reply_error(self.url, exc)

    # -- opening ------------------------------------------------------------------------
    def _open(self) -> None:
        with self.redis_errors():
            (reply,) = self.conn.connect(then=[("HGETALL", META)])  # one round trip
            if isinstance(reply, ReplyError):
                raise reply
            meta = _pairs(reply)
        if meta and self._deferred:
            raise self._not_empty()
        if not meta:
            if not self._create:
                raise NoStore(self.location)
            self._attach(RedisStorage(self, Manifest(schema_version=schema.SCHEMA_VERSION)))
            if not self._deferred:
                self._create_store()
            return
        version = self._check_meta(meta)
        self._attach(RedisStorage(self, Manifest(schema_version=version, generation=-1)))
        if version < schema.SCHEMA_VERSION:
            self._migrate(version)

    @classmethod
    def copy_into(cls, url: str, fill: Callable[[RedisStore], None]) -> None:
        """Create a store in the empty database ``url`` by one commit that ``fill`` makes
        (header, tables and snapshots land together, or nothing does)."""
        store = cls(url, _deferred=True)
        try:
            fill(store)
        finally:
            store.close()

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
        with self._locked():
            if self._fresh and _pairs(self._fresh[0]):
                self._refresh()  # another process created it first
                return
            with self.redis_errors():
                size = self.conn.call("DBSIZE")
                if size > 1:  # our own lock key is one
                    self._refuse_foreign()
            self.storage.in_transaction = True
            try:
                self.storage.commit(self._new_txid(), schema_version=schema.SCHEMA_VERSION)
            finally:
                self.storage.in_transaction = False

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

    def _migrate(self, version: int) -> None:
        self.backup_key = self._backup(version)
        with self.transaction():
            for step in range(version, schema.SCHEMA_VERSION):
                schema.MIGRATIONS[step](self)
            self._target_schema = schema.SCHEMA_VERSION

    def _backup(self, version: int) -> str:
        """Copy every key of the store under ``memwork:backup:v<N>-<time>:`` first."""
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
        target = f"{BACKUP_PREFIX}v{version}-{stamp}:"
        with self._locked(), self.redis_errors():
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

    # -- locking ------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """As :meth:`Store.transaction`; a writer's lease is kept alive by a heartbeat."""
        self.lease.keep_alive()
        with super().transaction() as store:
            yield store

    def _new_txid(self) -> str:
        self._txn_counter += 1
        return f"{self.lease.token or os.getpid()}-{self._txn_counter}"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex:
            if self._depth == 0:
                self._acquire()
            self._depth += 1
            failed = False
            try:
                yield
            except BaseException:
                failed = True
                raise
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release(failed)

    def _acquire(self) -> None:
        known = self.storage.manifest.generation if hasattr(self, "storage") else -1
        try:
            with self.redis_errors():
                self._fresh = self.lease.acquire(known)
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

    def _release(self, failed: bool) -> None:
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

    def _refresh(self) -> None:
        fresh = self._fresh
        if fresh is None:
            return
        meta = _pairs(fresh[0])
        if self._deferred:
            if meta:
                raise self._not_empty()  # another copy got here first
            with self.redis_errors():
                if self.conn.call("DBSIZE") > 1:  # our own lock key is one
                    self._refuse_foreign()
            return
        if not meta:
            raise StoreUnreadable(
                f"the store at {self.location} is gone ({META} was deleted); nothing was written"
            )
        version = self._check_meta(meta)
        generation = int(meta["generation"])
        if len(fresh) == 1:
            return  # the manifest this process has is current
        tables = {}
        for name, raw in _pairs(fresh[1]).items():
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
        self.storage.refresh(Manifest(schema_version=version, generation=generation, tables=tables))

    def releases_after_commit(self) -> bool:
        """Whether the lock's hold ends with the commit now running (the transaction is
        the outermost user of the lock), so the commit may release it."""
        return self._depth == 1

    def _committed_hook(self) -> None:
        self._committed = True
        self._deferred = False

    # -- change detection ------------------------------------------------------------------
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

    def follow(self, on_change: Callable[[], None]) -> Callable[[], None]:
        """Call ``on_change`` (from a thread) after every commit by anyone; returns a stop.

        A subscriber on the store's channel: no polling. After a lost
        connection it resubscribes and calls ``on_change`` once, since commits
        may have been missed meanwhile.
        """
        follower = _Follower(self.url, self.channel, on_change)
        self._followers.append(follower)
        follower.start()
        return follower.stop

    def close(self) -> None:
        """Close the connections and stop followers and the lease heartbeat."""
        super().close()
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
