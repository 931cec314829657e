"""``memwork serve`` with a trivial echo beside the operations, for ``bench_http.py``.

The same application `memwork serve` runs (the guard, Starlette, uvicorn, the
MCP server in worker threads), plus ``POST /v1/echo`` (reads the JSON body the
way an operation's route does and sends it back) and an MCP tool ``echo``
(runs in a worker thread as every tool does, returns its text): the baselines
the operations are measured against, served the same way in the same process.

Usage: python bench/http_echo_server.py STORE [--search-workers N]  (prints the URL on
stdout)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp_types import CallToolResult, TextContent, ToolAnnotations  # noqa: E402
from mcp_types import Tool as MCPTool  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from memwork import Memory  # noqa: E402
from memwork.core.doors.http.app import HttpDoor, listen_on, max_body, run_uvicorn  # noqa: E402
from memwork.core.doors.http.routes import json_response, read_json  # noqa: E402


def main() -> None:
    memory = Memory(sys.argv[1], actor="mcp")
    cap = max_body()

    async def echo(request: Request) -> Response:
        return json_response(await read_json(request, cap))

    workers = int(sys.argv[3]) if sys.argv[2:3] == ["--search-workers"] else 0
    door = HttpDoor(
        memory,
        token=None,
        cap=cap,
        extra_routes=[Route("/v1/echo", echo, methods=["POST"])],
        search_workers=workers,
    )
    echo_tool = MCPTool(
        name="echo",
        description="Return the text unchanged.",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        annotations=ToolAnnotations(read_only_hint=True),
    )

    def add_echo(server: Any) -> None:
        """The baseline tool beside the store's (the door builds its MCP server on the
        first /mcp request)."""
        tools, call = server.list_tools, server.call_tool

        async def list_tools() -> list[MCPTool]:
            return [*(await tools()), echo_tool]

        async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            if name != "echo":
                return await call(name, arguments, context)
            text = await anyio.to_thread.run_sync(lambda: str(arguments.get("text", "")))
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=False)

        server.list_tools = list_tools
        server.call_tool = call_tool

    door.mcp.when_built.append(add_echo)
    sock = listen_on("127.0.0.1", 0)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    run_uvicorn(door, sock)


if __name__ == "__main__":
    main()
