"""Shared fixtures: stores on both backends, a clock, and an in-process CLI runner."""

from __future__ import annotations

import hashlib
import io
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from core import ids
from core.storage.store import Store

NOW = datetime(2026, 11, 1, 12, 0, 0, tzinfo=UTC)


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
    ):
        monkeypatch.delenv(name, raising=False)
    # fsync proves nothing without a power cut; the crash tests turn it back on.
    monkeypatch.setenv("MEMWORK_FSYNC", "0")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    ids.seed(None)


@pytest.fixture(params=["memory", "json"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh store on TinyDB-memory-backed tables and on real files."""
    if request.param == "memory":
        yield Store.in_memory()
    else:
        yield Store(tmp_path / "store")


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
def db(tmp_path: Path) -> Path:
    """A store path for CLI tests."""
    return tmp_path / "db"


@pytest.fixture
def cli(db: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture):  # noqa: ANN201
    """Run ``memwork --db <db> ARGS`` in-process; stdin can be given as text."""
    from core.cli.main import main

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


def folder_digest(folder: Path) -> dict[str, str]:
    """Name → sha256 of every file under a folder (the lock file aside)."""
    result = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.name != ".lock":
            result[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return result


def python_env(**extra: str) -> dict[str, str]:
    """Environment for child processes that run memwork code."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env
