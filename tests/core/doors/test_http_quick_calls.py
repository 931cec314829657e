"""The HTTP door answers quick reads on its event loop, and never lets one hold it."""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwork.core.base.no_wait import WouldWait, may_wait
from memwork.core.doors.quick_calls import REMEMBERED, QuickCalls
from memwork.core.storage.folder_backend import LOCK_NAME
from memwork.core.storage.lock import InterProcessLock
from tests.http_server import Served, client

from .test_http_door import _env, cli, post


def test_a_route_runs_inline_only_after_its_last_calls_were_quick() -> None:
    quick = QuickCalls(limit=0.05)
    assert not quick.inline_next()  # nothing measured yet: a thread
    for _ in range(REMEMBERED - 1):
        quick.threaded(lambda: None)
        assert not quick.inline_next()
    quick.threaded(lambda: None)
    assert quick.inline_next()
    # Waiting shows on the wall clock of a call run inline...
    quick.inline(lambda: time.sleep(0.06))
    assert not quick.inline_next()
    for _ in range(REMEMBERED):
        quick.inline(lambda: None)
    assert quick.inline_next()
    # ... and in a thread, only its own CPU time counts (a wait for the GIL is not its).
    quick.threaded(lambda: time.sleep(0.06))
    assert quick.inline_next()
    spin_until = time.thread_time() + 0.06
    quick.threaded(lambda: [None for _ in iter(lambda: time.thread_time() < spin_until, False)])
    assert not quick.inline_next()


def test_an_inline_call_never_waits_and_keeps_its_context_to_itself() -> None:
    quick = QuickCalls()
    mark: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="outside")

    def call() -> bool:
        mark.set("inside")
        return may_wait()

    assert quick.inline(call) is False
    assert mark.get() == "outside" and may_wait()

    def waits() -> None:
        raise WouldWait

    for _ in range(REMEMBERED):
        quick.threaded(lambda: None)
    assert quick.inline_next()
    with pytest.raises(WouldWait):
        quick.inline(waits)
    assert not quick.inline_next()  # the next calls go to threads, not to the same wait

    def refused() -> None:
        time.sleep(0.06)  # a slow error counts as slow as a slow answer
        raise ValueError("refused")

    for _ in range(REMEMBERED):
        quick.threaded(lambda: None)
    with pytest.raises(ValueError):
        quick.inline(refused)
    assert not quick.inline_next()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    db = tmp_path / "store"
    made = cli(
        db, "observe", "--session", "s1", "the deploy of billing failed on a missing migration"
    )
    assert made.returncode == 0, made.stderr
    server = Served(db, _env())
    yield server
    server.stop()


def test_a_search_meeting_a_busy_store_waits_in_a_thread_not_on_the_loop(
    served: Served, tmp_path: Path
) -> None:
    for _ in range(REMEMBERED + 2):  # the first builds the index; then quick ones
        found = post(served, "search", {"query": "billing migration"})
        assert found.status_code == 200 and len(found.json()) == 1
    other = InterProcessLock(tmp_path / "store" / LOCK_NAME, timeout=5)
    other.acquire()  # a writer in another process holds the store
    try:
        # Nothing was committed since the server's last read: it answers from memory,
        # without the lock, at once.
        started = time.monotonic()
        found = post(served, "search", {"query": "billing migration"})
        assert found.status_code == 200 and len(found.json()) == 1
        assert time.monotonic() - started < 1.0
    finally:
        other.release()
    made = cli(tmp_path / "store", "observe", "--session", "s2", "billing migration added")
    assert made.returncode == 0, made.stderr
    other.acquire()  # committed, and holding the store again: this must be read under it
    answers: list[int] = []
    try:
        searching = threading.Thread(
            target=lambda: answers.append(
                post(served, "search", {"query": "billing migration"}).status_code
            )
        )
        searching.start()
        time.sleep(0.3)  # the search has reached the lock and waits for it
        assert not answers
        # The loop is free: another request is answered while the search waits.
        started = time.monotonic()
        assert client().get(f"{served.url}/livez", timeout=5).status_code == 200
        assert time.monotonic() - started < 1.0
    finally:
        other.release()
        other.close()
    searching.join(10)
    assert answers == [200]  # answered once the store was free
    assert len(post(served, "search", {"query": "billing migration"}).json()) == 2


def test_a_context_that_logs_what_it_injects_records_each_call_once(tmp_path: Path) -> None:
    """With ``context_log`` on a context writes, and a write is never made on the loop:
    it stops before it, and runs again in a thread, so no injection is counted twice."""
    from memwork import Memory
    from memwork.core.ledger import audit, config

    db = tmp_path / "store"
    memory = Memory(db)
    memory.set_slot("persona", "You are terse.")
    config.set_value(memory.store, "context_log", "on", now=memory.now(), actor="tui")
    memory.close()
    server = Served(db, _env())
    try:
        calls = REMEMBERED * 3
        for _ in range(calls):
            answer = post(server, "context", {})
            assert answer.status_code == 200 and "You are terse." in answer.text
    finally:
        server.stop()
    memory = Memory(db)
    with memory.store.reading():
        injected = [e for e in audit.entries(memory.store) if e["action"] == "inject"]
    assert [e["table"] for e in injected] == ["slots"] * calls
    memory.close()


@pytest.mark.slow
def test_an_mcp_search_meeting_a_busy_store_leaves_the_loop_free(
    served: Served, tmp_path: Path
) -> None:
    """MCP's tools choose the same way: once a tool's calls were quick it runs on the
    loop, and a store another holder locks sends it to a thread, not the loop to sleep."""
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    other = InterProcessLock(tmp_path / "store" / LOCK_NAME, timeout=5)
    took: list[float] = []

    async def main() -> list[str]:
        http = httpx2.AsyncClient(timeout=60)
        transport = streamable_http_client(f"{served.url}/mcp", http_client=http)
        async with http, Client(transport, cache=None) as mcp:
            texts = []
            for _ in range(REMEMBERED + 2):
                found = await mcp.call_tool("search", {"query": "billing migration"})
                texts.append(found.content[0].text)
            other.acquire()
            async with anyio.create_task_group() as group:

                async def search() -> None:
                    found = await mcp.call_tool("search", {"query": "billing migration"})
                    texts.append(found.content[0].text)

                group.start_soon(search)
                await anyio.sleep(0.3)
                started = time.monotonic()
                live = await http.get(f"{served.url}/livez")
                took.append(time.monotonic() - started)
                assert live.status_code == 200
                other.release()
            return texts

    try:
        texts = anyio.run(main)
    finally:
        other.release()
        other.close()
    assert took and took[0] < 1.0
    assert len(texts) == REMEMBERED + 3 and all("billing" in t for t in texts)


def test_a_fresh_servers_first_calls_side_by_side_are_all_answered(tmp_path: Path) -> None:
    """The first calls of a server import their operations' modules; calls that arrive
    together (each in a thread of its own) must wait for one another's import, never
    read a module half made (an internal error, once, for an observe)."""
    db = tmp_path / "store"
    made = cli(db, "observe", "--session", "s1", "the deploy of billing failed")
    assert made.returncode == 0, made.stderr
    server = Served(db, _env())
    try:
        calls = [("observe", {"session": "s1", "text": f"note {n} on billing"}) for n in range(5)]
        calls += [
            ("add_lesson", {"text": "Run migrations before every deploy"}),
            ("list_lessons", {}),
            ("context", {}),
            ("list_sessions", {}),
            ("frontier", {}),
        ]
        statuses: list[int] = []
        go = threading.Barrier(len(calls))

        def call(op: str, body: dict[str, object]) -> None:
            go.wait(10)
            statuses.append(post(server, op, body).status_code)

        threads = [threading.Thread(target=call, args=c) for c in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(statuses) == [200] * len(calls)
    finally:
        server.stop()
