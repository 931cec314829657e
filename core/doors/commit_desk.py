"""The desk: where ``memwork serve`` commits other processes' writes to its store.

Agents' processes that write to the store a server serves hand their writes over
(:mod:`core.ops.hand_over` says which, and how a caller falls back to writing for
itself). A caller that turns out to be the only one writing is told so, and writes for
itself for a while: one writer alone commits faster without the round trip.

The desk is a thread with a local socket. Each time it wakes it takes every call that
has arrived and runs them as their callers would have (each caller's parameters,
clock and identity; never as a curator), all in one transaction: a call that fails
takes the transaction back with it, is answered ``refused`` (it wrote nothing: its
caller runs it itself and meets the same error as always), and the others run again
without it. A second thread makes the batch's commit durable with one fsync (one for
every batch that waited meanwhile) and only then answers its calls; the desk runs the
next batch in the meantime. If the fsync fails, every call of that batch is answered
``failed``.

Only processes of the server's own user are answered (``SO_PEERCRED``), as only they
can open the store's files. One desk per store: a second server finds the address
taken and opens none.
"""

from __future__ import annotations

import contextlib
import os
import queue
import selectors
import socket
import struct
import threading
import time
from datetime import datetime
from typing import Any

from ..base import lazyjson
from ..base.errors import StoreError
from ..ops import hand_over, runner
from ..ops.memory import ACTORS, Memory
from ..ops.operations import Op, by_name
from ..storage.backend import Deferred, flush_together
from ..storage.store import Store

_PEER = struct.Struct("3i")  # struct ucred: pid, uid, gid
#: Seconds since a caller's last call within which it counts as writing now.
ACTIVE = 0.05
#: A stopping desk refuses calls until none has come for this long (seconds) ...
QUIET = 0.1
#: ... or this long has passed since it began to stop.
STOPPING = 2.0
#: A call as the desk runs it: its operation, checked parameters, clock and caller.
_Call = tuple[Op, dict[str, Any], datetime, str]
#: A batch run and waiting for its fsync: its callers, their answers, the flush.
_Batch = tuple[list[socket.socket], list[dict[str, Any]], Deferred | None]


class CommitDesk:
    """The desk of ``memory``'s store (a folder store on Linux; see :meth:`open`)."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self._listener: socket.socket | None = None
        self._address = b""
        self._thread: threading.Thread | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._stopping = False
        #: When each caller's last call came (callers other than the one asking, seen
        #: within :data:`ACTIVE`, make it worth handing calls over).
        self._last_call: dict[socket.socket, float] = {}
        #: Each caller's connection, and the bytes of its next call read so far.
        self._pending: dict[socket.socket, bytearray] = {}
        #: Batches run and waiting for their fsync: (callers, answers, the flush).
        self._flushes: queue.SimpleQueue[_Batch | None] = queue.SimpleQueue()
        self._flusher: threading.Thread | None = None
        #: Batches given to the flusher and not yet answered.
        self._unanswered = 0
        self._counting = threading.Lock()
        self._fingerprint = hand_over.fingerprint()
        #: Calls committed here, and batches (their fsyncs): for the tests and benches.
        self.calls = 0
        self.batches = 0

    def open(self) -> bool:
        """Start taking calls; False (nothing opened) on a store on Redis, a system
        without the desk's sockets, or when another process's desk serves the store."""
        if not (hand_over.supported() and self.memory.wm_fallback is None):
            return False
        if not os.path.isdir(os.fspath(self.memory.path)):
            return False
        address = hand_over.address(self.memory.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(address)
        except OSError:
            listener.close()
            return False  # another desk has it
        listener.listen(64)
        listener.setblocking(False)
        self._listener, self._address = listener, address
        hand_over.hosting.add(address)
        self._thread = threading.Thread(target=self._serve, name="memwork-desk", daemon=True)
        self._flusher = threading.Thread(target=self._flush, name="memwork-flush", daemon=True)
        self._flusher.start()
        self._thread.start()
        return True

    def close(self) -> None:
        """Stop taking calls: the batch under way is finished and answered first, and
        the calls that come meanwhile are refused (their callers write them)."""
        self._stopping = True
        self._wake_w.send(b"x")
        if self._thread is not None:
            self._thread.join()
        if self._flusher is not None:
            self._flushes.put(None)  # after the desk's last batch: every call answered
            self._flusher.join()
        for sock in list(self._pending):
            sock.close()
        self._pending.clear()
        if self._listener is not None:
            hand_over.hosting.discard(self._address)
            self._listener.close()
        self._wake_r.close()
        self._wake_w.close()

    # -- the thread -------------------------------------------------------------------------
    def _serve(self) -> None:
        assert self._listener is not None
        chooser = selectors.DefaultSelector()
        chooser.register(self._listener, selectors.EVENT_READ)
        chooser.register(self._wake_r, selectors.EVENT_READ)
        pending = self._pending
        try:
            while not self._stopping:
                batch: list[tuple[socket.socket, Any]] = []
                self._take(chooser.select(), chooser, pending, batch)
                if batch:
                    try:
                        self._run(batch)
                    except Exception as exc:  # noqa: BLE001 - a caller must never wait forever
                        answer = {"failed": f"the desk failed ({type(exc).__name__}: {exc})"}
                        self._queue(([s for s, _ in batch], [answer] * len(batch), None))
            self._refuse_until_quiet(chooser, pending)
        finally:
            chooser.close()  # the callers' sockets are closed once the flusher answered

    def _refuse_until_quiet(
        self, chooser: selectors.BaseSelector, pending: dict[socket.socket, bytearray]
    ) -> None:
        """Stopping: every call that still comes is refused at once (its caller writes it,
        and for a while whatever follows), until the flusher has answered every batch
        and no call has come for :data:`QUIET` seconds (at most :data:`STOPPING`). A
        caller then never sends a call nobody reads: that one would end as an unknown
        outcome, not a refusal."""
        began = last = time.monotonic()
        refusal = hand_over.frame({"refused": "the server is stopping", "mismatch": True})
        while True:
            now = time.monotonic()
            if now - began > STOPPING or (self._unanswered == 0 and now - last > QUIET):
                return
            late: list[tuple[socket.socket, Any]] = []
            with contextlib.suppress(OSError, ValueError):
                self._take(chooser.select(QUIET / 4), chooser, pending, late)
            for sock, _ in late:
                last = time.monotonic()
                with contextlib.suppress(OSError):
                    sock.sendall(refusal)

    def _take(
        self,
        events: list[tuple[selectors.SelectorKey, int]],
        chooser: selectors.BaseSelector,
        pending: dict[socket.socket, bytearray],
        batch: list[tuple[socket.socket, Any]],
    ) -> None:
        """What ``events`` bring: new callers, and calls (into ``batch``)."""
        for key, _ in events:
            sock = key.fileobj
            if sock is self._listener:
                self._accept(chooser, pending)
            elif sock is not self._wake_r:
                assert isinstance(sock, socket.socket)
                self._read(sock, chooser, pending, batch)

    def _accept(
        self, chooser: selectors.BaseSelector, pending: dict[socket.socket, bytearray]
    ) -> None:
        assert self._listener is not None
        try:
            sock, _ = self._listener.accept()
        except OSError:
            return
        _pid, uid, _gid = _PEER.unpack(
            sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEER.size)
        )
        if uid != os.getuid():
            sock.close()  # only this user's processes can open the store's files
            return
        sock.settimeout(10.0)  # an answer a caller does not read never holds the desk
        chooser.register(sock, selectors.EVENT_READ)
        pending[sock] = bytearray()

    def _read(
        self,
        sock: socket.socket,
        chooser: selectors.BaseSelector,
        pending: dict[socket.socket, bytearray],
        batch: list[tuple[socket.socket, Any]],
    ) -> None:
        try:
            data = sock.recv(1 << 20)
        except OSError:
            data = b""
        if not data:
            self._gone(sock, chooser, pending)
            return
        buf = pending[sock]
        buf += data
        while len(buf) >= 4:
            try:
                size = hand_over.frame_length(bytes(buf[:4]))
            except ValueError:
                self._gone(sock, chooser, pending)  # not a caller of this memwork
                return
            if len(buf) < 4 + size:
                break
            try:
                request = lazyjson.loads(bytes(buf[4 : 4 + size]))
            except ValueError:
                request = None
            del buf[: 4 + size]
            batch.append((sock, request))

    def _gone(
        self,
        sock: socket.socket,
        chooser: selectors.BaseSelector,
        pending: dict[socket.socket, bytearray],
    ) -> None:
        if pending.pop(sock, None) is not None:
            chooser.unregister(sock)
            sock.close()
        self._last_call.pop(sock, None)

    def _run(self, batch: list[tuple[socket.socket, Any]]) -> None:
        """Run a batch's calls in one transaction; the flusher makes the commit durable,
        then answers. A call that fails takes the transaction back with it: it is
        answered ``refused`` and the others run again without it."""
        store = self.memory.store
        answers: list[dict[str, Any]] = []
        calls: dict[int, _Call] = {}
        for n, (_, request) in enumerate(batch):
            checked = self._checked(request)
            answers.append(checked if isinstance(checked, dict) else {})
            if not isinstance(checked, dict):
                calls[n] = checked
        store.defer_flushes()
        try:
            while calls:
                failed = self._run_together(store, calls, answers)
                if failed is None:
                    break
                del calls[failed]
        finally:
            flush = store.deferred_flush()
        self.batches += 1
        # Whether anyone else writes now: a caller alone is answered so, and writes for
        # itself for a while (a round trip here costs a lone writer more than it saves).
        now = time.monotonic()
        for sock, _ in batch:
            self._last_call[sock] = now
        active = sum(1 for at in self._last_call.values() if now - at < ACTIVE)
        if active <= 1:
            answers = [{**a, "alone": True} if "ok" in a else a for a in answers]
        self._queue(([sock for sock, _ in batch], answers, flush))

    def _queue(self, batch: _Batch) -> None:
        """A batch for the flusher (counted until it is answered)."""
        with self._counting:
            self._unanswered += 1
        self._flushes.put(batch)

    def _run_together(
        self, store: Store, calls: dict[int, _Call], answers: list[dict[str, Any]]
    ) -> int | None:
        """``calls`` in one transaction, their answers set; or the first that failed
        (answered ``refused``; nothing of the transaction landed)."""
        values: dict[int, Any] = {}
        at = -1
        ran: int | None = None  # the head before the commit, once every call ran
        try:
            with store.transaction():  # all of it lands, or none of it
                for at, (op, checked, now, actor) in calls.items():
                    value = runner.call(op, store, checked, now=now, actor=actor)
                    if not _plain(value):
                        # Its caller would get it back changed (a tuple as a list):
                        # refused, and the caller runs it itself.
                        raise TypeError("an answer JSON would not give back as it is")
                    values[at] = value
                ran = store.cache.head.generation
        except Exception as exc:  # noqa: BLE001 - its caller runs it again and meets it
            if ran is None or store.cache.head.generation == ran:
                answers[at] = {"refused": type(exc).__name__}  # nothing landed
                return at
            # The commit landed and something after it failed (a listener): answered as
            # landed, since a caller that ran it again would write it twice.
        for at, value in values.items():
            answers[at] = {"ok": value}
        self.calls += len(values)
        return None

    def _flush(self) -> None:
        """The flusher: each batch's fsync, then its answers, in the order they ran."""
        while True:
            items = [self._flushes.get()]
            while not self._flushes.empty():  # what ran while the last fsync waited
                items.append(self._flushes.get())
            done = items[-1] is None
            batches = [item for item in items if item is not None]
            if batches:
                self._answer_all(batches)
                with self._counting:
                    self._unanswered -= len(batches)
            if done:
                return

    def _answer_all(self, batches: list[_Batch]) -> None:
        """One fsync for ``batches``, then every answer."""
        failure: StoreError | None = None
        try:
            flush_together([flush for _, _, flush in batches if flush is not None])
        except StoreError as exc:
            failure = exc
        for socks, answers, _ in batches:
            if failure is not None:
                answers = [{"failed": str(failure)} if "ok" in a else a for a in answers]
            for sock, answer in zip(socks, answers, strict=True):
                try:
                    body = hand_over.frame(answer)
                except (TypeError, ValueError):
                    body = hand_over.frame(
                        {"failed": "the write landed, but its answer could not be sent"}
                    )
                try:
                    sock.sendall(body)
                except OSError:
                    # The desk's thread sees it closed at its next read and lets it go.
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

    def _checked(self, request: Any) -> _Call | dict[str, Any]:
        """A call ready to run, or why the desk refuses it (then it wrote nothing)."""
        if (
            not isinstance(request, dict)
            or request.get("v") != hand_over.VERSION
            or request.get("fp") != self._fingerprint
        ):
            return {"refused": "another memwork, or other settings", "mismatch": True}
        name, params = request.get("op"), request.get("params")
        actor, when = request.get("actor"), request.get("now")
        if (
            name not in hand_over.HANDED
            or not isinstance(params, dict)
            or not isinstance(actor, str)
            or actor.partition(":")[0] not in ACTORS
            or not isinstance(when, str)
        ):
            return {"refused": "not a call the desk takes"}
        try:
            op = by_name(name)
            return op, runner.check(op, "api", params), datetime.fromisoformat(when), actor
        except Exception as exc:  # noqa: BLE001 - its caller checks it again and meets it
            return {"refused": type(exc).__name__}


def _plain(value: Any, depth: int = 0) -> bool:
    """Whether JSON gives ``value`` back as it is (dicts with text keys, lists, text,
    numbers, booleans, None)."""
    if value is None or type(value) in (str, int, float, bool):
        return True
    if depth > 64:
        return False
    if type(value) is list:
        return all(_plain(item, depth + 1) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v, depth + 1) for k, v in value.items())
    return False
