"""``memwork serve`` with a trivial echo beside the operations, for ``bench_http.py``.

The same application `memwork serve` runs (the guard, Starlette, uvicorn, the
MCP server in worker threads), plus ``POST /v1/echo`` (reads the JSON body the
way an operation's route does and sends it back) and an MCP tool ``echo``
(runs in a worker thread as every tool does, returns its text): the baselines
the operations are measured against, served the same way in the same process.

With ``--tantivy TEXTS.json`` (the notes the store holds, as ``bench_http_search.py``
writes them), ``POST /v1/tantivy`` searches the same notes with tantivy, a compiled
engine, behind the same door: the body read as the search route reads it, the search
run on the event loop or in a worker thread by the same rule, and hits of the same
shape (kind, id, title, score) sent back. What a compiled engine costs over HTTP here,
beside memwork's ``/v1/search``. It skips the operation's checks of the parameters and
the caller (``runner.check``, the actor), which only favours tantivy.

Usage: python bench/http_echo_server.py STORE [--search-workers N] [--tantivy TEXTS.json]
(prints the URL on stdout)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import anyio  # noqa: E402
from mcp_types import CallToolResult, TextContent, ToolAnnotations  # noqa: E402
from mcp_types import Tool as MCPTool  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from memwork import Memory  # noqa: E402
from memwork.core.doors.http.app import HttpDoor, listen_on, max_body, run_uvicorn  # noqa: E402
from memwork.core.doors.http.routes import json_response, read_json  # noqa: E402
from memwork.core.doors.quick_calls import QuickCalls, answered  # noqa: E402


def tantivy_route(texts_file: Path, cap: int) -> Route:
    """``POST /v1/tantivy``: the notes of ``texts_file`` searched by tantivy (see the
    module docstring)."""
    from recall_baselines import Tantivy

    texts = json.loads(texts_file.read_text())
    engine = Tantivy(texts)
    quick = QuickCalls()

    def hits(query: str, limit: int) -> list[dict[str, Any]]:
        return [
            {
                "kind": "observation",
                "id": f"note-{i}",
                "title": texts[i][:80],
                "score": round(score, 4),
            }
            for i, score in engine.scored(query, limit)
        ]

    async def endpoint(request: Request) -> Response:
        given = await read_json(request, cap)
        query, limit = str(given.get("query", "")), int(given.get("limit", 10))
        return json_response(await answered(quick, lambda: hits(query, limit)))

    return Route("/v1/tantivy", endpoint, methods=["POST"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store")
    parser.add_argument("--search-workers", type=int, default=0)
    parser.add_argument("--tantivy", type=Path, help="the notes' texts file: POST /v1/tantivy")
    args = parser.parse_args()
    memory = Memory(args.store, actor="mcp")
    cap = max_body()

    async def echo(request: Request) -> Response:
        return json_response(await read_json(request, cap))

    extra = [Route("/v1/echo", echo, methods=["POST"])]
    if args.tantivy:
        extra.append(tantivy_route(args.tantivy, cap))
    door = HttpDoor(
        memory,
        token=None,
        cap=cap,
        extra_routes=extra,
        search_workers=args.search_workers,
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
