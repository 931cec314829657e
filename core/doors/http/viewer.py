"""``/viewer``: the workbench itself, running in a browser tab.

Each browser tab that opens ``/viewer`` gets its own workbench process on the
served store (``memwork --db <store>``, the same program as in a terminal)
started with Textual's web driver. The page is a terminal emulator (the
``textual.js`` bundle that the textual-serve package ships, served from the
installed package, with its stylesheet and font: nothing comes from another
host); it talks to this server over a WebSocket at ``/viewer/ws``, and this
module passes bytes between that socket and the workbench's stdin/stdout.

What crosses the process boundary is the web driver's framing: a packet is one
type byte (``D`` terminal data, ``M`` a JSON meta message, ``P`` packed data),
four bytes of big-endian length, then the payload; the workbench first prints
the line ``__GANGLION__`` to say it speaks it. The browser sends JSON lists:
``["stdin", text]``, ``["resize", {"width", "height"}]``, ``["ping", t]``,
``["focus"]``, ``["blur"]``.

Who may open it is :mod:`core.doors.http.guard`'s business (the operator's
token, a cookie made from it, or loopback without a token; never an agent
token). The page at ``/viewer?token=…`` trades the token for that cookie and
sends the browser on to ``/viewer``, so the token does not stay in the address bar.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import orjson
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ...base.numbers import is_whole_number
from .guard import VIEWER_COOKIE, viewer_cookie

#: The package whose browser side (terminal emulator, stylesheet, font) the page loads.
ASSETS_PACKAGE = "textual_serve"
#: Workbenches running at once (each is a process); a tab past this is turned away.
MAX_VIEWERS = 8
#: How long a workbench has to quit once its tab closed before it is stopped.
QUIT_GRACE = 3.0
#: The line a workbench under the web driver prints before its first packet.
PRELUDE = b"__GANGLION__\n"
#: Terminal sizes a tab may ask for (a bad query falls back to 80x24).
SIZE_LIMITS = (10, 1000)

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>memwork workbench</title>
<link rel="stylesheet" href="/viewer/static/css/xterm.css">
<style>
@font-face {
  font-family: "Roboto Mono";
  src: url("/viewer/static/fonts/RobotoMono-VariableFont_wght.ttf") format("truetype");
}
html, body { margin: 0; height: 100%; background: #0c181f; }
#terminal { position: absolute; inset: 0; }
#ended { display: none; position: absolute; inset: 0; z-index: 10;
  align-items: center; justify-content: center; flex-direction: column;
  color: #eee; background: #0c181fe0; font: 16px "Roboto Mono", monospace; }
body.-closed #ended { display: flex; }
#ended button { margin-top: 1em; padding: .5em 2em; font: inherit; cursor: pointer; }
</style>
<script>
// The socket is on this page's own host and port, whatever name reached it.
document.addEventListener("DOMContentLoaded", () => {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  document.getElementById("terminal").dataset.sessionWebsocketUrl =
    scheme + location.host + "/viewer/ws";
});
</script>
<script src="/viewer/static/js/textual.js"></script>
</head>
<body>
<div id="ended"><div>The workbench has closed.</div>
<button type="button" onclick="location.reload()">Open it again</button></div>
<div id="terminal" class="textual-terminal" data-font-size="16"></div>
</body>
</html>
"""


def assets_folder() -> Path | None:
    """Where the installed textual-serve package keeps its browser files (None: not
    installed). Found without importing the package, which would import textual."""
    spec = importlib.util.find_spec(ASSETS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "static"
    return folder if (folder / "js" / "textual.js").is_file() else None


def encode_packet(kind: bytes, payload: bytes) -> bytes:
    """One packet for the workbench's stdin: type byte, 4-byte length, payload."""
    return kind + len(payload).to_bytes(4, "big") + payload


def _size(value: str | None, default: int) -> int:
    low, high = SIZE_LIMITS
    if value is None or not is_whole_number(value):
        return default
    return min(high, max(low, int(value)))


def workbench_command(location: str) -> list[str]:
    """The workbench on the served store, as a child of this Python."""
    return [sys.executable, "-m", "memwork", "--db", location]


def workbench_environment(width: int, height: int) -> dict[str, str]:
    """The child's environment: this one, Textual's web driver, the tab's size; not the
    server's token (the workbench opens the store itself and needs none)."""
    env = {k: v for k, v in os.environ.items() if k != "MEMWORK_TOKEN"}
    env.update(
        TEXTUAL_DRIVER="textual.drivers.web_driver:WebDriver",
        TEXTUAL_FPS="60",
        TEXTUAL_COLOR_SYSTEM="truecolor",
        TERM_PROGRAM="textual",
        COLUMNS=str(width),
        ROWS=str(height),
    )
    return env


class Viewer:
    """The ``/viewer`` routes for one served store, and the workbenches they started."""

    def __init__(self, location: str, *, token: str | None) -> None:
        self.location = location
        self.token = token
        self.processes: set[Process] = set()
        self.assets = assets_folder()

    def routes(self) -> list[BaseRoute]:
        """The page, its assets and the socket."""
        found: list[BaseRoute] = [
            Route("/viewer", self.page, methods=["GET"]),
            WebSocketRoute("/viewer/ws", self.socket),
        ]
        if self.assets is not None:
            found.append(Mount("/viewer/static", app=StaticFiles(directory=self.assets)))
        return found

    async def page(self, request: Request) -> Response:
        """The page; with ``?token=``, first the cookie and a redirect without it."""
        if self.assets is None:
            return HTMLResponse(
                "memwork: the viewer needs the textual-serve package (pip install "
                "textual-serve), which ships the page's terminal emulator",
                status_code=501,
            )
        if "token" in request.query_params and self.token is not None:
            # The guard let the request in, so the token is the operator's.
            response: Response = RedirectResponse("/viewer", status_code=303)
            response.set_cookie(
                VIEWER_COOKIE,
                viewer_cookie(self.token),
                path="/viewer",
                httponly=True,
                samesite="strict",
            )
            return response
        return HTMLResponse(PAGE, headers={"cache-control": "no-store"})

    async def socket(self, websocket: WebSocket) -> None:
        """One tab: start its workbench, pass bytes both ways, stop it when either ends."""
        if len(self.processes) >= MAX_VIEWERS:
            await websocket.close(code=1013, reason=f"at most {MAX_VIEWERS} viewers at once")
            return
        width = _size(websocket.query_params.get("width"), 80)
        height = _size(websocket.query_params.get("height"), 24)
        await websocket.accept()
        async with self._workbench(width, height) as process:
            async with anyio.create_task_group() as group:

                async def from_workbench() -> None:
                    await self._relay_out(process, websocket)
                    group.cancel_scope.cancel()  # the workbench quit: the tab is done

                group.start_soon(from_workbench)
                try:
                    await self._relay_in(websocket, process)
                finally:
                    group.cancel_scope.cancel()
        with contextlib.suppress(RuntimeError, OSError):
            await websocket.close()

    @contextlib.asynccontextmanager
    async def _workbench(self, width: int, height: int) -> AsyncIterator[Process]:
        process = await anyio.open_process(
            workbench_command(self.location),
            env=workbench_environment(width, height),
            stderr=None,  # the workbench's own complaints go where the server's go
        )
        self.processes.add(process)
        try:
            yield process
        finally:
            self.processes.discard(process)
            with anyio.CancelScope(shield=True):
                await self._end(process)

    async def _end(self, process: Process) -> None:
        """Ask the workbench to quit; stop it if it has not within the grace period."""
        if process.returncode is None:
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                assert process.stdin is not None
                await process.stdin.send(encode_packet(b"M", b'{"type": "quit"}'))
            with anyio.move_on_after(QUIT_GRACE):
                await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        await process.aclose()

    async def _relay_in(self, websocket: WebSocket, process: Process) -> None:
        """The browser's keys, clicks and size to the workbench, until the tab goes."""
        assert process.stdin is not None
        stdin = process.stdin
        try:
            async for text in websocket.iter_text():
                try:
                    message: Any = orjson.loads(text)
                    kind = message[0]
                except (orjson.JSONDecodeError, IndexError, KeyError, TypeError):
                    continue  # not the page's: ignored
                if kind == "stdin" and isinstance(message[1], str):
                    await stdin.send(encode_packet(b"D", message[1].encode()))
                elif kind == "resize" and isinstance(message[1], dict):
                    size = message[1]
                    meta = {
                        "type": "resize",
                        "width": _size(str(size.get("width")), 80),
                        "height": _size(str(size.get("height")), 24),
                    }
                    await stdin.send(encode_packet(b"M", orjson.dumps(meta)))
                elif kind == "ping":
                    await websocket.send_text(orjson.dumps(["pong", message[1]]).decode())
                elif kind in ("focus", "blur"):
                    await stdin.send(encode_packet(b"M", orjson.dumps({"type": kind})))
        except (WebSocketDisconnect, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return

    async def _relay_out(self, process: Process, websocket: WebSocket) -> None:
        """The workbench's screen to the browser, until it quits."""
        assert process.stdout is not None
        stdout = BufferedByteReceiveStream(process.stdout)
        try:
            # Anything before the prelude (a warning) is not for the terminal.
            while (await stdout.receive_until(b"\n", 65536)) + b"\n" != PRELUDE:
                pass
            while True:
                kind = await stdout.receive_exactly(1)
                size = int.from_bytes(await stdout.receive_exactly(4), "big")
                payload = await stdout.receive_exactly(size)
                if kind == b"D":
                    await websocket.send_bytes(payload)
                elif kind == b"M" and orjson.loads(payload).get("type") == "exit":
                    return
                # Other meta messages (open a URL, deliver a file) have no use here.
        except (
            anyio.EndOfStream,
            anyio.IncompleteRead,
            anyio.DelimiterNotFound,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            WebSocketDisconnect,
            RuntimeError,  # the socket closed under a send
        ):
            return

    def stop(self) -> None:
        """The server is stopping: every workbench it started stops too."""
        for process in list(self.processes):
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.terminate()
