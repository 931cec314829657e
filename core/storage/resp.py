"""A small Redis client: one connection speaking RESP2 over TCP or TLS.

memwork needs a dozen commands (a Lua script per commit, HGETALL per table,
SET/EVALSHA for the lease, SUBSCRIBE for live updates), and ``memwork
context`` runs on every agent step: importing redis-py costs 0.2-0.4 s on
this kind of machine (it loads asyncio, logging and TLS support up front),
more than the whole command on a folder store. This module is the protocol
and nothing else: no retries (the caller knows which commands are safe to
repeat), no connection pool (one store, one connection, one lock).

Replies come back as Python values: ``bytes`` for bulk and simple strings,
``int``, ``None``, ``list``; an error reply raises :class:`ReplyError` (or is
returned as one inside :meth:`Connection.pipeline`).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .url import StoreURL

if TYPE_CHECKING:
    from io import BufferedReader

CONNECT_TIMEOUT_S = 5.0
#: A commit that copies a large store runs one script for seconds.
READ_TIMEOUT_S = 120.0

Arg = bytes | str | int | float


class ReplyError(Exception):
    """The server answered a command with an error (``-ERR …``)."""

    @property
    def code(self) -> str:
        """The error's first word (``ERR``, ``WRONGPASS``, ``NOSCRIPT``…)."""
        return str(self).split(" ", 1)[0]


class ConnectionLost(Exception):
    """The connection failed or closed; whether the last command ran is unknown."""


def _encode(args: tuple[Arg, ...], out: bytearray) -> None:
    out += b"*%d\r\n" % len(args)
    for arg in args:
        if isinstance(arg, bytes):
            data = arg
        elif isinstance(arg, str):
            data = arg.encode("utf-8")
        elif isinstance(arg, int | float) and not isinstance(arg, bool):
            data = repr(arg).encode()
        else:
            raise TypeError(f"cannot send {type(arg).__name__} to Redis")
        out += b"$%d\r\n" % len(data)
        out += data
        out += b"\r\n"


class Connection:
    """One connection to the server named by ``url``, authenticated and on its database."""

    def __init__(self, url: StoreURL, *, read_timeout: float = READ_TIMEOUT_S) -> None:
        self.url = url
        self.read_timeout = read_timeout
        self._sock: socket.socket | None = None
        self._file: BufferedReader | None = None
        #: Held for a whole request/reply exchange (the lease heartbeat shares nothing else).
        self.mutex = threading.Lock()

    # -- connecting -----------------------------------------------------------------------
    def connect(self, then: Sequence[tuple[Arg, ...]] | None = None) -> list[Any]:
        """Open the socket and run the handshake (AUTH, SELECT); raises on refusal.

        ``then``: commands sent in the same write as the handshake (one round trip
        for both); their replies are returned, errors as :class:`ReplyError` values.
        """
        self.close()
        try:
            sock = socket.create_connection((self.url.host, self.url.port), CONNECT_TIMEOUT_S)
        except OSError as exc:
            raise ConnectionLost(_why(exc)) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.url.tls:
                sock = self._wrap_tls(sock)
            sock.settimeout(self.read_timeout)
        except OSError as exc:
            sock.close()
            raise ConnectionLost(_why(exc)) from None
        self._sock = sock
        self._file = sock.makefile("rb")
        handshake: list[tuple[Arg, ...]] = []
        if self.url.password is not None:
            if self.url.username:
                handshake.append(("AUTH", self.url.username, self.url.password))
            else:
                handshake.append(("AUTH", self.url.password))
        if self.url.db:
            handshake.append(("SELECT", self.url.db))
        replies = self._exchange(handshake + list(then or ()))
        for reply in replies[: len(handshake)]:
            if isinstance(reply, ReplyError):
                self.close()
                raise reply
        return replies[len(handshake) :]

    def _wrap_tls(self, sock: socket.socket) -> socket.socket:
        import ssl

        context = ssl.create_default_context(cafile=self.url.ca_certs)
        if self.url.cert_reqs == "none":
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif self.url.cert_reqs == "optional":
            context.check_hostname = False
            context.verify_mode = ssl.CERT_OPTIONAL
        return context.wrap_socket(sock, server_hostname=self.url.host)

    @property
    def connected(self) -> bool:
        """Whether a socket is open (it may still turn out to be dead)."""
        return self._sock is not None

    def close(self) -> None:
        """Close the socket (safe to call twice)."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = None
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None

    # -- commands -----------------------------------------------------------------------
    def call(self, *args: Arg) -> Any:
        """Send one command and return its reply (an error reply raises)."""
        (reply,) = self.pipeline([args])
        if isinstance(reply, ReplyError):
            raise reply
        return reply

    def pipeline(self, commands: Sequence[tuple[Arg, ...]]) -> list[Any]:
        """Send several commands in one write, read every reply (errors returned, not raised)."""
        with self.mutex:
            if self._sock is None:
                self.connect()
            return self._exchange(commands)

    def _exchange(self, commands: Sequence[tuple[Arg, ...]]) -> list[Any]:
        if not commands:
            return []
        out = bytearray()
        for args in commands:
            _encode(args, out)
        try:
            assert self._sock is not None
            self._sock.sendall(out)
            return [self._read() for _ in commands]
        except (OSError, ConnectionLost) as exc:
            self.close()
            raise ConnectionLost(_why(exc)) from None

    def send(self, *args: Arg) -> None:
        """Send a command without reading its reply (pub/sub subscriptions)."""
        out = bytearray()
        _encode(args, out)
        with self.mutex:
            if self._sock is None:
                self.connect()
            try:
                assert self._sock is not None
                self._sock.sendall(out)
            except OSError as exc:
                self.close()
                raise ConnectionLost(_why(exc)) from None

    def read_push(self) -> Any:
        """The next message pushed to a subscribed connection; blocks until one comes.

        No timeout: a timeout in the middle of a buffered read can lose bytes.
        Another thread ends the wait with :meth:`shutdown`.
        """
        if self._sock is None:
            raise ConnectionLost("not connected")
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        try:
            return self._read()
        except (OSError, ConnectionLost, ValueError) as exc:
            self.close()
            raise ConnectionLost(_why(exc)) from None

    def shutdown(self) -> None:
        """Wake a thread blocked in :meth:`read_push` (it then sees a lost connection)."""
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _read(self) -> Any:
        assert self._file is not None  # set by connect(); a closed connection never reads
        line = self._file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionLost("the server closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"$":
            size = int(rest)
            if size < 0:
                return None
            data = self._file.read(size + 2)
            if len(data) != size + 2:
                raise ConnectionLost("the server closed the connection")
            return data[:-2]
        if kind == b"*":
            count = int(rest)
            if count < 0:
                return None
            return [self._read() for _ in range(count)]
        if kind == b":":
            return int(rest)
        if kind == b"+":
            return rest
        if kind == b"-":
            return ReplyError(rest.decode("utf-8", "replace"))
        raise ConnectionLost(f"unexpected reply from the server: {line[:40]!r}")


def _why(exc: BaseException) -> str:
    if isinstance(exc, ConnectionLost):
        return str(exc)
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, socket.gaierror):
        return f"unknown host ({exc.strerror})"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower() if exc.strerror[:1].isupper() else exc.strerror
    return str(exc) or type(exc).__name__
