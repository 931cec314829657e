"""The HTTP door's application and ``memwork serve``.

One process, one open store, three ways in: MCP over streamable HTTP at
``/mcp`` (the same server as ``memwork mcp``, tools in worker threads, loaded on the
first request: :mod:`core.doors.http.mcp_endpoint`), every
operation as JSON under ``/v1/`` (:mod:`core.doors.http.routes`), and the commits as
server-sent events at ``/v1/events`` (:mod:`core.doors.http.events`); ``/livez``
says the server is up. :class:`core.doors.http.guard.Guard` stands in front of all
of it (bearer token, loopback, body cap), and a client that does not finish a
request's headers in time is dropped (:mod:`core.doors.http.slow_clients`). The
workbench itself runs in a browser at ``/viewer`` (:mod:`core.doors.http.viewer`). The
router's own answers (no such route, a method a route does not take) are JSON
errors like every route's. Built on what the MCP SDK brings
(Starlette, uvicorn); nothing here parses HTTP by hand.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import os
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup, TaskStatus
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...base.errors import InvalidInput
from ...base.numbers import is_whole_number
from ...ops.memory import Memory
from ...ops.operations import Op
from ...ops.toolsets import chosen_tools
from ..commit_desk import CommitDesk
from ..quick_calls import QuickCalls
from .events import CommitFeed
from .exact_router import ExactRouter
from .guard import Guard
from .mcp_endpoint import McpOnFirstCall
from .routes import http_error, json_response, routes
from .search_pool import MAX_WORKERS, SearchPool
from .viewer import Viewer

if TYPE_CHECKING:
    from mcp.server import MCPServer

#: The largest request body (bytes); ``MEMWORK_HTTP_MAX_BODY`` changes it. One episode may
#: hold 100,000 characters in each text field, so a batch needs room.
MAX_BODY = 16 * 1024 * 1024
DEFAULT_HOST = "127.0.0.1"
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
DEFAULT_PORT = 3111


def bearer_token() -> str | None:
    """``MEMWORK_TOKEN``, or ``None`` when it is unset or empty.

    A token with spaces or a newline around it (a file read with its newline) is
    refused: clients send it without them, so every one of them would be locked out.
    """
    token = os.environ.get("MEMWORK_TOKEN", "")
    if token != token.strip():
        raise InvalidInput(
            "MEMWORK_TOKEN",
            "has whitespace around it, which no client sends: every request would be "
            "refused (remove the spaces or newline)",
        )
    return token or None


def max_body() -> int:
    """The body cap: ``MEMWORK_HTTP_MAX_BODY`` bytes, else :data:`MAX_BODY`."""
    text = os.environ.get("MEMWORK_HTTP_MAX_BODY", "").strip()
    if not text:
        return MAX_BODY
    if not is_whole_number(text) or int(text) < 1:
        raise InvalidInput("MEMWORK_HTTP_MAX_BODY", f"must be a number of bytes (got {text!r})")
    return int(text)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class HttpDoor:
    """The application for one open store, and how to stop what it keeps open."""

    def __init__(
        self,
        memory: Memory,
        *,
        token: str | None,
        cap: int = MAX_BODY,
        extra_routes: list[Route] | None = None,
        tools: Sequence[Op] | None = None,
        search_workers: int = 0,
    ) -> None:
        """``extra_routes``: a benchmark's baseline, served the same way; ``tools``: what
        ``/mcp`` lists (default: every MCP operation); ``search_workers``: processes that
        run ``/v1/search`` (:mod:`core.doors.http.search_pool`; 0: this process does)."""
        self.memory = memory
        self.mcp = McpOnFirstCall(memory, cap=cap, tools=tools, start=self._run_sessions)
        #: The lifespan's task group, where MCP's sessions run once a client comes.
        self._group: TaskGroup | None = None
        self.feed = CommitFeed(lambda: memory.store)
        # The store as given (a Redis URL with its password): each tab's workbench opens it.
        self.viewer = Viewer(str(memory.path), token=token)
        self._stopping = anyio.Event()
        self.pool = (
            SearchPool(str(memory.path), search_workers, report=_say) if search_workers else None
        )

        async def livez(request: Request) -> Response:
            return json_response({"status": "ok"})

        async def events(request: Request) -> Response:
            return self.feed.response(request)

        self.starlette = Starlette(exception_handlers={HTTPException: http_error})
        # The same routes in the same order, each plain path found in one lookup (the
        # router runs the lifespan too).
        self.starlette.router = ExactRouter(
            [
                Route("/livez", livez, methods=["GET"]),
                Route("/v1/events", events, methods=["GET"]),
                *routes(memory, cap, self.pool),
                *self.viewer.routes(),
                *(extra_routes or []),
                Route("/mcp", self.mcp),
            ],
            lifespan=self._lifespan,
        )
        self.app = Guard(
            self.starlette,
            token=token,
            max_body=cap,
            agent_of=self.agent_of,
            quick_lookup=QuickCalls() if memory.wm_fallback is None else None,
        )

    def agent_of(self, token: str) -> str | None:
        """The agent an agent token was issued for (read from the store each time)."""
        from ...ledger.agent_tokens import agent_of_token

        return agent_of_token(self.memory.store, token)

    async def _run_sessions(self, server: MCPServer) -> bool:
        """Run ``server``'s MCP sessions in the lifespan's task group until the door stops
        (see stop()); False when it is stopping or not running."""

        async def sessions(*, task_status: TaskStatus[None]) -> None:
            async with server.session_manager.run():
                task_status.started()
                await self._stopping.wait()

        if self._group is None or self._stopping.is_set():
            return False
        await self._group.start(sessions)
        return True

    @contextlib.asynccontextmanager
    async def _lifespan(self, app: Starlette) -> AsyncIterator[None]:
        if self.pool is not None:
            self.pool.start()
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                group.start_soon(self.feed.run)
                yield
                self._stopping.set()
                group.cancel_scope.cancel()
        finally:
            self._group = None
            if self.pool is not None:
                # Every request has been answered by now: the workers are idle.
                await anyio.to_thread.run_sync(self.pool.stop)

    def stop(self) -> None:
        """Before the server waits for connections to close: end the event streams and
        MCP's sessions (their open streams would otherwise hold it for the whole grace
        period). Calls in flight finish: their writes are whole or not at all."""
        self.feed.close()
        self.viewer.stop()
        self._stopping.set()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def build_app(memory: Memory, *, token: str | None, cap: int = MAX_BODY) -> Any:
    """The ASGI application of the HTTP door for ``memory``'s store."""
    return HttpDoor(memory, token=token, cap=cap).app


def listen_on(host: str, port: int) -> socket.socket:
    """A listening socket (bound before the server starts, so a taken port is one line).

    Made with ``IPPROTO_TCP`` spelled out: asyncio turns Nagle's algorithm off only on
    sockets that say so, and uvicorn writes a response's head and body separately, so
    with it on every keep-alive response waited ~40 ms for the client's delayed ACK.
    """
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        # A name that resolves to nothing, or an address of no interface here, is the
        # host's fault; a port taken or forbidden is the port's.
        unknown = isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL
        field = "host" if unknown else "port"
        raise InvalidInput(field, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    return sock


@contextlib.contextmanager
def stop_signals_held() -> Iterator[threading.Event]:
    """From here on, SIGINT and SIGTERM are a request to stop, kept in the event.

    The server says where it listens before uvicorn is even imported; a service manager
    (or a test) that stops it in that moment asks for a clean stop too, and gets one:
    :func:`run_uvicorn` reads the event and stops at once.
    """
    asked = threading.Event()
    with _stops_handled_by(lambda *_: asked.set()):
        yield asked


@contextlib.contextmanager
def _stops_handled_by(handler: Any) -> Iterator[None]:
    """SIGINT and SIGTERM call ``handler`` inside the block; as they did after it."""
    previous = {sig: signal.signal(sig, handler) for sig in _STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


def serve(
    path: str | os.PathLike[str] | Path | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    tools: str | None = None,
    search_workers: int = 0,
) -> int:
    """Serve the store until interrupted (SIGINT / SIGTERM: a clean stop, exit 0).
    ``tools``: the sets and tool names ``/mcp`` lists (as ``memwork mcp --tools``);
    ``search_workers``: processes that run ``/v1/search`` (0: the server's own)."""
    from .slow_clients import header_timeout

    token = bearer_token()
    if not 0 <= port <= 65535:
        raise InvalidInput("port", f"must be between 0 and 65535 (got {port})")
    if not 0 <= search_workers <= MAX_WORKERS:
        raise InvalidInput(
            "search-workers", f"must be between 0 and {MAX_WORKERS} (got {search_workers})"
        )
    if token is None and not is_loopback(host):
        raise InvalidInput(
            "host",
            f"{host} is not a loopback address: without MEMWORK_TOKEN the server listens on "
            "loopback only (set MEMWORK_TOKEN to serve other machines)",
        )
    cap = max_body()
    deadline = header_timeout()
    chosen = chosen_tools(tools)
    # Held from before the first word, so a stop at any moment after it is clean.
    with stop_signals_held() as asked:
        memory = Memory(path, actor="mcp")
        door = HttpDoor(memory, token=token, cap=cap, tools=chosen, search_workers=search_workers)
        sock = listen_on(host, port)
        where = f"http://{host if ':' not in host else f'[{host}]'}:{sock.getsockname()[1]}"
        guard = (
            "bearer token required (MEMWORK_TOKEN)"
            if token
            else "no MEMWORK_TOKEN: loopback only, no authentication"
        )
        print(f"memwork: serving {memory.location} at {where} ({guard})", file=sys.stderr)
        print(
            f"memwork: MCP at {where}/mcp, operations at {where}/v1/, "
            f"the workbench at {where}/viewer",
            file=sys.stderr,
            flush=True,
        )
        if not search_workers:  # (workers each keep an index of their own)
            memory.warm_recall()
        desk = CommitDesk(memory)
        if desk.open():
            print(
                "memwork: agents' writes from other processes on this machine are committed "
                "here, together",
                file=sys.stderr,
                flush=True,
            )
        try:
            run_uvicorn(door, sock, header_timeout=deadline, asked=asked)
        finally:
            desk.close()
            sock.close()
            memory.close()
    return 0


def run_uvicorn(
    door: HttpDoor,
    sock: socket.socket,
    *,
    header_timeout: float | None = None,
    asked: threading.Event | None = None,
) -> None:
    """Serve ``door`` on ``sock`` until SIGINT or SIGTERM; then stop cleanly. A client
    whose request headers take over ``header_timeout`` seconds (default 10) is dropped
    (:mod:`core.doors.http.slow_clients`). ``asked``: a stop that came before serving
    began (:func:`stop_signals_held`); it is honoured as soon as uvicorn starts."""
    import uvicorn

    from .slow_clients import HEADER_TIMEOUT, protocol_with_deadline

    class Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            door.stop()
            await super().shutdown(sockets)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # A stop asked for (Ctrl-C, SIGTERM from a service manager) is the end of
            # serving, exit 0; uvicorn's own version raises the signal again afterwards.
            with _stops_handled_by(self.handle_exit):
                if asked is not None and asked.is_set():
                    self.should_exit = True
                yield

    config = uvicorn.Config(
        door.app,
        http=protocol_with_deadline(header_timeout or HEADER_TIMEOUT),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    Server(config).run(sockets=[sock])
