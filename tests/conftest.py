"""Shared fixtures: stores on both backends, a clock, and an in-process CLI runner."""

from __future__ import annotations

import hashlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import settings

from memwork.core.base import ids
from memwork.core.storage.store import Store
from tests.redis_server import RedisServer, redis_digest

NOW = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)

# Property tests draw new examples on every developer's run (that is how they find
# bugs); the CI run (.ci/run sets MEMWORK_CI) draws the same ones every time, so
# whether a change lands never depends on a random draw.
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("MEMWORK_CI"):
    settings.load_profile("ci")

#: ``make test-quick``: the in-memory backend and the folder store only (no Redis), and
#: no test marked ``slow``; the whole suite (``make test``) runs everything.
QUICK = bool(os.environ.get("MEMWORK_TEST_QUICK"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a quick run, leave out slow tests and every test that needs a Redis server."""
    if not QUICK:
        return
    kept, left = [], []
    for item in items:
        needs_redis = "redis_server" in getattr(item, "fixturenames", ())
        (left if needs_redis or item.get_closest_marker("slow") else kept).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the developer's store, clock or config."""
    for name in (
        "MEMWORK_DB",
        "MEMWORK_NOW",
        "MEMWORK_FAILURE_MEMORY",
        "MEMWORK_CONSOLIDATE_CMD",
        "MEMWORK_CONSOLIDATE_EVERY",
        "MEMWORK_AGENT",
        "MEMWORK_LLM_URL",
        "MEMWORK_LLM_MODEL",
        "MEMWORK_LLM_API_KEY",
        "MEMWORK_LLM_TIMEOUT",
        "MEMWORK_LLM_RETRIES",
        "GROQ_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    # fsync proves nothing without a power cut; the crash tests turn it back on.
    monkeypatch.setenv("MEMWORK_FSYNC", "0")
    # Every commit that keeps unchanged documents' bytes checks them against a full
    # encoding (core/storage/codec.py): a document changed in place would show here.
    monkeypatch.setenv("MEMWORK_VERIFY_WRITES", "1")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    ids.seed(None)


@pytest.fixture(params=["memory"] if QUICK else ["memory", "json", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh store on TinyDB-memory-backed tables, on real files and in Redis."""
    if request.param == "memory":
        yield Store.in_memory()
    elif request.param == "redis":
        opened = Store(request.getfixturevalue("redis_url"))
        yield opened
        opened.close()
    else:
        yield Store(tmp_path / "store")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on a loopback port for the whole session.

    AOF on without fsync, as the folder tests run with MEMWORK_FSYNC=0: fsync proves
    nothing without a crash, and the server-crash tests start their own server with
    ``appendfsync always``.
    """
    server = RedisServer(tmp_path_factory.mktemp("redis-server"), fsync="no")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    """The URL of an empty Redis database of its own for this test."""
    return redis_server.fresh_db()


@pytest.fixture
def now() -> datetime:
    """A fixed instant for time-dependent rules."""
    return NOW


@dataclass
class CliResult:
    """What one CLI call did."""

    code: int
    out: str
    err: str

    def json(self):  # noqa: ANN201 - any JSON value
        import json

        return json.loads(self.out)


@pytest.fixture
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A store for CLI tests: a folder path, or (modules that set ``BOTH_BACKENDS``) also
    a Redis URL."""
    if getattr(request, "param", "folder") == "redis":
        return request.getfixturevalue("redis_url")
    return tmp_path / "db"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """CLI suites that set ``BOTH_BACKENDS = True`` run on a folder and on Redis; a test
    marked ``folder_only`` looks at files and runs on the folder alone."""
    if (
        "db" in metafunc.fixturenames
        and getattr(metafunc.module, "BOTH_BACKENDS", False)
        and metafunc.definition.get_closest_marker("folder_only") is None
    ):
        metafunc.parametrize("db", ["folder"] if QUICK else ["folder", "redis"], indirect=True)


@pytest.fixture
def cli(db: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture):  # noqa: ANN201
    """Run ``memwork --db <db> ARGS`` in-process; stdin can be given as text."""
    from memwork.core.doors.cli.main import main

    def run(*args: str, stdin: str | None = None, now: str | None = None) -> CliResult:
        if now is not None:
            monkeypatch.setenv("MEMWORK_NOW", now)
        capsysbinary.readouterr()
        stream = io.TextIOWrapper(io.BytesIO((stdin or "").encode()), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", stream)
        code = main(["--db", str(db), *args])
        sys.stdout.flush()
        captured = capsysbinary.readouterr()
        return CliResult(code, captured.out.decode(), captured.err.decode())

    return run


def folder_digest(folder: Path | str) -> dict[str, str]:
    """Name → sha256 of every file under a folder (the lock file aside); for a Redis
    URL, key → sha256 of its type, contents and expiry."""
    if isinstance(folder, str):
        return redis_digest(folder)
    result = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != ".lock":
            result[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return result


def folded(db: Path) -> Path:
    """A folder store whose table files hold everything (its log folded into them), for a
    test that reads or edits the files themselves."""
    Store(db).fold_log()
    return db


def resealed(table: Path) -> None:
    """Make ``store.json``'s checksum of a table file match the file again, after a test
    edited it by hand to plant data memwork would not write (a file whose bytes change
    behind memwork's back is refused as damaged otherwise)."""
    import json

    from memwork.core.storage.table_sums import checksum

    manifest_path = table.parent / "store.json"
    manifest = json.loads(manifest_path.read_bytes())
    manifest.setdefault("checksums", {})[table.name[: -len(".json")]] = checksum(table.read_bytes())
    manifest_path.write_text(json.dumps(manifest))


def stored_text(db: Path | str, table: str | None = None) -> str:
    """What the store keeps of one table (or of every table), as text: a folder's table
    files once its log is folded (and, for the whole store, the log: whatever was ever
    written there), or the JSON values of a Redis store's table hashes."""
    if isinstance(db, str):
        from tests.redis_server import client_for

        client = client_for(db)
        keys = [f"memwork:t:{table}"] if table else sorted(client.scan_iter("memwork:t:*"))
        return "".join(v.decode() for k in keys for v in client.hgetall(k).values())
    log = (db / "store.log").read_bytes().decode("utf-8", "replace") if not table else ""
    folded(db)
    paths = [db / f"{table}.json"] if table else sorted(db.glob("*.json"))
    return log + "".join(p.read_text() for p in paths)


def every_byte(db: Path | str, *, snapshots: bool = False) -> str:
    """Everything the store keeps: every file under a folder (checkpoints' snapshot
    files only when asked), or every key of a Redis database."""
    if isinstance(db, str):
        from tests.redis_server import client_for

        client = client_for(db)
        out = []
        for key in client.scan_iter(count=1000):
            if not snapshots and key.startswith(b"memwork:snap:"):
                continue
            kind = client.type(key).decode()
            if kind == "hash":
                out += [k.decode() + v.decode() for k, v in client.hgetall(key).items()]
            elif kind == "string":
                out.append(client.get(key).decode())
            elif kind == "set":
                out += [m.decode() for m in client.smembers(key)]
        return "\n".join(out)
    texts = []
    for path in sorted(db.rglob("*")):
        if path.is_file() and (snapshots or "snapshots" not in path.parts):
            texts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(texts)


def memwork_process(db: Path, *args: str, **env: str) -> str:
    """One whole ``memwork --db DB ARGS`` process, as an agent runs it (fsync off, ``env``
    added): what it printed; a non-zero exit fails the test."""
    return subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "MEMWORK_FSYNC": "0", **env},
    ).stdout


def python_env(**extra: str) -> dict[str, str]:
    """Environment for child processes that run memwork code."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def curator_args() -> tuple[str, str]:
    """``--curator-key FILE`` with the test user's key file (made by ``config set review
    on`` or the workbench's first decision; XDG_CONFIG_HOME is the test's own)."""
    from memwork.core.ledger.curator import default_key_file

    return ("--curator-key", str(default_key_file()))


def curator_for(store: Store, now: datetime):  # noqa: ANN201 - a Curator
    """A curator key registered for ``store`` (core calls that decide take it)."""
    from memwork.core.ledger import curator

    key, _ = curator.ensure_key_file()
    curator.register(store, key, now=now, actor="tui")
    return key
