"""What every request to ``memwork serve`` passes before it reaches a route.

- ``/livez`` is always open (a load balancer's health check carries no token).
- With ``MEMWORK_TOKEN`` set, every other route wants ``Authorization: Bearer
  <token>``, compared in constant time (:func:`hmac.compare_digest`); a missing or
  wrong token is 401 with a JSON error and ``WWW-Authenticate: Bearer``.
- Without a token the server listens on loopback only (``serve`` refuses any
  other address), and a request whose ``Host`` is not a loopback name is refused
  (403): a web page that rebinds its own name to 127.0.0.1 cannot reach the store.
- A bearer token that is an agent token (:mod:`core.ledger.agent_tokens`) is accepted
  too, with or without ``MEMWORK_TOKEN``: the request then acts as that agent at every
  route, as if it had sent ``X-Memwork-Agent: <agent>`` with the operator's token. One
  that names another agent in that header is refused (403); a token the store does
  not know (never issued, or revoked) is 401. The store is asked on every such
  request, so a revoke takes effect on the next one.
- A request that says its body is larger than the cap is refused (413) before
  it is read; the routes stop reading a streamed body at the cap as well.
- ``/viewer`` (the workbench in a browser, :mod:`core.doors.http.viewer`) is the
  operator's: an agent token is refused there (403), since the workbench acts on
  every record with no agent's limits. A browser cannot send a header when it
  follows a link, so under ``/viewer`` the operator's token is also taken as
  ``?token=`` and as the cookie the page sets from it (a keyed digest of the token,
  scoped to ``/viewer``, never the token itself); nowhere else. Its WebSocket passes
  the same checks, and one whose ``Origin`` is another site than the server it
  reaches is refused: a page elsewhere cannot drive the workbench through a
  browser that holds the cookie, nor through loopback without a token.

Plain ASGI, not Starlette's ``BaseHTTPMiddleware``: the event stream and MCP's
streamed responses pass through untouched.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

from ..quick_calls import QuickCalls, answered

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/livez"})
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
AGENT_HEADER = b"x-memwork-agent"
AGENT_TOKEN_PREFIX = b"mwa_"
#: The paths of the workbench in a browser (the operator's alone).
VIEWER_PREFIX = "/viewer"
#: The cookie that carries the viewer's credential (see :func:`viewer_cookie`).
VIEWER_COOKIE = "memwork_viewer"

#: The agent an agent token was issued for, or None (a blocking store read).
AgentLookup = Callable[[str], str | None]


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


def viewer_cookie(token: str) -> str:
    """The viewer's cookie for ``token``: a keyed digest, so the cookie jar never holds
    the token itself, and a new token makes every old cookie worthless."""
    return hmac.new(token.encode(), b"memwork viewer", hashlib.sha256).hexdigest()


def is_viewer(path: str) -> bool:
    """Whether ``path`` is the viewer's (``/viewer`` or below it)."""
    return path == VIEWER_PREFIX or path.startswith(VIEWER_PREFIX + "/")


def cookie_value(headers: dict[bytes, bytes], name: str) -> str | None:
    """The value of cookie ``name`` in the request's ``Cookie`` header, if any."""
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None


def query_value(scope: Scope, name: str) -> str | None:
    """The first ``name=`` of the request's query string, if any."""
    from urllib.parse import parse_qs

    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get(name)
    return values[0] if values else None


def same_origin(headers: dict[bytes, bytes]) -> bool:
    """Whether a WebSocket's ``Origin`` (when the client sent one) names the host and
    port the request was sent to (its ``Host``). Browsers always send it."""
    origin = headers.get(b"origin")
    if origin is None:
        return True  # not a browser: nothing a web page could have started
    _, sep, rest = origin.decode("latin-1").partition("://")
    return bool(sep) and rest == headers.get(b"host", b"").decode("latin-1")


class Guard:
    """Authentication, the loopback rule and the body cap, in front of every route."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        max_body: int,
        agent_of: AgentLookup | None = None,
        quick_lookup: QuickCalls | None = None,
    ) -> None:
        """``agent_of``: how an agent token is looked up (None: agent tokens are not
        taken); ``quick_lookup``: its run times, where a quick one may be made on the
        event loop."""
        self.app = app
        self.token = token.encode() if token else None
        self.max_body = max_body
        self.agent_of = agent_of
        #: The token lookups' last run times, on a store on disk (see quick_calls: a
        #: quick lookup is made on the event loop); None: always in a worker thread.
        self.quick_lookup = quick_lookup

    def authorized(self, headers: dict[bytes, bytes]) -> bool:
        """Whether the request carries the server's bearer token (constant-time check)."""
        if self.token is None:
            return True
        scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
        # Compared whatever the scheme, so a wrong scheme costs what a wrong token does.
        matches = hmac.compare_digest(given.strip(), self.token)
        return matches and scheme.lower() == b"bearer"

    def viewer_authorized(self, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        """Under ``/viewer``: the token as a header, as ``?token=`` or as the cookie."""
        if self.token is None or self.authorized(headers):
            return True
        token = self.token.decode()
        given = query_value(scope, "token")
        if given is not None and hmac.compare_digest(given.encode(), self.token):
            return True
        cookie = cookie_value(headers, VIEWER_COOKIE) or ""
        return hmac.compare_digest(cookie.encode(), viewer_cookie(token).encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if scope["type"] == "websocket":
            await self.socket(scope, receive, send, headers)
            return
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
        scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
        given = given.strip()
        if (
            self.agent_of is not None
            and scheme.lower() == b"bearer"
            and given.startswith(AGENT_TOKEN_PREFIX)
            and not (self.token is not None and hmac.compare_digest(given, self.token))
        ):
            if is_viewer(scope["path"]):
                await send_error(
                    send,
                    403,
                    "memwork: the viewer is the operator's: open it with MEMWORK_TOKEN, "
                    "not an agent token",
                    "forbidden",
                )
                return
            await self.as_agent(scope, receive, send, headers, given)
            return
        viewer = is_viewer(scope["path"])
        if not (self.viewer_authorized(scope, headers) if viewer else self.authorized(headers)):
            await send_error(
                send,
                401,
                "memwork: a bearer token is required (Authorization: Bearer $MEMWORK_TOKEN)",
                "unauthorized",
                ((b"www-authenticate", b'Bearer realm="memwork"'),),
            )
            return
        await self.capped(scope, receive, send, headers)

    async def socket(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes]
    ) -> None:
        """A WebSocket (only the viewer has one): the viewer's checks, and a page from
        another site is turned away. A refusal closes it before it opens (HTTP 403)."""
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        given = headers.get(b"authorization", b"").partition(b" ")[2].strip()
        agent_token = given.startswith(AGENT_TOKEN_PREFIX) and not (
            self.token is not None and hmac.compare_digest(given, self.token)
        )
        allowed = (
            is_viewer(scope["path"])
            and same_origin(headers)
            and (self.token is not None or host in LOOPBACK_NAMES)
            and not agent_token
            and self.viewer_authorized(scope, headers)
        )
        if not allowed:
            await receive()  # the client's connect
            await send({"type": "websocket.close", "code": 1008})
            return
        await self.app(scope, receive, send)

    async def as_agent(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        headers: dict[bytes, bytes],
        given: bytes,
    ) -> None:
        """A request carrying an agent token: refused unless the store knows the token,
        then passed on naming that agent (and no other)."""
        from ...base.errors import InvalidInput, StoreUnreachable, worded

        assert self.agent_of is not None
        lookup = self.agent_of
        try:
            agent = await answered(self.quick_lookup, lambda: lookup(given.decode("latin-1")))
        except StoreUnreachable as exc:
            # Tokens are kept in the store: while it does not answer none can be checked,
            # so the request is refused as every store call then is (not a server error).
            await send_error(send, 503, worded(exc), "unavailable")
            return
        if agent is None:
            # The message never repeats the token.
            await send_error(
                send,
                401,
                "memwork: the agent token is not known to this store (never issued, or revoked)",
                "unauthorized",
                ((b"www-authenticate", b'Bearer realm="memwork"'),),
            )
            return
        from ..header_text import header_text

        try:
            named = header_text(headers.get(AGENT_HEADER, b"").strip(), "X-Memwork-Agent")
        except InvalidInput as exc:
            await send_error(send, 400, worded(exc), "invalid")
            return
        if named and named != agent:
            await send_error(
                send,
                403,
                f"memwork: X-Memwork-Agent names {named!r}, but the agent token is "
                f"{agent!r}'s: a token acts as its own agent only",
                "forbidden",
            )
            return
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != AGENT_HEADER] + [
            (AGENT_HEADER, agent.encode())
        ]
        await self.capped(scope, receive, send, headers)

    async def capped(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes]
    ) -> None:
        """The body cap, then the application."""
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
