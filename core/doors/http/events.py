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
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import orjson
from anyio.streams.memory import MemoryObjectSendStream
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from ...storage.store import Store

MAX_ENTRIES = 200
POLL = 0.2
PING = 15.0


def entries_after(store: Store, seq: int) -> tuple[list[dict[str, Any]], int, int]:
    """(the newest audit entries after ``seq``, oldest first and at most
    :data:`MAX_ENTRIES`; how many more there were; the newest seq)."""
    from ...services.history import newest_first

    found: list[dict[str, Any]] = []
    more = 0
    newest = seq
    with store.reading():
        for entry in newest_first(store):
            if int(entry["seq"]) <= seq:
                break
            newest = max(newest, int(entry["seq"]))
            if len(found) < MAX_ENTRIES:
                found.append(entry)
            else:
                more += 1
    found.reverse()
    return found, more, newest


def _last_seq(store: Store) -> int:
    from ...ledger.audit import last_seq

    with store.reading():
        return last_seq(store)


class CommitFeed:
    """Watches the store's commits and fans them out to every open event stream."""

    def __init__(self, store: Store, poll: float = POLL) -> None:
        self.store = store
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

    async def run(self) -> None:
        """Poll until cancelled (the server's lifespan runs it)."""
        self.generation = await anyio.to_thread.run_sync(self.store.committed_generation)
        seq = await anyio.to_thread.run_sync(_last_seq, self.store)
        while True:
            await anyio.sleep(self.poll)
            generation = await anyio.to_thread.run_sync(self.store.committed_generation)
            if generation == self.generation:
                continue
            entries, more, seq = await anyio.to_thread.run_sync(entries_after, self.store, seq)
            self.generation = generation
            event = {"generation": generation, "entries": entries, "more": more}
            for stream in list(self._streams):
                try:
                    stream.send_nowait(event)
                except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    # A viewer that stopped reading loses its stream, not the server's memory.
                    self._streams.discard(stream)
                    stream.close()

    async def stream(self, request: Request) -> AsyncIterator[bytes]:
        """One viewer's events, until it goes away."""
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
                data = orjson.dumps(event).decode()
                yield f"event: commit\nid: {event['generation']}\ndata: {data}\n\n".encode()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return
        finally:
            self._streams.discard(send)
            send.close()
            receive.close()

    def response(self, request: Request) -> Response:
        """The ``text/event-stream`` response of ``/v1/events``."""
        return StreamingResponse(
            self.stream(request),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )
