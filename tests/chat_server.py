"""A real chat-completions server on a free loopback port, for the model endpoint's tests.

It answers from a script: each request takes the next :class:`Reply` (the last one
repeats), so a test says "503, then a good answer" or "too slow" and reads back what
memwork sent (:attr:`ChatServer.requests`: headers and JSON body). No network: it
binds 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple


class Reply(NamedTuple):
    """One scripted answer: the status, the raw body, a delay before it is sent, and any
    further headers."""

    status: int = 200
    body: str = ""
    delay: float = 0.0
    headers: dict[str, str] | None = None


def completion(content: str) -> Reply:
    """A normal chat completion whose first choice says ``content``."""
    body = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }
    return Reply(200, json.dumps(body))


class ChatServer:
    """A scripted chat-completions endpoint; ``url`` is its ``/v1/chat/completions``."""

    def __init__(self) -> None:
        self.replies: list[Reply] = [completion("[]")]
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                size = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(size)
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": json.loads(raw)}
                    )
                    reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in (reply.headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a time-out test)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        host, port = self.httpd.server_address[:2]
        self.url = f"http://{host}:{port}/v1/chat/completions"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies`` (the last one repeats)."""
        with self._lock:
            self.replies = list(replies)
            self.requests.clear()

    def close(self) -> None:
        """Stop serving and free the port."""
        self.httpd.shutdown()
        self.httpd.server_close()
