"""`memwork mcp --tools`: which tools an agent session is sent, over a real stdio client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork.core.ops.operations import door_ops
from tests.conftest import python_env
from tests.doors import mcp

AGENT_LOOP = {"get_context", "record_episode", "observe", "search", "get_record", "add_lesson"}
EVERY_TOOL = {op.mcp or op.name for op in door_ops("mcp")}
CURATION = {op.mcp or op.name for op in door_ops("mcp") if op.toolset == "curation"}


async def listed(client: Client) -> list[Any]:
    return list((await client.list_tools()).tools)


def names(tools: list[Any]) -> set[str]:
    return {tool.name for tool in tools}


def raw_tools_list(db: Path, *args: str, **env: str) -> str:
    """The ``tools/list`` answer line exactly as the server writes it on stdout."""
    server = subprocess.Popen(
        [sys.executable, "-m", "memwork", "--db", str(db), "mcp", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=python_env(**env),
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
    server.stdout.readline()  # the initialize answer
    line = server.stdout.readline().rstrip("\n")
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    return line


@pytest.mark.slow
def test_by_default_an_agent_gets_a_small_described_tool_set(tmp_path: Path) -> None:
    tools = mcp(tmp_path / "s", listed, tools=None)
    assert len(tools) <= 15
    assert names(tools) >= AGENT_LOOP | {"record_failure", "wm_set", "wm_get"}
    assert not names(tools) & CURATION  # no review, config, checkpoints or lint by default
    for tool in tools:
        assert tool.output_schema["type"] == "object", tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert len(prop.get("description", "")) > 5, (tool.name, name)
    line = raw_tools_list(tmp_path / "s")
    assert len(json.loads(line)["result"]["tools"]) == len(tools)
    assert len(line) <= 24_000, len(line)  # ~6k tokens in every session, not ~36k


@pytest.mark.slow
def test_all_lists_every_operation_and_sets_combine(tmp_path: Path) -> None:
    every = mcp(tmp_path / "s", listed, tools="all")
    assert names(every) == EVERY_TOOL
    both = names(mcp(tmp_path / "s", listed, tools="agent,curation"))
    agent = names(mcp(tmp_path / "s", listed, tools="agent"))
    assert both == agent | CURATION and len(both) == len(agent) + len(CURATION)
    # A single tool, alone or beside a set; each tool is listed once.
    assert names(mcp(tmp_path / "s", listed, tools="get_lesson")) == {"get_lesson"}
    mixed = mcp(tmp_path / "s", listed, tools=" agent , get_lesson,search")
    assert names(mixed) == agent | {"get_lesson"} and len(mixed) == len(agent) + 1


def test_a_tool_outside_the_set_is_not_there(tmp_path: Path) -> None:
    async def body(client: Client) -> Any:
        return await client.call_tool("list_config", {})

    result = mcp(tmp_path / "s", body, tools=None)
    assert result.is_error and "no tool named 'list_config'" in result.content[0].text


@pytest.mark.slow
def test_the_environment_picks_the_set_and_the_flag_wins(tmp_path: Path) -> None:
    chosen = mcp(tmp_path / "s", listed, tools=None, MEMWORK_MCP_TOOLS="curation")
    assert names(chosen) == CURATION
    flagged = mcp(tmp_path / "s", listed, tools="get_lesson", MEMWORK_MCP_TOOLS="curation")
    assert names(flagged) == {"get_lesson"}


@pytest.mark.slow
def test_an_unknown_set_or_name_is_refused_before_the_server_starts(tmp_path: Path) -> None:
    store = tmp_path / "s"
    for args, env in (
        (["--tools", "agent,curator"], {}),
        ([], {"MEMWORK_MCP_TOOLS": "curator"}),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "memwork", "--db", str(store), "mcp", *args],
            input="",
            capture_output=True,
            text=True,
            env=python_env(**env),
            timeout=60,
        )
        assert done.returncode == 2
        assert done.stdout == ""  # nothing on the protocol's channel
        assert done.stderr.strip() == (
            "memwork: tools: 'curator' is neither a tool set nor a tool (known sets: agent, "
            "workspace, curation, all; or a tool's name, e.g. get_lesson)"
        )
    assert not store.exists()
    served = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(store), "serve", "--port", "0"],
        capture_output=True,
        text=True,
        env=python_env(MEMWORK_MCP_TOOLS="agent,"),
        timeout=60,
    )
    assert served.returncode == 2 and "memwork: tools: a set or tool name is empty" in served.stderr
    assert "serving" not in served.stderr
