"""A real headless Chromium driven over the DevTools protocol, for the viewer's tests.

The system's Chromium (Debian's ``chromium`` package) in a new empty profile, with
every background connection off (the test machines have no network). Commands go
over the page's DevTools WebSocket; what the page's own WebSockets receive and
send is collected from the Network domain's events, so a test can read what the
workbench drew and see the keys the page passed on.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--window-size=1280,800",
)
_ESCAPES = re.compile(r"\x1b(\[[0-9;?<>=$ ]*[A-Za-z@`~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][A-Z0-9])")


def chromium_path() -> str | None:
    """The system's Chromium, if installed."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screen_text(data: bytes) -> str:
    """Terminal output as text: escape sequences removed (enough to find words in it)."""
    return _ESCAPES.sub(" ", data.decode("utf-8", "replace"))


class Chromium:
    """One headless browser with one page; :meth:`close` ends it and its profile."""

    def __init__(self, executable: str) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="memwork-chromium-"))
        # Its singleton socket's folder goes in TMPDIR: inside the profile, it goes with
        # it (in /tmp, one folder was left behind by every run).
        scratch = self.profile / "tmp"
        scratch.mkdir()
        self.process = subprocess.Popen(
            [executable, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(scratch)},
            start_new_session=True,  # its helper processes end with it (close())
        )
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as answer:
            pages = [t for t in json.load(answer) if t["type"] == "page"]
        self._exits = contextlib.ExitStack()
        self.cdp: ClientConnection = self._exits.enter_context(
            connect(pages[0]["webSocketDebuggerUrl"], max_size=None)
        )
        self._ids = itertools.count(1)
        #: Bytes the page's WebSockets received (binary frames) and texts they sent.
        self.received = bytearray()
        self.sent: list[str] = []
        self.call("Network.enable")
        self.call("Page.enable")

    def call(self, method: str, timeout: float = 30, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its answer (events met on the way are kept)."""
        ident = next(self._ids)
        self.cdp.send(json.dumps({"id": ident, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.cdp.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        frame = message.get("params", {}).get("response", {})
        if method == "Network.webSocketFrameReceived" and frame.get("opcode") == 2:
            self.received += base64.b64decode(frame["payloadData"])
        elif method == "Network.webSocketFrameSent" and frame.get("opcode") == 1:
            self.sent.append(frame["payloadData"])

    def pump(self, seconds: float) -> None:
        """Collect events for ``seconds``."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                self._event(json.loads(self.cdp.recv(timeout=left)))
            except TimeoutError:
                return

    def wait_for_text(self, needle: str, timeout: float, *, after: int = 0) -> bool:
        """Whether ``needle`` shows in what the page's socket received (past byte
        ``after``) within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in screen_text(bytes(self.received[after:])):
                return True
            self.pump(0.2)
        return needle in screen_text(bytes(self.received[after:]))

    def evaluate(self, expression: str) -> Any:
        """A JavaScript expression's value in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def type_key(self, char: str) -> None:
        """Press and release a printable key, as a person would on the page."""
        code = f"Digit{char}" if char.isdigit() else f"Key{char.upper()}"
        common = {"key": char, "code": code, "windowsVirtualKeyCode": ord(char.upper())}
        self.call("Input.dispatchKeyEvent", type="keyDown", text=char, **common)
        self.call("Input.dispatchKeyEvent", type="keyUp", **common)

    def screenshot(self, path: Path) -> None:
        """The page as a PNG."""
        path.write_bytes(base64.b64decode(self.call("Page.captureScreenshot")["data"]))

    def close(self) -> None:
        """End the browser and remove its profile."""
        if hasattr(self, "_exits"):
            self._exits.close()
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # Its renderer and crash handler may outlive it and write into the profile after
        # it is removed (a folder was left in /tmp now and then): they go first.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        for _ in range(20):
            shutil.rmtree(self.profile, ignore_errors=True)
            if not self.profile.exists():
                break
            time.sleep(0.05)
