"""Writes handed over to the process that serves a store, to commit together.

Every process that writes to a folder store takes the store's lock, first reads what
the others committed since its last turn, commits, and fsyncs. With many writer
processes that catch-up is paid again by each of them for every commit, and on a
small machine the processes' turns at the lock cost more than the writes. When a
long-lived process serves the store (``memwork serve``), it opens a desk
(:mod:`core.doors.commit_desk`): a local socket where the agents' writes of other
processes on this machine are handed to it. It runs each as its caller would have
(the caller's parameters, clock and identity), commits those that arrive together in
one transaction with one fsync, and answers each once that fsync has returned: an
answer still means the write is on disk.

A :class:`~core.ops.memory.Memory` (the Python API, and the MCP server's tools, which
run through one) hands over the writes agents make at every step (:data:`HANDED`)
when a desk serves its store and others write too: a caller the desk finds alone
writes for itself for :data:`RETRY_AFTER`, or until one of its own writes finds the
store's lock taken. It runs everything else itself: reads, a caller with the curator
key, a store on Redis, no desk, a desk that runs other settings or another memwork
(:func:`fingerprint`) or is stopping, and a call the desk refuses (a call that fails
at the desk wrote nothing there: the caller runs it itself and meets the same error,
raised as it always is). Only if the desk's process dies after a call was sent and
before its answer came is the outcome unknown: that is said in one line
(:class:`~core.base.errors.StoreError`) rather than guessed.

The desk's socket is in Linux's abstract namespace, named after the store folder's
real path; the desk answers only processes of its own user (``SO_PEERCRED``). On other
systems no desk opens and every process writes for itself, as before.
"""

from __future__ import annotations

import hashlib
import os
import socket
import struct
import sys
import threading
import time
from datetime import datetime
from typing import Any

from ..base import lazyjson
from ..base.errors import StoreError

#: The operations a Memory hands over: what agents write at every step. Each runs in
#: one transaction at the desk, so a call that fails there wrote nothing.
HANDED = frozenset(
    {
        "observe",
        "record_episode",
        "record_failure",
        "start_session",
        "end_session",
        "wm_set",
        "wm_delete",
        "wm_task",
        "scratch_add",
        "action_create",
        "action_update",
        "add_lesson",
        "reinforce_lesson",
        "weaken_lesson",
    }
)

#: The protocol's version: a desk and a caller that differ write for themselves.
VERSION = 1
#: The largest frame either side reads (a batch of episodes is well under it).
MAX_FRAME = 64 << 20
_HEAD = struct.Struct("<I")
#: How long a caller that found no desk (or one it cannot use) writes for itself before
#: it looks again: a desk opened meanwhile is found within this.
RETRY_AFTER = 1.0
#: Seconds a caller waits for an answer past the store's lock timeout (which the desk
#: may spend waiting for the lock) before it calls the outcome unknown.
ANSWER_MARGIN = 30.0
#: The desks this process opens (their addresses): its own Memories never hand over to
#: them, they write as the desk does.
hosting: set[bytes] = set()
#: Settings that are the caller's own and travel with each call, not part of the match.
_OWN_SETTINGS = frozenset({"MEMWORK_DB", "MEMWORK_AGENT", "MEMWORK_NOW"})


def supported() -> bool:
    """Whether this system has the sockets a desk uses (Linux's abstract namespace and
    the peer's credentials)."""
    return sys.platform.startswith("linux") and hasattr(socket, "SO_PEERCRED")


def address(folder: str | os.PathLike[str]) -> bytes:
    """The desk's socket address for the store in ``folder`` (abstract: no file)."""
    real = os.path.realpath(folder).encode("utf-8", "surrogateescape")
    return b"\0memwork-desk-" + hashlib.sha256(real).hexdigest()[:40].encode()


def fingerprint() -> str:
    """What a desk and its caller must share: the memwork version and every
    ``MEMWORK_*`` setting that changes what a write does (redaction, review, limits,
    fsync...), but the caller's own store, agent and clock, which travel with each
    call."""
    from .. import __version__

    settings = sorted(
        (k, v) for k, v in os.environ.items() if k.startswith("MEMWORK_") and k not in _OWN_SETTINGS
    )
    text = repr((__version__, VERSION, settings)).encode("utf-8", "surrogateescape")
    return hashlib.sha256(text).hexdigest()[:32]


def frame(value: Any) -> bytes:
    """``value`` as one length-prefixed JSON frame (TypeError or ValueError for a value
    JSON cannot carry)."""
    body = lazyjson.dumps(value)
    return _HEAD.pack(len(body)) + body


def send_frame(sock: socket.socket, value: Any) -> None:
    """``value`` as one frame, sent."""
    sock.sendall(frame(value))


def frame_length(head: bytes) -> int:
    """The length a frame's 4-byte head gives (ValueError past :data:`MAX_FRAME`)."""
    (size,) = _HEAD.unpack(head)
    if size > MAX_FRAME:
        raise ValueError(f"a frame of {size} bytes is over the limit")
    return int(size)


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    parts: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise ConnectionError("the desk closed the connection")
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def read_frame(sock: socket.socket) -> Any:
    """The next frame's value (ConnectionError when the other side is gone)."""
    return lazyjson.loads(_read_exactly(sock, frame_length(_read_exactly(sock, _HEAD.size))))


class HandOver:
    """One Memory's way to its store's desk: a connection kept between calls, and when
    to look for a desk again after finding none."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self._address = address(folder)
        self._sock: socket.socket | None = None
        self._mutex = threading.Lock()
        self._quiet_until = 0.0
        #: Until when this caller writes for itself, the desk having found it alone.
        self._own_until = 0.0
        self._fingerprint = fingerprint()
        #: Calls a desk committed for this Memory (a benchmark and the tests read it).
        self.handed = 0
        #: The operations it hands over. With an external consolidator configured, an
        #: episode's recording runs a command after its commit: that stays here, where
        #: it would have run, and never holds up the desk.
        self.names = HANDED
        if os.environ.get("MEMWORK_CONSOLIDATE_CMD", "").strip():
            self.names = HANDED - {"record_episode", "record_failure"}
        self._pid = os.getpid()

    def call(
        self, name: str, params: dict[str, Any], now: datetime, actor: str
    ) -> tuple[bool, Any]:
        """``(True, answer)`` when a desk ran the call; ``(False, None)`` when the caller
        must run it itself (no desk, a desk it cannot use, or a call the desk refused).
        :class:`StoreError` when the desk could not make the call durable (its disk
        refused the fsync), or stopped before saying whether it ran it."""
        if time.monotonic() < max(self._quiet_until, self._own_until):
            return False, None
        if self._address in hosting:
            return False, None
        try:
            request = frame(
                {
                    "v": VERSION,
                    "fp": self._fingerprint,
                    "op": name,
                    "params": params,
                    "now": now.isoformat(),
                    "actor": actor,
                }
            )
        except (TypeError, ValueError):
            return False, None  # a value JSON cannot carry (a Python object): run it here
        with self._mutex:
            if self._pid != os.getpid():
                # A forked child: the connection is its parent's; it makes its own.
                self._sock, self._pid = None, os.getpid()
            sock = self._sock or self._connect()
            if sock is None:
                return False, None
            try:
                sock.sendall(request)
            except OSError:
                self._drop()  # not taken (a desk gone since the last call): run it here
                return False, None
            try:
                answer = read_frame(sock)
            except (OSError, ValueError) as exc:
                self._drop()
                raise StoreError(
                    "the memwork process serving this store stopped while it ran this "
                    f"{name} ({exc}); whether it landed is unknown: see `memwork history`"
                ) from None
        if not isinstance(answer, dict):
            raise StoreError(f"the memwork process serving this store answered {name} unreadably")
        if "ok" in answer:
            self.handed += 1
            if answer.get("alone"):
                self._own_until = time.monotonic() + RETRY_AFTER
            return True, answer["ok"]
        if "failed" in answer:
            raise StoreError(str(answer["failed"]))
        if answer.get("mismatch"):
            # Another memwork or other settings at the desk: write here for a while.
            self._quiet_until = time.monotonic() + RETRY_AFTER
        return False, None

    def contended(self) -> None:
        """A write this caller made itself found the store's lock taken: others write
        too, and the next call goes to the desk again."""
        self._own_until = 0.0

    def _connect(self) -> socket.socket | None:
        from ..storage.lock import lock_timeout

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self._address)
        except OSError:
            sock.close()
            self._quiet_until = time.monotonic() + RETRY_AFTER
            return None
        # The desk may wait for the store's lock as this process would: no longer.
        sock.settimeout(lock_timeout() + ANSWER_MARGIN)
        self._sock = sock
        return sock

    def _drop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        """Let the connection go."""
        with self._mutex:
            self._drop()
