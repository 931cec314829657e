"""Searches in worker processes: ``memwork serve --search-workers N``.

In one process, searches of one store take turns (one recall index, one lock),
so however many clients ask at once, one core searches. With workers, each
search of ``POST /v1/search`` goes to one of ``N`` processes that each hold the
store open and keep their own recall index; the server's own process keeps
everything else (the guard, the other routes, MCP, the event stream). ``N``
searches then run at once on ``N`` cores, at the price of one more recall index
in memory per worker (``docs/PERFORMANCE.md`` has the figures).

One store for all of them: a worker reads the store as any other process does
(the CLI, another server), so every search sees every commit made before it
began, by the server or anyone else; a write the server has answered is in the
next search. A worker is asked with the caller's actor (``http:<agent>``), so
isolation reads as it would in the server, and it answers with the same JSON
and the same errors.

A worker is ready once it has opened the store and loaded its index (a first
search); until one is, searches wait for it. A worker that dies (killed, out of
memory) is dropped and the search it had runs in the server instead; with no
worker left the server searches by itself, as it does without workers.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from datetime import datetime
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...ops.memory import Memory

#: The most workers ``--search-workers`` takes (each holds a whole recall index).
MAX_WORKERS = 16
#: How long a search waits for a free worker before checking that some are alive.
_POLL = 0.5


class Worker:
    """One worker process and the server's end of its pipe."""

    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn


class SearchPool:
    """``count`` worker processes searching the store at ``path``."""

    def __init__(self, path: str, count: int, report: Callable[[str], None] | None = None) -> None:
        """``report``: where to say that the workers are ready (``memwork serve``: stderr)."""
        self.path = path
        self.count = count
        self.report = report
        self._idle: queue.Queue[Worker] = queue.Queue()
        self._workers: list[Worker] = []
        self._pending = 0
        self._lock = threading.Lock()
        self._stopped = False

    def start(self) -> None:
        """Start the workers in the background, one after another: each starts once the
        one before it is ready, so only one reads the store to build its index at a time
        (the others then load the index it saved, or catch up from the store)."""
        self._pending = self.count
        threading.Thread(target=self._start_all, name="memwork-search-start", daemon=True).start()

    def _start_all(self) -> None:
        import multiprocessing

        # Spawned, not forked: the server's process has threads (uvicorn's, the index
        # saver's), and a forked child would inherit their locks held.
        context = multiprocessing.get_context("spawn")
        try:
            for _ in range(self.count):
                if self._stopped:
                    return
                mine, theirs = context.Pipe()
                process = context.Process(
                    target=work, args=(self.path, theirs), name="memwork-search", daemon=True
                )
                process.start()
                theirs.close()
                worker = Worker(process, mine)
                with self._lock:
                    self._workers.append(worker)
                    self._pending -= 1
                self._ready(worker)
        finally:
            with self._lock:
                self._pending = 0
        if self.report is not None and not self._stopped:
            ready = self._idle.qsize()
            self.report(
                f"memwork: {ready} of {self.count} search workers ready"
                + ("" if ready == self.count else " (the server searches when none is left)")
            )

    def _ready(self, worker: Worker) -> None:
        try:
            ok = worker.conn.recv() == "ready"
        except (EOFError, OSError):
            ok = False
        if ok:
            self._idle.put(worker)
        else:
            self._drop(worker)

    def _drop(self, worker: Worker) -> None:
        with self._lock:
            if worker in self._workers:
                self._workers.remove(worker)
        worker.conn.close()

    @property
    def alive(self) -> int:
        """Workers that answer, are getting ready or are yet to start."""
        with self._lock:
            return len(self._workers) + self._pending

    def pids(self) -> list[int]:
        """The workers' process ids."""
        with self._lock:
            return [w.process.pid for w in self._workers]

    def search(self, params: dict[str, Any], *, now: datetime, actor: str) -> tuple[str, Any]:
        """Run a search on a free worker (blocking: call from a worker thread).

        ``("ok", hits)``, ``("error", (status, body))`` for a memwork error, or
        ``("none", None)`` when no worker is left (the caller searches itself).
        """
        while True:
            try:
                worker = self._idle.get(timeout=_POLL)
            except queue.Empty:
                if self._stopped or self.alive == 0:
                    return "none", None
                continue
            try:
                worker.conn.send((params, now, actor))
                kind, value = worker.conn.recv()
            except (EOFError, OSError):
                self._drop(worker)
                return "none", None
            self._idle.put(worker)
            if kind == "failed":
                raise RuntimeError(f"a search worker failed: {value}")
            return kind, value

    def stop(self) -> None:
        """Ask every worker to end, and wait (a worker still busy is ended after 10 s)."""
        self._stopped = True
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            try:
                worker.conn.send(None)
            except OSError:
                pass
        for worker in workers:
            worker.process.join(10)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join(5)
            worker.conn.close()


def work(path: str, conn: Connection) -> None:
    """A worker: open the store, load the index, then answer searches until told to
    stop or the server is gone (its end of the pipe closes)."""
    import signal
    import traceback

    # Ctrl-C in a terminal reaches the whole process group: the server stops its
    # workers itself, after the searches in flight are answered.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    from ...base.errors import MemworkError
    from ...ops import runner as invoke
    from ...ops.operations import by_name
    from ...services.recall.warm import warm
    from .error_status import error_body

    op = by_name("search")
    memory = _opened(path)
    try:
        memory.search("warm up")  # loads (or builds) the recall index before the first caller
        warm(memory.store)  # and works out what a first real question would (numpy ...)
        conn.send("ready")
        while True:
            try:
                asked = conn.recv()
            except (EOFError, OSError):
                return
            if asked is None:
                return
            params, now, actor = asked
            try:
                value = invoke.call(op, memory.call_target(), params, now=now, actor=actor)
                reply: tuple[str, Any] = ("ok", value)
            except MemworkError as exc:
                reply = ("error", error_body(exc))
            except Exception:  # noqa: BLE001 - the server answers 500, as it would itself
                reply = ("failed", traceback.format_exc(limit=5))
            conn.send(reply)
    finally:
        memory.close()


def _opened(path: str) -> Memory:
    """The store, opened as ``Memory`` opens it; a lock held past the lock's timeout (a
    long write by another process) is waited for twice more before the worker gives up."""
    from ...base.errors import StoreError
    from ...ops.memory import Memory

    for _ in range(2):
        try:
            return Memory(path, actor="mcp")
        except StoreError:
            continue
    return Memory(path, actor="mcp")
