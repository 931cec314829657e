"""The same input limits at every door, and no door that one long call can hold.

A record is at most 16 MB (what the CLI reads as one line of JSON Lines), a query at most
4 KB; the Python API and MCP refuse past that as the CLI does, naming the field, with the
store untouched. The MCP server answers other calls while one waits (for the store's lock
held by another process, here) instead of queueing them behind it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.ops.memory import Memory
from memwork.core.storage.lock import InterProcessLock
from tests.conftest import NOW, folder_digest, stored_text
from tests.core.doors.test_mcp_server import fails, with_server

BIG = "x" * (16 * 1024 * 1024 + 10)
QUERY_MAX = 4096  # core.services.recall.search.QUERY_MAX
QUERY = "deploy " * (QUERY_MAX // 7 + 1)


def test_the_api_caps_a_record_at_16_mb(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "db", clock=lambda: NOW)
    memory.observe("s1", "a first note")
    before = folder_digest(tmp_path / "db")
    for call, field in (
        (lambda: memory.observe("s1", BIG), "text"),
        (lambda: memory.scratch_add("s1", BIG), "text"),
        (lambda: memory.wm_set("s1", "k", {"v": BIG}), "value"),
        (lambda: memory.set_slot("persona", BIG), "text"),
        (
            lambda: memory.record_episode({"task_id": "t", "score": 0.5, "mistakes": [BIG]}),
            "episode",
        ),
    ):
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == field and "16 MB" in err.value.rule
    assert folder_digest(tmp_path / "db") == before


def test_mcp_caps_a_record_at_16_mb(db: Path) -> None:
    async def body(client: Any) -> list[str]:
        return [
            await fails(client, "observe", session="s1", text=BIG),
            await fails(client, "record_episode", episode={"score": 0.5, "summary": BIG}),
        ]

    for message in with_server(db, body):
        assert message.startswith("memwork: ") and "16 MB" in message and "\n" not in message
    assert "xxxxxxxxxx" not in stored_text(db)


def test_a_query_is_capped_at_every_door(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    assert cli("lesson", "add", "Canary every deploy").code == 0
    done = cli("search", QUERY)
    assert done.code == 2 and done.err.startswith("memwork: query: must be at most 4,096")
    assert cli("search", "deploy " * (QUERY_MAX // 7 - 1)).code == 0
    with pytest.raises(InvalidInput) as err:
        Memory(tmp_path / "api").search(QUERY)
    assert err.value.field == "query"

    async def body(client: Any) -> str:
        return await fails(client, "search", query=QUERY)

    assert with_server(db, body).startswith("memwork: query: must be at most 4,096")


@pytest.mark.folder_only
def test_a_long_call_never_blocks_other_calls(db: Path) -> None:
    Memory(db, clock=lambda: NOW).observe("s1", "the store exists")
    lock = InterProcessLock(Path(db) / ".lock", timeout=10)
    done: dict[str, Any] = {}

    async def body(client: Any) -> None:
        await client.list_tools()  # connected: the server has opened the store
        lock.acquire()  # another process's long transaction, as the server sees it

        async def record() -> None:
            episode = {"task_id": "t", "score": 0.9, "summary": "recorded after the wait"}
            done["record"] = await client.call_tool("record_episode", {"episode": episode})

        async with anyio.create_task_group() as tg:
            tg.start_soon(record)
            # Every round trip is answered while record_episode waits for the lock.
            for _ in range(20):
                await client.list_tools()
                assert "record" not in done
            assert "record" not in done
            lock.release()
        assert not done["record"].is_error, done["record"].content[0].text

    with_server(db, body)
    assert "recorded after the wait" in stored_text(db)
