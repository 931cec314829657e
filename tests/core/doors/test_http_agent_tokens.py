"""Agent tokens: over HTTP an agent's identity comes from its own token, not a header."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import python_env
from tests.http_server import Served, client

NOW = "2026-11-01T12:00:00Z"
TOKEN = "s3cret-operator-token-for-the-tests"
EPISODE = {"task_id": "deploy-api", "score": 0.3, "steps": 4, "summary": "Rolled back worker-7"}


def _env(**extra: str) -> dict[str, str]:
    return python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0", **extra)


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=_env(),
    )


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    """A server that wants a bearer token, on a store whose agents are isolated."""
    assert cli(tmp_path / "db", "config", "set", "isolation", "agent").returncode == 0
    server = Served(tmp_path / "db", _env(MEMWORK_TOKEN=TOKEN))
    yield server
    code, rest = server.stop()
    assert code == 0, rest


def issue(db: Path, agent: str) -> str:
    done = cli(db, "--json", "agent-token", "add", agent)
    assert done.returncode == 0, done.stderr
    given = json.loads(done.stdout)
    assert given["agent"] == agent and given["token"].startswith("mwa_")
    return str(given["token"])


def post(server: Served, name: str, body: Any = None, **headers: str) -> httpx2.Response:
    return client().post(f"{server.url}/v1/{name}", json=body or {}, headers=headers, timeout=60)


def bearer(token: str, **more: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **more}


@pytest.mark.slow
def test_a_request_with_an_agent_token_acts_as_that_agent(guarded: Served, tmp_path: Path) -> None:
    db = tmp_path / "db"
    coder = issue(db, "coder")
    written = post(guarded, "record_episode", {"episode": EPISODE}, **bearer(coder))
    assert written.status_code == 200, written.text
    # Isolated: the episode is coder's, seen by coder, not by another agent.
    assert post(guarded, "search", {"query": "worker-7"}, **bearer(coder)).json()
    rival = bearer(TOKEN, **{"X-Memwork-Agent": "rival"})
    assert post(guarded, "search", {"query": "worker-7"}, **rival).json() == []
    # Naming itself is fine; naming another agent is refused before anything runs.
    same = post(
        guarded, "search", {"query": "worker-7"}, **bearer(coder, **{"X-Memwork-Agent": "coder"})
    )
    assert same.status_code == 200 and same.json()
    other = post(
        guarded,
        "record_episode",
        {"episode": EPISODE},
        **bearer(coder, **{"X-Memwork-Agent": "rival"}),
    )
    assert other.status_code == 403
    assert other.json()["kind"] == "forbidden" and "coder" in other.json()["error"]
    assert coder not in other.text
    history = post(guarded, "history", {"limit": 10}, **bearer(coder)).json()
    assert "http:coder" in {e["actor"] for e in history}


@pytest.mark.slow
def test_mcp_and_the_event_stream_take_the_agent_token(guarded: Served, tmp_path: Path) -> None:
    db = tmp_path / "db"
    coder = issue(db, "coder")

    async def main() -> Any:
        http = httpx2.AsyncClient(headers=bearer(coder), timeout=60)
        transport = streamable_http_client(f"{guarded.url}/mcp", http_client=http)
        async with http, Client(transport, cache=None) as client:
            return await client.call_tool("record_episode", {"episode": EPISODE})

    assert not anyio.run(main).is_error
    history = post(guarded, "history", {"limit": 10}, **bearer(coder)).json()
    assert "mcp:coder" in {e["actor"] for e in history}
    with httpx2.stream("GET", f"{guarded.url}/v1/events", headers=bearer(coder), timeout=60) as r:
        assert r.status_code == 200
    wrong = httpx2.get(
        f"{guarded.url}/v1/events", headers=bearer(coder, **{"X-Memwork-Agent": "x"}), timeout=60
    )
    assert wrong.status_code == 403


@pytest.mark.slow
def test_an_agent_named_beyond_ascii_is_the_same_agent_at_every_door(
    guarded: Served, tmp_path: Path
) -> None:
    """A header's bytes are read as UTF-8, as every other door reads a name: over HTTP,
    ``café`` was ``cafÃ©`` (another agent, which isolation kept from café's records)
    and café naming itself next to its own token was refused as naming another."""
    db = tmp_path / "db"
    cafe = issue(db, "café")
    named = {"X-Memwork-Agent": "café".encode()}
    for headers in (bearer(cafe), {**bearer(cafe), **named}, {**bearer(TOKEN), **named}):
        done = client().post(
            f"{guarded.url}/v1/record_episode",
            json={"episode": EPISODE},
            headers=headers,
            timeout=60,
        )
        assert done.status_code == 200, done.text

    async def main() -> Any:
        http = httpx2.AsyncClient(headers={**bearer(TOKEN), **named}, timeout=60)
        transport = streamable_http_client(f"{guarded.url}/mcp", http_client=http)
        async with http, Client(transport, cache=None) as mcp:
            return await mcp.call_tool("record_episode", {"episode": EPISODE})

    assert not anyio.run(main).is_error
    history = post(guarded, "history", {"limit": 10}, **bearer(cafe)).json()
    assert {e["actor"] for e in history if e["table"] == "episodes"} == {"http:café", "mcp:café"}
    # Seen as café's own (isolated): all four episodes.
    assert len(post(guarded, "search", {"query": "worker-7"}, **bearer(cafe)).json()) == 4
    for headers in (bearer(cafe), bearer(TOKEN)):
        bad = client().post(
            f"{guarded.url}/v1/search",
            json={"query": "worker-7"},
            headers={**headers, "X-Memwork-Agent": b"\xff\xfe"},
            timeout=60,
        )
        assert bad.status_code == 400, bad.text
        assert bad.json()["error"] == "memwork: X-Memwork-Agent: must be UTF-8 text"


@pytest.mark.slow
def test_a_revoked_token_is_refused_at_once(guarded: Served, tmp_path: Path) -> None:
    db = tmp_path / "db"
    coder = issue(db, "coder")
    for _ in range(6):  # past the first few, the token is looked up on the event loop
        assert post(guarded, "list_lessons", **bearer(coder)).status_code == 200
    done = cli(db, "agent-token", "revoke", "coder")
    assert done.returncode == 0 and "revoked 1" in done.stdout
    refused = post(guarded, "list_lessons", **bearer(coder))
    assert refused.status_code == 401 and refused.json()["kind"] == "unauthorized"
    assert coder not in refused.text
    # A token never issued is refused alike; the operator's token works as before.
    assert post(guarded, "list_lessons", **bearer("mwa_" + "x" * 43)).status_code == 401
    assert post(guarded, "list_lessons", **bearer(TOKEN)).status_code == 200


def test_the_token_is_kept_nowhere_but_with_its_holder(tmp_path: Path) -> None:
    db = tmp_path / "db"
    coder = issue(db, "coder")
    issue(db, "reviewer")
    listed = cli(db, "--json", "agent-token", "list")
    assert [r["agent"] for r in json.loads(listed.stdout)] == ["coder", "reviewer"]
    assert coder not in listed.stdout and "sha256" not in listed.stdout
    plain = cli(db, "agent-token", "list").stdout
    assert "coder\t" in plain and "mwa_" not in plain
    for path in db.rglob("*"):
        if path.is_file():
            assert coder.encode() not in path.read_bytes(), path
    exported = cli(db, "export")
    assert exported.returncode == 0 and coder not in exported.stdout
    assert "agent_tokens" not in json.loads(exported.stdout)["tables"]
    history = cli(db, "--json", "history").stdout
    assert coder not in history and "coder" in history


def test_unknown_agent_and_bad_names_are_refused(tmp_path: Path) -> None:
    db = tmp_path / "db"
    missing = cli(db, "agent-token", "revoke", "nobody")
    assert missing.returncode == 2 and "not found: nobody" in missing.stderr
    bad = cli(db, "agent-token", "add", "bad\x01agent")
    assert bad.returncode == 2 and "AGENT" in bad.stderr
    assert not db.exists()  # refused before the store was made


@pytest.mark.slow
def test_while_review_is_on_tokens_take_the_curator_key(tmp_path: Path) -> None:
    db = tmp_path / "db"
    key = tmp_path / "curator.key"
    assert cli(db, "curator", "init", str(key)).returncode == 0
    assert cli(db, "--curator-key", str(key), "config", "set", "review", "on").returncode == 0
    refused = cli(db, "agent-token", "add", "coder")
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.strip().splitlines()) == 1 and "curator key" in refused.stderr
    assert json.loads(cli(db, "--json", "agent-token", "list").stdout) == []
    assert cli(db, "--curator-key", str(key), "agent-token", "add", "coder").returncode == 0
    assert cli(db, "agent-token", "revoke", "coder").returncode == 2
    assert cli(db, "--curator-key", str(key), "agent-token", "revoke", "coder").returncode == 0


@pytest.mark.slow
def test_restoring_a_checkpoint_never_brings_a_revoked_token_back(tmp_path: Path) -> None:
    db = tmp_path / "db"
    issue(db, "coder")
    checkpoint = json.loads(cli(db, "--json", "checkpoint", "create").stdout)["id"]
    assert cli(db, "agent-token", "revoke", "coder").returncode == 0
    assert cli(db, "checkpoint", "restore", checkpoint).returncode == 0
    assert json.loads(cli(db, "--json", "agent-token", "list").stdout) == []
