"""Calling operations through the agents' doors in a test: the MCP server over stdio.

``mcp(db, body, **env)`` starts ``memwork --db DB mcp --tools all --agent AGENT`` with a real
SDK client, runs ``body(client)`` and stops it; ``tool`` returns a successful
call's JSON (or the context text), ``tool_error`` a failing call's message.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from tests.conftest import python_env

NOW = "2026-11-01T12:00:00Z"


def mcp(
    db: Path | str,
    body: Callable[[Client], Awaitable[Any]],
    *,
    agent: str | None = "tester",
    tools: str | None = "all",
    **env: str,
) -> Any:
    """Start ``memwork mcp`` on ``db`` (env: ``MEMWORK_NOW`` fixed, plus ``env``; every
    tool unless ``tools`` says otherwise, ``None``: the server's default), run ``body``
    with a connected client, stop the server; what ``body`` returned."""
    args = ["-m", "memwork", "--db", str(db), "mcp"]
    if tools:
        args += ["--tools", tools]
    if agent:
        args += ["--agent", agent]
    server = StdioServerParameters(
        command=sys.executable,
        args=args,
        env=python_env(**{"MEMWORK_NOW": NOW, "MEMWORK_FSYNC": "0", **env}),
    )

    async def main() -> Any:
        async with Client(server, cache=None) as client:
            return await body(client)

    return anyio.run(main)


async def tool(client: Client, name: str, **args: Any) -> Any:
    """A successful tool call's result: JSON decoded, or the context text."""
    result = await client.call_tool(name, args)
    text = result.content[0].text if result.content else ""
    assert not result.is_error, text
    if name == "get_context" and args.get("format", "text") == "text":
        return text
    return json.loads(text)


async def tool_error(client: Client, name: str, **args: Any) -> str:
    """A failing tool call's message."""
    result = await client.call_tool(name, args)
    assert result.is_error, result.content[0].text
    return str(result.content[0].text)
