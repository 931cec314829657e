"""`memwork serve --search-workers N`: searches in worker processes, one store for all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.conftest import python_env
from tests.http_server import Served, client

NOW = "2026-11-01T12:00:00Z"


def _env() -> dict[str, str]:
    return python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0")


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=_env(),
    )


def post(server: Served, name: str, body: Any, **headers: str) -> httpx2.Response:
    return client().post(f"{server.url}/v1/{name}", json=body, headers=headers, timeout=60)


def workers_of(server: Served) -> list[int]:
    """The server's search workers (its children but Python's resource tracker)."""
    pid = server.process.pid
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return [p for p in found if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child the server has not reaped yet is a zombie: gone for our purpose.
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "State:\tZ" not in status.read_text()


@pytest.fixture
def db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> Path:
    """A store with a few notes in two agents' sessions, written by the CLI in this
    process (four interpreter start-ups a test saved; the tests' own CLI calls stay
    separate processes, as another writer beside the server is)."""
    from memwork.core.doors.cli.main import main

    monkeypatch.setenv("MEMWORK_NOW", NOW)
    path = tmp_path / "db"
    for agent, text in (("alpha", "rotated the TLS certificate on db-3"), ("beta", "db-3 disk")):
        capsysbinary.readouterr()
        assert main(["--db", str(path), "--json", "session", "start", "--agent", agent]) == 0
        sys.stdout.flush()
        sid = json.loads(capsysbinary.readouterr().out)["id"]
        assert main(["--db", str(path), "observe", "--session", sid, text]) == 0
    capsysbinary.readouterr()
    return path


@pytest.fixture
def pooled(db: Path) -> Iterator[Served]:
    server = Served(db, _env(), "--search-workers", "2")
    # The workers start one after another; on a busy machine a test could end before
    # the second is up. The operator is told when they are.
    server.wait_for("memwork: 2 of 2 search workers ready")
    yield server
    code, rest = server.stop()
    assert code == 0, rest


@pytest.mark.slow
def test_searches_answer_as_the_cli_does_and_see_every_write(pooled: Served, db: Path) -> None:
    hits = post(pooled, "search", {"query": "db-3 certificate"})
    assert hits.status_code == 200
    assert len(workers_of(pooled)) == 2
    assert hits.json() == json.loads(cli(db, "--json", "search", "db-3 certificate").stdout)
    # A write the server answered is in the next search, whichever process runs it.
    sid = post(pooled, "start_session", {"title": "later"}).json()["id"]
    for n in range(4):
        post(pooled, "observe", {"session": sid, "text": f"rebooted gateway-{n} at dawn"})
        found = post(pooled, "search", {"query": f"gateway-{n}"}).json()
        assert any(f"gateway-{n}" in hit["title"] for hit in found), found
    # And so is one made by another process (the CLI).
    assert cli(db, "observe", "--session", sid, "purged the kafka topic").returncode == 0
    assert any("kafka" in h["title"] for h in post(pooled, "search", {"query": "kafka"}).json())


@pytest.mark.slow
def test_bad_input_is_the_same_json_error_with_or_without_workers(pooled: Served, db: Path) -> None:
    cases = [{"query": "x", "limit": 5000}, {"query": "x", "since": "soon"}, {"query": "x" * 5000}]
    pooled_answers = [post(pooled, "search", body) for body in cases]
    plain = Served(db, _env())
    try:
        plain_answers = [post(plain, "search", body) for body in cases]
    finally:
        assert plain.stop()[0] == 0
    for body, mine, theirs in zip(cases, pooled_answers, plain_answers, strict=True):
        assert mine.status_code == theirs.status_code == 400, body
        assert mine.json() == theirs.json()
        assert mine.json()["kind"] == "invalid" and mine.json()["field"] in body


@pytest.mark.slow
def test_an_isolated_agent_searches_its_own_records_only(pooled: Served, db: Path) -> None:
    assert cli(db, "config", "set", "isolation", "agent").returncode == 0
    as_beta = post(pooled, "search", {"query": "db-3"}, **{"X-Memwork-Agent": "beta"}).json()
    assert as_beta and all("certificate" not in hit["title"] for hit in as_beta)
    as_alpha = post(pooled, "search", {"query": "db-3"}, **{"X-Memwork-Agent": "alpha"}).json()
    assert any("certificate" in hit["title"] for hit in as_alpha)


@pytest.mark.slow
def test_a_killed_worker_costs_no_answer_and_stopping_ends_the_rest(db: Path) -> None:
    server = Served(db, _env(), "--search-workers", "1")
    try:
        before = post(server, "search", {"query": "db-3"}).json()
        (worker,) = workers_of(server)
        os.kill(worker, signal.SIGKILL)
        after = post(server, "search", {"query": "db-3"})  # the server searches itself
        assert after.status_code == 200 and after.json() == before
    finally:
        assert server.stop()[0] == 0
    pooled = Served(db, _env(), "--search-workers", "2")
    post(pooled, "search", {"query": "db-3"})
    children = workers_of(pooled)
    assert pooled.stop()[0] == 0
    deadline = time.monotonic() + 10
    while any(alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(p) for p in children)


def test_a_worker_count_out_of_range_is_refused(db: Path) -> None:
    for count in ("17", "-1"):
        refused = cli(db, "serve", "--port", "0", "--search-workers", count)
        assert refused.returncode == 2
        assert refused.stderr.startswith("memwork: search-workers")
        assert f"must be between 0 and 16 (got {count})" in refused.stderr
