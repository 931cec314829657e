"""A real ``memwork serve`` on a free loopback port, for the HTTP door's tests and benches."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path

import httpx2

_WHERE = re.compile(r"at (http://\S+) \(")


@functools.cache
def client() -> httpx2.Client:
    """One HTTP client for the tests' requests, each sent as a fresh client would.

    httpx's module functions (``httpx2.post`` ...) build a client, TLS context included
    (about 0.1 s), for every request. This one keeps no cookies and no connections
    between requests, so no request depends on an earlier one or on an earlier server.
    """
    no_cookies = CookieJar(DefaultCookiePolicy(allowed_domains=[]))
    return httpx2.Client(
        cookies=httpx2.Cookies(no_cookies),
        limits=httpx2.Limits(max_keepalive_connections=0),
    )


class Served:
    """``memwork --db DB serve --port 0`` in a child process; ``url`` once it listens."""

    def __init__(self, db: Path | str, env: dict[str, str], *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memwork", "--db", str(db), "serve", "--port", "0", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.banner = ""
        assert self.process.stderr is not None
        for line in self.process.stderr:  # the server says where it listens, then serves
            self.banner += line
            found = _WHERE.search(line)
            if found:
                self.url = found.group(1)
                break
        else:
            raise RuntimeError(f"memwork serve did not start: {self.banner}")

    def wait_for(self, text: str) -> None:
        """Read the server's stderr until a line holds ``text`` (kept in ``banner``)."""
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.banner += line
            if text in line:
                return
        raise RuntimeError(f"memwork serve never said {text!r}: {self.banner}")

    def stop(self) -> tuple[int, str]:
        """SIGTERM, as a service manager stops it; (exit code, the rest of stderr)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, rest = self.process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            _, rest = self.process.communicate()
        return self.process.returncode, rest
