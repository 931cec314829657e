"""When the Redis server stops mid-session, working memory never fails an agent: a
long-lived process (``Memory``, the MCP server) keeps answering from its own memory and
says ``using_fallback: true``, durable writes still refuse in one line naming the store,
one line goes to stderr once, and what was written meanwhile is written back when the
server answers again. The CLI, one process per call, refuses (docs/CONCEPTS.md says why).

Each test runs its own redis-server (tests/redis_server.py), stopped and started again
on the same port; nothing waits a fixed time: a test waits for a condition.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import StoreUnreachable
from memwork.core.storage.store import Store
from tests.conftest import python_env
from tests.doors import tool, tool_error
from tests.redis_server import RedisServer, redis_digest

NOW = "2026-11-01T12:00:00Z"
EPISODE = {"task_id": "t", "score": 0.9, "summary": "done"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    own = RedisServer(tmp_path / "redis", fsync="always")
    own.folder.mkdir()
    own.start()
    yield own
    own.stop()


@pytest.fixture
def url(server: RedisServer) -> str:
    address = f"{server.url}/1"
    Store(address).close()  # the store exists before anyone loses it
    return address


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll ``condition`` until it holds (a loaded machine may need a while)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def _lines(err: str, needle: str) -> list[str]:
    return [line for line in err.splitlines() if needle in line]


def test_memory_keeps_working_memory_while_redis_is_stopped(
    server: RedisServer, url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    memory = Memory(url, agent="bot")
    try:
        memory.wm_set("run-1", "plan", "step one")
        memory.scratch_add("run-1", "before the outage")
        assert memory.using_fallback is False
        server.stop()

        # Reads see what the process last saw; writes go on; every answer says so.
        got = memory.wm_get("run-1", "plan")
        assert got["value"] == "step one" and got["using_fallback"] is True
        assert memory.wm_set("run-1", "during", 2)["using_fallback"] is True
        assert memory.wm_task("run-1", task_id="t1", step=1, total=4)["using_fallback"] is True
        assert memory.scratch_add("run-1", "during the outage")["using_fallback"] is True
        keys = memory.wm_keys("run-1")
        assert keys == ["during", "plan"] and keys.using_fallback is True  # type: ignore[attr-defined]
        assert memory.wm_get_all("run-1") == {
            "plan": "step one",
            "during": 2,
            "_using_fallback": True,
        }
        stats = memory.wm_stats("run-1")
        assert stats["using_fallback"] is True and stats["user_keys"] == 2
        assert memory.using_fallback is True
        # Durable writes still refuse, in one line naming the store.
        with pytest.raises(StoreUnreachable) as refused:
            memory.record_episode(EPISODE)
        assert str(refused.value).startswith("memwork: ")
        assert f"Redis at {server.url}" in str(refused.value)
        assert "\n" not in str(refused.value)
        with pytest.raises(StoreUnreachable):
            memory.add_lesson("Keep notes short")
        err = capfd.readouterr().err
        assert len(_lines(err, "working memory is kept in this process's memory")) == 1

        server.start()
        # The next working-memory call after the retry interval writes the journal back.
        wait_for(lambda: memory.wm_stats("run-1")["using_fallback"] is False, "the write-back")
        err = capfd.readouterr().err
        assert len(_lines(err, "answers again: wrote back 3 working-memory writes")) == 1
        assert _lines(err, "working memory is kept") == []  # said once per outage
    finally:
        memory.close()
    # What was written during the outage is in Redis now, for every process.
    with Memory(url) as fresh:
        assert fresh.wm_get_all("run-1") == {"plan": "step one", "during": 2}
        assert fresh.wm_task("run-1")["current_step"] == 1
        assert [e["text"] for e in fresh.scratch_list("run-1")] == [
            "before the outage",
            "during the outage",
        ]
        audit = fresh.history(table="working_memory")
        assert [e["actor"] for e in audit[:3]] == ["api:bot"] * 3


def test_a_process_that_closes_before_redis_returns_says_what_was_lost(
    server: RedisServer, url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    memory = Memory(url)
    memory.wm_set("run-2", "a", 1)
    server.stop()
    memory.wm_set("run-2", "b", 2)
    memory.close()
    err = capfd.readouterr().err
    assert len(_lines(err, "1 working-memory write kept in this process's memory")) == 1


@pytest.mark.slow
def test_the_cli_refuses_working_memory_while_redis_is_stopped(
    server: RedisServer, url: str, cli_env: dict[str, str]
) -> None:
    import subprocess
    import sys

    def memwork(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memwork", "--db", url, *args],
            capture_output=True,
            text=True,
            env=cli_env,
            timeout=60,
        )

    assert memwork("wm", "--session", "run-3", "set", "k", "v").returncode == 0
    before = redis_digest(url)
    server.stop()
    refused = memwork("wm", "--session", "run-3", "set", "k", "changed")
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"memwork: cannot reach Redis at {server.url}")
    assert len(refused.stderr.splitlines()) == 1
    read = memwork("wm", "--session", "run-3", "get", "k")
    assert read.returncode == 2 and "cannot reach Redis" in read.stderr
    server.start()
    assert redis_digest(url) == before
    assert memwork("wm", "--session", "run-3", "get", "k").stdout == "v\n"


@pytest.fixture
def cli_env() -> dict[str, str]:
    return python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0")


def _mcp_with_stderr(url: str, body: Callable[[Client], Any], errlog: Path) -> Any:
    """``memwork mcp`` on ``url`` with a real SDK client, its stderr into ``errlog``."""
    import sys

    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memwork", "--db", url, "mcp", "--tools", "all", "--agent", "tester"],
        env=python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0"),
    )

    async def main() -> Any:
        with errlog.open("w") as err:
            async with Client(stdio_client(params, errlog=err), cache=None) as client:
                return await body(client)

    return anyio.run(main)


@pytest.mark.slow
def test_the_mcp_server_keeps_answering_working_memory(
    server: RedisServer, url: str, tmp_path: Path
) -> None:
    async def body(client: Client) -> dict[str, Any]:
        await tool(client, "wm_set", session="run-4", key="plan", value="ship")
        server.stop()
        out: dict[str, Any] = {}
        answer = await client.call_tool("wm_get", {"session": "run-4", "key": "plan"})
        out["get"] = answer.structured_content
        out["get_note"] = [c.text for c in answer.content[1:]]
        out["set"] = await tool(client, "wm_set", session="run-4", key="during", value=1)
        listed = await client.call_tool("wm_keys", {"session": "run-4"})
        out["keys"] = listed.structured_content
        out["stats"] = await tool(client, "wm_stats", session="run-4")
        out["episode"] = await tool_error(client, "record_episode", episode=EPISODE)
        out["lesson"] = await tool_error(client, "add_lesson", text="Keep notes short")
        server.start()
        deadline = time.monotonic() + 30
        while (await tool(client, "wm_stats", session="run-4"))["using_fallback"]:
            assert time.monotonic() < deadline, "the MCP server never wrote back"
            await anyio.sleep(0.02)
        out["after"] = await tool(client, "wm_get_all", session="run-4")
        return out

    errlog = tmp_path / "mcp-stderr.txt"
    out = _mcp_with_stderr(url, body, errlog)
    assert out["get"]["value"] == "ship" and out["get"]["using_fallback"] is True
    assert out["get_note"] and out["get_note"][0].startswith("using_fallback: true")
    assert out["set"]["using_fallback"] is True
    assert out["keys"] == {"result": ["during", "plan"], "using_fallback": True}
    assert out["stats"]["using_fallback"] is True
    for refused in (out["episode"], out["lesson"]):
        assert refused.startswith("memwork: ") and f"Redis at {server.url}" in refused
        assert "\n" not in refused
    assert out["after"] == {"plan": "ship", "during": 1}
    err = errlog.read_text()
    assert len(_lines(err, "working memory is kept in this process's memory")) == 1
    assert len(_lines(err, "answers again: wrote back 1 working-memory write")) == 1


@pytest.mark.slow
def test_the_http_door_keeps_answering_working_memory(server: RedisServer, url: str) -> None:
    import httpx2

    from tests.http_server import Served, client

    served = Served(url, python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0"))
    try:

        def post(name: str, **body: Any) -> httpx2.Response:
            return client().post(f"{served.url}/v1/{name}", json=body, timeout=60)

        assert post("wm_set", session="run-5", key="plan", value="ship").status_code == 200
        server.stop()
        got = post("wm_get", session="run-5", key="plan")
        assert got.status_code == 200 and got.json()["using_fallback"] is True
        assert got.headers["memwork-using-fallback"] == "true"
        listed = post("wm_list", session="run-5")
        assert [r["key"] for r in listed.json()] == ["plan"]
        assert listed.headers["memwork-using-fallback"] == "true"  # a list says it here
        refused = post("record_episode", episode=EPISODE)
        assert refused.status_code == 503 and refused.json()["kind"] == "unavailable"
        assert f"Redis at {server.url}" in refused.json()["error"]
        server.start()
        wait_for(
            lambda: "memwork-using-fallback" not in post("wm_stats", session="run-5").headers,
            "the HTTP door to use Redis again",
        )
    finally:
        code, rest = served.stop()
    assert code == 0, rest
    assert len(_lines(rest, "working memory is kept in this process's memory")) == 1


def test_shared_keys_stay_visible_and_scoped_writes_are_written_back(
    server: RedisServer, url: str
) -> None:
    with Memory(url, agent="bot") as memory:
        sid = memory.start_session(project="web")["id"]
        memory.wm_set(None, "deploy", "friday", scope="project:web")
        assert memory.wm_get(sid, "deploy")["scope"] == "project:web"
        server.stop()
        seen = memory.wm_get(sid, "deploy")
        assert (seen["value"], seen["scope"], seen["using_fallback"]) == (
            "friday",
            "project:web",
            True,
        )
        memory.wm_set(None, "freeze", True, scope="project:web")
        assert memory.wm_exists(sid, "freeze")["scope"] == "project:web"
        server.start()
        wait_for(lambda: not memory.wm_stats(sid)["using_fallback"], "the write-back")
    with Memory(url) as fresh:
        assert fresh.wm_get_all(sid) == {
            "deploy": "friday",
            "freeze": True,
            "_scopes": {"deploy": "project:web", "freeze": "project:web"},
        }


def test_closing_after_redis_returns_writes_back_at_once(
    server: RedisServer, url: str, capfd: pytest.CaptureFixture[str]
) -> None:
    memory = Memory(url)
    memory.wm_set("run-6", "a", 1)
    server.stop()
    memory.scratch_add("run-6", "kept meanwhile")
    server.start()
    memory.close()  # no working-memory call came after the return: closing writes back
    err = capfd.readouterr().err
    assert len(_lines(err, "answers again: wrote back 1 working-memory write")) == 1
    with Memory(url) as fresh:
        assert [e["text"] for e in fresh.scratch_list("run-6")] == ["kept meanwhile"]


def test_isolation_holds_on_the_fallback(server: RedisServer, url: str) -> None:
    import subprocess
    import sys

    from memwork.core.base.errors import NotFound

    done = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", url, "config", "set", "isolation", "agent"],
        capture_output=True,
        text=True,
        env=python_env(MEMWORK_NOW=NOW),
    )
    assert done.returncode == 0, done.stderr
    with Memory(url, agent="alice") as alice:
        alice.wm_set(None, "style", "giraffe", scope="agent:alice")
    bob = Memory(url, agent="bob")
    try:
        sid = bob.start_session(project="web")["id"]
        bob.wm_set(None, "deploy", "friday", scope="project:web")
        assert bob.wm_get_all(sid) == {"deploy": "friday", "_scopes": {"deploy": "project:web"}}
        with pytest.raises(NotFound):
            bob.wm_get(None, "style", scope="agent:alice")
        server.stop()
        assert bob.wm_get(sid, "deploy")["using_fallback"] is True
        with pytest.raises(NotFound):  # the fallback keeps the store's settings
            bob.wm_get(None, "style", scope="agent:alice")
        server.start()
        wait_for(lambda: not bob.wm_stats(sid)["using_fallback"], "Redis again")
    finally:
        bob.close()


# -- a process that starts while Redis is down ------------------------------------------------
@pytest.fixture
def down(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server on a port where nothing listens yet (the test starts it)."""
    own = RedisServer(tmp_path / "redis-down", fsync="always")
    own.folder.mkdir()
    yield own
    own.stop()


def test_memory_starts_while_redis_is_down_and_writes_back_when_it_starts(
    down: RedisServer, capfd: pytest.CaptureFixture[str]
) -> None:
    url = f"{down.url}/1"
    memory = Memory(url, agent="bot")  # refused with StoreUnreachable before the fix
    try:
        assert memory.using_fallback is True
        assert memory.wm_set("run-7", "plan", "step one")["using_fallback"] is True
        assert memory.wm_task("run-7", task_id="t1", step=1, total=4)["using_fallback"] is True
        assert memory.scratch_add("run-7", "noted while Redis was down")["using_fallback"] is True
        got = memory.wm_get("run-7", "plan")
        assert (got["value"], got["using_fallback"]) == ("step one", True)
        # Every other call refuses in one line naming the store, as it does mid-run.
        with pytest.raises(StoreUnreachable) as refused:
            memory.record_episode(EPISODE)
        assert f"cannot reach Redis at {down.url}" in str(refused.value)
        assert "\n" not in str(refused.value)
        err = capfd.readouterr().err
        assert len(_lines(err, "working memory is kept in this process's memory")) == 1

        down.start()
        wait_for(lambda: memory.wm_stats("run-7")["using_fallback"] is False, "the write-back")
        assert memory.using_fallback is False
        err = capfd.readouterr().err
        assert len(_lines(err, "answers again: wrote back 3 working-memory writes")) == 1
        assert memory.record_episode(EPISODE)  # the store is open now
    finally:
        memory.close()
    with Memory(url) as fresh:
        assert fresh.wm_get_all("run-7") == {"plan": "step one"}
        assert fresh.wm_task("run-7")["current_step"] == 1
        assert [e["text"] for e in fresh.scratch_list("run-7")] == ["noted while Redis was down"]
        assert [e["actor"] for e in fresh.history(table="working_memory")[:3]] == ["api:bot"] * 3


def test_memory_started_while_redis_is_down_says_what_is_lost_on_close(
    down: RedisServer, capfd: pytest.CaptureFixture[str]
) -> None:
    memory = Memory(f"{down.url}/1")
    memory.wm_set("run-8", "a", 1)
    memory.close()
    err = capfd.readouterr().err
    assert len(_lines(err, "1 working-memory write kept in this process's memory")) == 1


@pytest.mark.slow
def test_the_mcp_server_starts_while_redis_is_down(down: RedisServer, tmp_path: Path) -> None:
    url = f"{down.url}/1"

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["set"] = await tool(client, "wm_set", session="run-9", key="plan", value="ship")
        out["get"] = await tool(client, "wm_get", session="run-9", key="plan")
        out["episode"] = await tool_error(client, "record_episode", episode=EPISODE)
        down.start()
        deadline = time.monotonic() + 30
        while (await tool(client, "wm_stats", session="run-9"))["using_fallback"]:
            assert time.monotonic() < deadline, "the MCP server never wrote back"
            await anyio.sleep(0.02)
        out["after"] = await tool(client, "wm_get_all", session="run-9")
        return out

    errlog = tmp_path / "mcp-stderr.txt"
    out = _mcp_with_stderr(url, body, errlog)
    assert out["set"]["using_fallback"] is True
    assert (out["get"]["value"], out["get"]["using_fallback"]) == ("ship", True)
    assert out["episode"].startswith("memwork: ") and f"Redis at {down.url}" in out["episode"]
    assert out["after"] == {"plan": "ship"}
    err = errlog.read_text()
    assert len(_lines(err, "working memory is kept in this process's memory")) == 1
    assert len(_lines(err, "answers again: wrote back 1 working-memory write")) == 1
    with Memory(url) as fresh:
        assert fresh.wm_get_all("run-9") == {"plan": "ship"}


@pytest.mark.slow
def test_the_http_door_starts_while_redis_is_down(down: RedisServer) -> None:
    import httpx2

    from tests.http_server import Served, client

    url = f"{down.url}/1"
    served = Served(url, python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0"))
    try:

        def post(name: str, **body: Any) -> httpx2.Response:
            return client().post(f"{served.url}/v1/{name}", json=body, timeout=60)

        done = post("wm_set", session="run-10", key="plan", value="ship")
        assert done.status_code == 200 and done.json()["using_fallback"] is True
        assert done.headers["memwork-using-fallback"] == "true"
        refused = post("record_episode", episode=EPISODE)
        assert refused.status_code == 503 and f"Redis at {down.url}" in refused.json()["error"]
        down.start()
        wait_for(
            lambda: "memwork-using-fallback" not in post("wm_stats", session="run-10").headers,
            "the HTTP door to use Redis again",
        )
        assert post("wm_get_all", session="run-10").json() == {"plan": "ship"}
    finally:
        code, rest = served.stop()
    assert code == 0, rest
    said = served.banner + rest  # the fallback's line comes before the "serving" one
    assert len(_lines(said, "working memory is kept in this process's memory")) == 1
    assert len(_lines(said, "answers again: wrote back 1 working-memory write")) == 1


@pytest.mark.slow
def test_an_agent_token_while_redis_is_down_is_unavailable_not_a_server_error(
    down: RedisServer,
) -> None:
    import httpx2

    from tests.http_server import Served

    token = "operator-token-for-the-fallback-test"
    served = Served(f"{down.url}/1", python_env(MEMWORK_NOW=NOW, MEMWORK_TOKEN=token))
    try:
        # Agent tokens are kept in the store: none can be checked while it does not answer.
        refused = httpx2.post(
            f"{served.url}/v1/wm_get",
            json={"session": "run-11", "key": "plan"},
            headers={"Authorization": "Bearer mwa_not-checkable-now"},
            timeout=60,
        )
        assert refused.status_code == 503, refused.text
        assert refused.json()["kind"] == "unavailable"
        assert f"cannot reach Redis at {down.url}" in refused.json()["error"]
        # The operator's token needs no store: working memory answers from the fallback.
        kept = httpx2.post(
            f"{served.url}/v1/wm_set",
            json={"session": "run-11", "key": "plan", "value": "ship"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
        assert kept.status_code == 200 and kept.json()["using_fallback"] is True
    finally:
        code, rest = served.stop()
    assert code == 0, rest
