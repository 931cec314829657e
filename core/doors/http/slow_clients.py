"""A deadline for a request's headers: a client that opens a connection and never
finishes its request's head is dropped.

uvicorn waits for a request's headers as long as the client keeps the
connection open (its keep-alive timer stops at the first byte), so clients that
send half a request, or a byte now and then, would each hold a connection and
its memory for ever. Here every request's head must be whole within
:data:`HEADER_TIMEOUT` seconds (``MEMWORK_HTTP_HEADER_TIMEOUT``) of the
connection opening, or of the previous response on a kept-alive connection; the
clock is not restarted by bytes that trickle in, so the time a slow client holds
a connection is bounded, and h11 bounds the head's size (16 KiB). A dropped
client gets a JSON 408 and the connection is closed. A body is not timed: the
routes read it at their own pace, capped in size by the guard; nor is a connection
once it has become a WebSocket (the viewer's).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from ...base.errors import InvalidInput

#: Seconds a client has to send a request's headers.
HEADER_TIMEOUT = 10.0
HEADER_TIMEOUT_ENV = "MEMWORK_HTTP_HEADER_TIMEOUT"


def header_timeout() -> float:
    """``MEMWORK_HTTP_HEADER_TIMEOUT`` seconds, else :data:`HEADER_TIMEOUT`."""
    text = os.environ.get(HEADER_TIMEOUT_ENV, "").strip()
    if not text:
        return HEADER_TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 3600:
        raise InvalidInput(
            HEADER_TIMEOUT_ENV, f"must be a number of seconds above 0, at most 3600 (got {text!r})"
        )
    return seconds


def _timeout_answer(seconds: float) -> bytes:
    body = orjson.dumps(
        {
            "error": f"memwork: the request's headers did not arrive within {seconds:g} s",
            "kind": "timeout",
        }
    )
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


class HeaderDeadline(H11Protocol):
    """uvicorn's h11 protocol with a deadline on every request's head."""

    timeout = HEADER_TIMEOUT

    _deadline: asyncio.TimerHandle | None = None
    _waiting_after: object = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the clock for the first request's head."""
        super().connection_made(transport)
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        # The head is in once a new request cycle starts.
        self._waiting_after = self.cycle
        self._deadline = self.loop.call_later(self.timeout, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def handle_events(self) -> None:
        """Parse what came in; stop the clock when a request's head is whole."""
        super().handle_events()
        if self._deadline is not None and self.cycle is not self._waiting_after:
            self._disarm()

    def handle_websocket_upgrade(self, event: Any) -> None:
        """The head was whole and the connection is a WebSocket's from now on (the
        viewer's): the clock stops, or its 408 would land inside the socket's frames."""
        self._disarm()
        super().handle_websocket_upgrade(event)

    def on_response_complete(self) -> None:
        """Start the clock for the next request on a kept-alive connection."""
        if not self.transport.is_closing():
            self._arm()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or self.cycle is not self._waiting_after:
            return
        self.transport.write(_timeout_answer(self.timeout))
        self.transport.close()


def protocol_with_deadline(seconds: float) -> type[HeaderDeadline]:
    """The protocol class uvicorn builds a connection with, for ``seconds``."""
    return type("HeaderDeadlineProtocol", (HeaderDeadline,), {"timeout": seconds})
