"""The lock of a Redis store: a lease with a heartbeat, checked by every commit.

A process takes the lock with ``SET memwork:lock <token> NX PX <lease>`` and
holds it across every read and every read-modify-write, as a folder store
holds its ``flock``. A lease, not a plain key: a writer killed mid-transaction
(SIGKILL, a lost machine) cannot unlock, so its lease runs out and the next
process goes on after at most ``MEMWORK_LOCK_LEASE`` seconds (default 10).
While the lock is held a daemon thread renews the lease every third of its
length over a connection of its own, so a long import or a big checkpoint
keeps it however long it runs.

A holder killed on this machine need not be waited for: the token names its
host, PID namespace and PID, and a process that finds the lock held by a PID
of its own host and namespace that no longer exists takes the lock over at
once (a PID reused meanwhile only means waiting for the lease, as for a
holder on another machine).

The token is the fence. A holder that stops renewing (stopped by a debugger,
cut off by the network) may wake up after another process took the lock;
the commit script checks that the lock still holds *its* token before it
writes anything, so such a commit is refused whole (see
:mod:`core.storage.redis_scripts`).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

from ..base.errors import InvalidInput
from ..base.numbers import is_whole_number
from . import redis_scripts as scripts
from .lock import LockTimeout
from .resp import Connection, ConnectionLost, ReplyError

LEASE_ENV = "MEMWORK_LOCK_LEASE"
DEFAULT_LEASE_S = 10.0


def lease_seconds() -> float:
    """The lease length (``MEMWORK_LOCK_LEASE``, default 10 s, at least 0.5 s)."""
    raw = os.environ.get(LEASE_ENV)
    if raw is None:
        return DEFAULT_LEASE_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.5 <= value <= 3600:
        raise InvalidInput(LEASE_ENV, f"must be a number of seconds from 0.5 to 3600 (got {raw!r})")
    return value


def _origin() -> str:
    """``host/pid-namespace``: where a PID means one process (containers may share a host
    name, never a PID namespace)."""
    try:
        namespace = os.readlink("/proc/self/ns/pid").strip("pid:[]")
    except OSError:
        namespace = "-"
    return f"{socket.gethostname()}/{namespace}".replace(":", "_")


_ORIGIN = _origin()


def _dead_here(holder: str) -> bool:
    """Whether ``holder`` (a lock token) names a process of this host that has exited."""
    origin, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if origin != _ORIGIN or not is_whole_number(pid_text):
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, another user's
    return False


class Lease:
    """The lock key of one store, as one process takes and renews it."""

    def __init__(
        self, conn: Connection, keys: tuple[str, str, str], lease_s: float, timeout_s: float
    ) -> None:
        self.conn = conn
        self.lock_key, self.meta_key, self.tables_key = keys
        self.lease_ms = int(lease_s * 1000)
        self.timeout_s = timeout_s
        self.token: str | None = None
        #: The last commit released the lock with its writes.
        self.released = False
        #: Set by the heartbeat when a renewal found the lock in other hands.
        self.lost = False
        self._renewed = 0.0
        self._beat_conn: Connection | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._closed = False
        self._taken = 0.0
        #: Start the heartbeat with the next hold (writers: a transaction may run an
        #: external consolidator or parse a big import for longer than the lease).
        self.heartbeat_wanted = False

    def keep_alive(self) -> None:
        """Renew the lease in the background for as long as it is held from now on."""
        self.heartbeat_wanted = True
        if self.token is not None:
            self._start_heartbeat()

    def still_holding(self) -> None:
        """Called as a hold goes on (each table read): a read that lasts starts the
        heartbeat too. Short reads (``memwork context``) never start a thread."""
        if (
            self.token is not None
            and self._thread is None
            and time.monotonic() - self._taken > self.lease_ms / 3000
        ):
            self._start_heartbeat()
            self._wake.set()  # renew now, not a third of a lease from now

    def acquire(self, known_generation: int) -> list[Any]:
        """Take the lock, waiting up to the timeout; returns the manifest reply.

        The reply is ``[meta]`` when ``known_generation`` is still current, else
        ``[meta, tables]`` (flat key/value lists).
        """
        deadline = time.monotonic() + self.timeout_s
        delay = 0.001
        dead = ""
        while True:
            token = f"{_ORIGIN}:{os.getpid()}:{os.urandom(8).hex()}"
            reply = scripts.acquire(
                self.conn,
                [self.lock_key, self.meta_key, self.tables_key],
                [token, self.lease_ms, known_generation, dead],
            )
            if reply[0] == 1:
                self.token = token
                self.lost = False
                self.released = False
                self._renewed = self._taken = time.monotonic()
                if self.heartbeat_wanted:
                    self._start_heartbeat()
                return list(reply[1:])
            holder = reply[2].decode("utf-8", "replace")
            if _dead_here(holder):
                dead = holder
                continue
            now = time.monotonic()
            if now >= deadline:
                raise LockTimeout(self.lock_key)
            # The holder's remaining lease bounds the wait for a dead holder; a live
            # one usually lets go within milliseconds.
            pttl = reply[1] / 1000 if reply[1] > 0 else delay
            time.sleep(max(0.0005, min(delay, pttl, deadline - now)))
            delay = min(delay * 2, 0.05)

    def release(self) -> bool:
        """Let the next process in; False when the lease had run out and been lost."""
        token, self.token = self.token, None
        if token is None:
            done, self.released = self.released, False
            return done
        try:
            still = scripts.release(self.conn, [self.lock_key], [token])
        except (ConnectionLost, ReplyError):
            # The lease runs out by itself; what matters is whether it was still ours,
            # which the caller checks against the store's generation.
            return False
        return bool(still) and not self.lost

    def released_by_commit(self) -> None:
        """The commit script let go of the lock already (see ``release`` in the script)."""
        self.token = None
        self.released = True

    def holder(self) -> str | None:
        """Who holds the lock now (``host:pid``), for messages."""
        try:
            value = self.conn.call("GET", self.lock_key)
        except (ConnectionLost, ReplyError):
            return None
        if not value:
            return None
        origin, _, rest = value.decode("utf-8", "replace").partition(":")
        return f"pid {rest.partition(':')[0]} on {origin.split('/')[0]}"

    # -- heartbeat --------------------------------------------------------------------
    def _start_heartbeat(self) -> None:
        if self._closed:  # used again after close(): beat again
            self._closed = False
            self._wake.clear()
            self._thread = None
        if self._thread is None:
            self._thread = threading.Thread(target=self._beat, name="memwork-lease", daemon=True)
            self._thread.start()

    def _beat(self) -> None:
        interval = self.lease_ms / 3000
        while not self._closed:
            self._wake.wait(interval)
            self._wake.clear()
            token = self.token
            if self._closed or token is None:
                continue
            if time.monotonic() - self._renewed < interval * 0.9:
                continue  # renewed (or taken) a moment ago
            try:
                if self._beat_conn is None:
                    self._beat_conn = Connection(self.conn.url, read_timeout=interval)
                ok = scripts.renew(self._beat_conn, [self.lock_key], [token, self.lease_ms])
            except (ConnectionLost, ReplyError):
                continue  # try again next beat; the commit's fence stays the judge
            if token == self.token:
                if ok:
                    self._renewed = time.monotonic()
                else:
                    self.lost = True

    def close(self) -> None:
        """Stop the heartbeat and close its connection."""
        self._closed = True
        self._wake.set()
        if self._beat_conn is not None:
            self._beat_conn.close()
