"""``/v1/events``: every commit to the store, by anyone, as a server-sent event.

One watcher per server polls the store's commit counter (a small read: a
folder's ``store.json``, a Redis store's manifest) and, when it moves, reads
the audit entries the commits added and hands them to every open stream. So a
viewer sees what the CLI, the workbench, other servers and this one wrote,
within a poll (0.2 s by default). Each stream starts with a ``ready`` event
(the generation it starts from), then ``commit`` events::

    event: commit
    id: 42
    data: {"generation": 42, "entries": [{"seq": …, "actor": "cli:coder", …}], "more": 0}

``entries`` holds at most 200 entries, newest last; ``more`` counts those left
out (a bulk import writes thousands). A ``: ping`` comment keeps idle
connections open through proxies.

A stream carries only what its reader may read: a client that names its agent
(``X-Memwork-Agent``) on a store that isolates agents gets the entries the
``history`` verb would show that agent (its own doings and those of callers with
no agent id, never another agent's), and no event at all for a commit it may
see nothing of; ``entries`` and ``more`` count only what it sees. A stream
opened with no agent id is an operator's: it sees every commit.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import orjson
from anyio.streams.memory import MemoryObjectSendStream
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ...base.errors import MemworkError, StoreUnreachable
from ...storage.store import Store
from .routes import actor_of, error_response

MAX_ENTRIES = 200
POLL = 0.2
PING = 15.0


def entries_after(store: Store, seq: int) -> tuple[list[dict[str, Any]], int]:
    """(every audit entry after ``seq``, oldest first; the newest seq). Each stream cuts
    them to :data:`MAX_ENTRIES` after keeping what its reader may see."""
    from ...services.history import newest_first

    found: list[dict[str, Any]] = []
    newest = seq
    with store.reading():
        for entry in newest_first(store):
            if int(entry["seq"]) <= seq:
                break
            newest = max(newest, int(entry["seq"]))
            found.append(entry)
    found.reverse()
    return found, newest


def for_reader(store: Store, actor: str, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``entries`` the stream of ``actor`` (``http:<agent>``) may carry: what that agent
    may read of the history, as every door filters it; an operator's stream (no agent
    id) gets every entry."""
    from ...ledger.isolation import agent_of, asking
    from ...services.history import visible

    if not agent_of(actor):
        return entries
    with asking(actor), store.reading():
        return visible(store, entries)


def cut(event: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """``event`` with the newest :data:`MAX_ENTRIES` of ``entries`` and ``more`` counting
    the rest."""
    kept = entries[-MAX_ENTRIES:]
    return {**event, "entries": kept, "more": len(entries) - len(kept)}


def _last_seq(store: Store) -> int:
    from ...ledger.audit import last_seq

    with store.reading():
        return last_seq(store)


class CommitFeed:
    """Watches the store's commits and fans them out to every open event stream."""

    def __init__(self, store: Store | Callable[[], Store], poll: float = POLL) -> None:
        #: The store, or a function that gives it (opening a Redis store that did not
        #: answer when the server started).
        self._store = store
        self.poll = poll
        self.generation = 0
        self.closed = False
        self._streams: set[MemoryObjectSendStream[dict[str, Any]]] = set()

    def close(self) -> None:
        """End every open stream (the server is stopping: viewers reconnect elsewhere)."""
        self.closed = True
        for stream in list(self._streams):
            stream.close()
        self._streams.clear()

    @property
    def store(self) -> Store:
        """The store watched (StoreUnreachable while a Redis store cannot be opened)."""
        return self._store if isinstance(self._store, Store) else self._store()

    async def run(self) -> None:
        """Poll until cancelled (the server's lifespan runs it). A Redis store that does
        not answer is asked again at the next poll: the server keeps serving meanwhile."""
        seq: int | None = None
        while True:
            try:
                if seq is None:
                    self.generation = await anyio.to_thread.run_sync(self._generation)
                    seq = await anyio.to_thread.run_sync(self._last_seq)
                    continue
                await anyio.sleep(self.poll)
                generation = await anyio.to_thread.run_sync(self._generation)
                if generation == self.generation:
                    continue
                entries, seq = await anyio.to_thread.run_sync(self._entries_after, seq)
            except StoreUnreachable:
                await anyio.sleep(self.poll)
                continue
            self.generation = generation
            event = {"generation": generation, "entries": entries}
            for stream in list(self._streams):
                try:
                    stream.send_nowait(event)
                except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    # A viewer that stopped reading loses its stream, not the server's memory.
                    self._streams.discard(stream)
                    stream.close()

    def _generation(self) -> int:
        return self.store.committed_generation()

    def _last_seq(self) -> int:
        return _last_seq(self.store)

    def _entries_after(self, seq: int) -> tuple[list[dict[str, Any]], int]:
        return entries_after(self.store, seq)

    async def stream(self, request: Request, actor: str) -> AsyncIterator[bytes]:
        """One viewer's events (``actor``: who reads, as the door names callers), until it
        goes away."""
        send, receive = anyio.create_memory_object_stream[dict[str, Any]](64)
        if self.closed:
            return
        self._streams.add(send)
        try:
            now = await anyio.to_thread.run_sync(self.store.committed_generation)
            ready = orjson.dumps({"generation": now}).decode()
            yield f"event: ready\nid: {now}\ndata: {ready}\n\n".encode()
            while True:
                with anyio.move_on_after(PING) as idle:
                    event = await receive.receive()
                if idle.cancelled_caught:
                    if await request.is_disconnected():
                        return
                    yield b": ping\n\n"
                    continue
                seen = await anyio.to_thread.run_sync(
                    for_reader, self.store, actor, event["entries"]
                )
                if not seen and event["entries"]:
                    continue  # only others' doings: not even that a commit happened
                event = cut(event, seen)
                data = orjson.dumps(event).decode()
                yield f"event: commit\nid: {event['generation']}\ndata: {data}\n\n".encode()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return
        finally:
            self._streams.discard(send)
            send.close()
            receive.close()

    def response(self, request: Request) -> Response:
        """The ``text/event-stream`` response of ``/v1/events`` (a bad agent header: 400)."""
        try:
            actor = actor_of(request)
        except MemworkError as exc:
            return error_response(exc)
        return StreamingResponse(
            self.stream(request, actor),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )
