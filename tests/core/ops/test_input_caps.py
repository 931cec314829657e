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


@pytest.mark.slow
def test_mcp_caps_a_record_at_16_mb(db: Path) -> None:
    async def body(client: Any) -> list[str]:
        return [
            await fails(client, "observe", session="s1", text=BIG),
            await fails(client, "record_episode", episode={"score": 0.5, "summary": BIG}),
        ]

    for message in with_server(db, body):
        assert message.startswith("memwork: ") and "16 MB" in message and "\n" not in message
    assert "xxxxxxxxxx" not in stored_text(db)


@pytest.mark.slow
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


@pytest.mark.slow
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


def _deep_list(depth: int) -> list[Any]:
    value: list[Any] = ["x"]
    for _ in range(depth - 1):
        value = [value]
    return value


def _deep_text(depth: int) -> str:
    """A value nested ``depth`` deep as JSON text (the standard encoder recurses)."""
    return '{"k": ' * depth + "1" + "}" * depth


@pytest.mark.slow
def test_a_value_nested_past_the_limit_is_refused_at_every_door(
    cli: Any, db: Path, tmp_path: Path
) -> None:
    import httpx2

    from tests.conftest import python_env
    from tests.http_server import Served

    deep = _deep_list(1000)
    memory = Memory(db, clock=lambda: NOW)
    memory.add_lesson("a first lesson")
    before = folder_digest(db)
    # The Python API: a string, a list of strings, an object, a JSON value, each refused
    # by the nesting rule (before a message quotes the value: its repr() recursed).
    for call, field in (
        (lambda: memory.add_lesson(deep), "text.0.0…"),  # type: ignore[arg-type]
        (lambda: memory.action_create("t", after=deep), "after.0.0…"),
        (lambda: memory.record_failure({"error_class": "E", "m": deep}), "report.m.0…"),
        (lambda: memory.set_config("review", {"on": deep}), "value.on.0…"),
    ):
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == field and err.value.rule == "nests deeper than 64 levels"
    assert folder_digest(db) == before
    memory.close()
    # The CLI's JSON input.
    report = tmp_path / "report.json"
    report.write_text('{"error_class": "E", "m": ' + _deep_text(1000) + "}")
    done = cli("record-failure", str(report))
    assert done.code == 2 and done.err == "memwork: m.k.k…: nests deeper than 64 levels\n"
    # MCP (its client encodes a hundred levels; the rule is the same past 64).
    shallow = _deep_list(100)

    async def body(client: Any) -> str:
        return await fails(client, "add_lesson", text=shallow)

    assert with_server(db, body) == "memwork: text.0.0…: nests deeper than 64 levels"
    # HTTP: a 4xx naming the field, not a 500.
    served = Served(db, python_env(MEMWORK_NOW="2026-11-01T12:00:00Z", MEMWORK_FSYNC="0"))
    try:
        answer = httpx2.post(
            f"{served.url}/v1/set_slot",
            content=('{"label": "persona", "text": ' + _deep_text(1000) + "}").encode(),
            headers={"content-type": "application/json"},
            timeout=60,
        )
    finally:
        assert served.stop()[0] == 0
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == "memwork: text.k.k…: nests deeper than 64 levels"
    assert folder_digest(db) == before
