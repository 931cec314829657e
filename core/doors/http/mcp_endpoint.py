"""``/mcp`` of the HTTP door, with the MCP SDK loaded on its first request.

Importing the SDK costs ~1.4 s of CPU (it builds several hundred pydantic models for two
protocol versions), more than everything else ``memwork serve`` does before it answers.
Many HTTP clients never call ``/mcp``: they get a server that answers ~1 s sooner, and the
first MCP client waits that second once. The import runs in a worker thread, so the
other routes keep answering meanwhile.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

import anyio
from starlette.types import Message, Receive, Scope, Send

from ...ops.memory import Memory
from ...ops.operations import Op
from .routes import json_response

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from starlette.routing import BaseRoute


#: A body up to this size is read through memwork's own checks first (the SDK reads
#: every body whole anyway); a bigger one goes to the SDK as it comes.
CHECKED_BODY = 1 << 20


def _json_body(scope: Scope) -> bool:
    """Whether the request says its body is JSON (else the SDK refuses it, 415)."""
    for name, value in scope.get("headers", ()):
        if name == b"content-type":
            media: bytes = value.split(b";")[0].strip().lower()
            return media == b"application/json"
    return False


async def _read_some(receive: Receive, limit: int) -> tuple[list[Message], bool]:
    """The request's messages up to ``limit`` bytes of body (a chunk past it too), and
    whether they hold the whole body."""
    read: list[Message] = []
    size = 0
    while True:
        message = await receive()
        read.append(message)
        if message["type"] != "http.request":
            return read, False  # the client went away: the SDK hears it as it would have
        size += len(message.get("body", b""))
        if not message.get("more_body", False):
            return read, True
        if size > limit:
            return read, False


def _replayed(read: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives the messages already read, then what comes next."""
    pending = list(read)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


def _load_sdk() -> None:
    # The SDK's modules only: the server is built on the event loop's thread, where the
    # SDK's objects expect to be made.
    from ..mcp import server  # noqa: F401


class McpOnFirstCall:
    """The ASGI endpoint of ``/mcp``: builds the MCP server (the same as ``memwork mcp``,
    tools run in worker threads) on the first request, has ``start`` run its sessions,
    then hands every request to the SDK's own endpoint."""

    def __init__(
        self,
        memory: Memory,
        *,
        cap: int,
        tools: Sequence[Op] | None,
        start: Callable[[MCPServer], Awaitable[bool]],
    ) -> None:
        """``start`` runs the server's sessions for as long as the door runs; False when
        the door is stopping (the request is then refused)."""
        self._memory = memory
        self._cap = cap
        self._tools = tools
        self._start = start
        self._lock = anyio.Lock()
        self._route: BaseRoute | None = None
        #: Called with the server once it is built, before it serves (a benchmark adds its
        #: baseline tool this way).
        self.when_built: list[Callable[[MCPServer], None]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = self._route or await self._load()
        if route is None:
            response = json_response({"error": "the server is stopping"}, status=503)
            await response(scope, receive, send)
            return
        if scope.get("method") == "POST" and _json_body(scope):
            messages, whole = await _read_some(receive, CHECKED_BODY)
            if whole:
                from ..mcp.wire import Refused, read_line

                read = read_line(b"".join(m.get("body", b"") for m in messages))
                if isinstance(read, Refused):
                    # The SDK would answer in its own words, without the id, or take a
                    # request whose id is null for a notification (202, no answer).
                    error = {"code": read.code, "message": read.message}
                    answer = {"jsonrpc": "2.0", "id": read.id, "error": error}
                    await json_response(answer, status=400)(scope, receive, send)
                    return
            receive = _replayed(messages, receive)
        await route.handle(scope, receive, send)

    async def _load(self) -> BaseRoute | None:
        async with self._lock:
            if self._route is not None:
                return self._route
            await anyio.to_thread.run_sync(_load_sdk)
            from mcp.server.transport_security import TransportSecuritySettings

            from ..mcp.server import build_server

            server = build_server(self._memory, threaded=True, tools=self._tools)
            for prepare in self.when_built:
                prepare(server)
            # The door's guard checks hosts and tokens for every route; the SDK's own Host
            # check would refuse a token-holding client that reaches the server by its
            # network name.
            app = server.streamable_http_app(
                streamable_http_path="/mcp",
                max_request_body_size=self._cap,
                transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            )
            if not await self._start(server):
                return None
            self._route = app.routes[0]  # /mcp, the SDK's only route here
            return self._route
