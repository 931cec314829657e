"""What every request to ``memwork serve`` passes before it reaches a route.

- ``/livez`` is always open (a load balancer's health check carries no token).
- With ``MEMWORK_TOKEN`` set, every other route wants ``Authorization: Bearer
  <token>``, compared in constant time (:func:`hmac.compare_digest`); a missing or
  wrong token is 401 with a JSON error and ``WWW-Authenticate: Bearer``.
- Without a token the server listens on loopback only (``serve`` refuses any
  other address), and a request whose ``Host`` is not a loopback name is refused
  (403): a web page that rebinds its own name to 127.0.0.1 cannot reach the store.
- A request that says its body is larger than the cap is refused (413) before
  it is read; the routes stop reading a streamed body at the cap as well.

Plain ASGI, not Starlette's ``BaseHTTPMiddleware``: the event stream and MCP's
streamed responses pass through untouched.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/livez"})
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def host_name(host_header: str) -> str:
    """The name part of a ``Host`` header (``[::1]:3111`` → ``[::1]``)."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


async def send_error(
    send: Send,
    status: int,
    message: str,
    kind: str,
    headers: tuple[tuple[bytes, bytes], ...] = (),
) -> None:
    """A JSON error: ``{"error": "memwork: …", "kind": …}`` with ``status``."""
    body = orjson.dumps({"error": message, "kind": kind})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Authentication, the loopback rule and the body cap, in front of every route."""

    def __init__(self, app: ASGIApp, *, token: str | None, max_body: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body = max_body

    def authorized(self, headers: dict[bytes, bytes]) -> bool:
        """Whether the request carries the server's bearer token (constant-time check)."""
        if self.token is None:
            return True
        scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
        # Compared whatever the scheme, so a wrong scheme costs what a wrong token does.
        matches = hmac.compare_digest(given.strip(), self.token)
        return matches and scheme.lower() == b"bearer"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.token is None:
            host = host_name(headers.get(b"host", b"").decode("latin-1"))
            if host not in LOOPBACK_NAMES:
                await send_error(
                    send,
                    403,
                    f"memwork: this server answers loopback requests only (Host {host!r}); set "
                    "MEMWORK_TOKEN to serve other hosts",
                    "forbidden",
                )
                return
        elif not self.authorized(headers):
            await send_error(
                send,
                401,
                "memwork: a bearer token is required (Authorization: Bearer $MEMWORK_TOKEN)",
                "unauthorized",
                ((b"www-authenticate", b'Bearer realm="memwork"'),),
            )
            return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_body:
            await send_error(
                send,
                413,
                f"memwork: the request body is over {self.max_body} bytes",
                "too_large",
            )
            return
        await self.app(scope, receive, send)
