"""`memwork serve`: a real HTTP client against a real server on a loopback port."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import folder_digest, python_env
from tests.http_server import Served, client

NOW = "2026-11-01T12:00:00Z"
TOKEN = "s3cret-token-for-the-tests"
EPISODE = {"task_id": "deploy-api", "score": 0.3, "steps": 4, "summary": "Rolled back worker-7"}


def _env(**extra: str) -> dict[str, str]:
    return python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0", **extra)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """A server without a token (loopback only) on a fresh store."""
    server = Served(tmp_path / "db", _env())
    yield server
    code, rest = server.stop()
    assert code == 0, rest


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    """A server that wants the bearer token."""
    server = Served(tmp_path / "db", _env(MEMWORK_TOKEN=TOKEN, MEMWORK_HTTP_MAX_BODY="4096"))
    yield server
    code, rest = server.stop()
    assert code == 0, rest


def post(server: Served, name: str, body: Any = None, **headers: str) -> httpx2.Response:
    return client().post(f"{server.url}/v1/{name}", json=body or {}, headers=headers, timeout=60)


def cli(db: Path | str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(),
    )


@pytest.mark.slow
def test_without_a_token_it_says_so_and_serves_loopback_only(
    served: Served, tmp_path: Path
) -> None:
    assert "no MEMWORK_TOKEN: loopback only" in served.banner
    assert httpx2.get(f"{served.url}/livez").json() == {"status": "ok"}
    # A page that rebinds its own name to 127.0.0.1 is refused.
    rebound = httpx2.get(f"{served.url}/v1/openapi.json", headers={"Host": "evil.example:80"})
    assert rebound.status_code == 403 and rebound.json()["kind"] == "forbidden"
    # Anything but a loopback address needs a token to listen on.
    refused = cli(tmp_path / "other", "serve", "--host", "0.0.0.0", "--port", "0")
    assert refused.returncode == 2
    assert refused.stderr.startswith("memwork: host: 0.0.0.0 is not a loopback address")


@pytest.mark.slow
def test_a_stop_the_moment_it_says_where_it_listens_is_a_clean_stop(tmp_path: Path) -> None:
    # A service manager may stop it while uvicorn is still loading: exit 0, the store shut.
    for _ in range(3):
        server = Served(tmp_path / "db", _env())
        code, rest = server.stop()  # SIGTERM as soon as the first line is out
        assert code == 0, rest
        assert "Traceback" not in rest
    assert cli(tmp_path / "db", "--json", "stats").returncode == 0


def test_an_address_no_interface_has_is_the_hosts_fault_a_taken_port_the_ports() -> None:
    import socket as sockets

    from memwork.core.base.errors import InvalidInput
    from memwork.core.doors.http.app import listen_on

    for host in ("256.0.0.1", "10.255.255.1"):  # no such address; none of this machine's
        with pytest.raises(InvalidInput) as refused:
            listen_on(host, 0)
        assert refused.value.field == "host", refused.value
    taken = sockets.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        with pytest.raises(InvalidInput) as refused:
            listen_on("127.0.0.1", taken.getsockname()[1])
        assert refused.value.field == "port"
        assert "Address already in use" in refused.value.rule
    finally:
        taken.close()


@pytest.mark.slow
def test_operations_answer_as_the_cli_does(served: Served, tmp_path: Path) -> None:
    db = tmp_path / "db"
    ids = post(served, "record_episode", {"episode": EPISODE}, **{"X-Memwork-Agent": "coder"})
    assert ids.status_code == 200 and len(ids.json()["ids"]) == 1
    lesson = post(served, "add_lesson", {"text": "Canary every deploy", "tags": ["ops"]}).json()
    assert lesson["action"] == "created"
    context = post(served, "context", {"task": "deploy-api"})
    assert context.headers["content-type"] == "application/json"
    assert context.json() + "\n" == cli(db, "context", "--task", "deploy-api").stdout
    listed = post(served, "list_lessons").json()
    assert listed == json.loads(cli(db, "--json", "lesson", "list").stdout)
    hit = post(served, "search", {"query": "worker-7"}).json()[0]
    assert post(served, "get_record", {"id": hit["id"]}).json()["record"]["summary"] == (
        "Rolled back worker-7"
    )
    # Every write is audited with the caller's agent id (or as http).
    actors = [e["actor"] for e in post(served, "history", {"limit": 10}).json()]
    assert actors[-1] == "http:coder" and "http" in actors


@pytest.mark.slow
def test_errors_are_json_with_the_clis_line_and_a_4xx(served: Served, tmp_path: Path) -> None:
    db = tmp_path / "db"
    post(served, "set_slot", {"label": "persona", "text": "Be terse.", "limit": 20})
    before = folder_digest(db)
    cases = [
        ("context", {"budget": "lots"}, 400, None),
        ("context", {"budget": -1}, 400, ["context", "--budget", "-1"]),
        ("get_lesson", {"lesson": "les_nope"}, 404, ["lesson", "show", "les_nope"]),
        ("append_slot", {"label": "persona", "text": "x" * 30}, 400, None),
        ("replace_in_slot", {"label": "persona", "old": "absent", "new": "x"}, 400, None),
        ("create_slot", {"label": "persona"}, 409, ["slot", "create", "persona"]),
        (
            "add_lesson",
            {"text": "x", "scope": "team:a"},
            400,
            ["lesson", "add", "x", "--scope", "team:a"],
        ),
        ("search", {"query": "x", "nope": 1}, 400, None),
    ]
    for name, body, status, argv in cases:
        answer = post(served, name, body)
        assert answer.status_code == status, (name, answer.text)
        error = answer.json()
        assert error["error"].startswith("memwork: ") and "\n" not in error["error"]
        if argv is not None:
            assert error["error"] + "\n" == cli(db, *argv).stderr
    assert post(served, "context", {"budget": "lots"}).json() == {
        "error": "memwork: budget: must be an integer (got 'lots')",
        "kind": "invalid",
        "field": "budget",
    }
    # Not JSON (what a cross-site form sends), no such route, no such method.
    form = httpx2.post(
        f"{served.url}/v1/consolidate",
        content=b"a=1",
        headers={"content-type": "application/x-www-form-urlencoded"},
    )
    assert form.status_code == 415
    assert httpx2.post(f"{served.url}/v1/nope", json={}).json() == {
        "error": "memwork: no route /v1/nope (the operations are under /v1/, POST)",
        "kind": "not_found",
    }
    wrong_method = httpx2.get(f"{served.url}/v1/stats")
    assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"
    assert wrong_method.headers["content-type"] == "application/json"
    assert wrong_method.json() == {
        "error": "memwork: GET is not allowed on /v1/stats (use POST)",
        "kind": "method_not_allowed",
    }
    # The people's controls are not offered over HTTP.
    assert httpx2.post(f"{served.url}/v1/approve_proposal", json={}).status_code == 404
    assert folder_digest(db) == before


@pytest.mark.slow
def test_every_route_but_livez_wants_the_token(guarded: Served) -> None:
    assert "bearer token required" in guarded.banner
    spec = httpx2.get(
        f"{guarded.url}/v1/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}
    ).json()
    routes = [(method, path) for path, item in spec["paths"].items() for method in item]
    assert len(routes) > 40
    # The shared client (tests/http_server.py): a client of its own per request spent
    # almost all of this test's time building TLS contexts.
    for method, path in [*routes, ("post", "/mcp"), ("get", "/mcp")]:
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}):
            answer = client().request(method, f"{guarded.url}{path}", headers=headers, json={})
            expected = 200 if path == "/livez" else 401
            assert answer.status_code == expected, (method, path, headers, answer.text)
            if expected == 401:
                assert answer.headers["www-authenticate"].startswith("Bearer")
                assert answer.json()["kind"] == "unauthorized"
    ok = httpx2.post(
        f"{guarded.url}/v1/stats", json={}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert ok.status_code == 200 and "counts" in ok.json()


@pytest.mark.slow
def test_bodies_are_capped(guarded: Served) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    big = {"episode": {**EPISODE, "summary": "x" * 5000}}
    said = httpx2.post(f"{guarded.url}/v1/record_episode", json=big, headers=auth)
    assert said.status_code == 413 and said.json()["kind"] == "too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the route counts what it reads
        yield json.dumps(big).encode()

    streamed = httpx2.post(
        f"{guarded.url}/v1/record_episode",
        content=chunks(),
        headers={**auth, "content-type": "application/json"},
    )
    assert streamed.status_code == 413
    small = httpx2.post(f"{guarded.url}/v1/record_episode", json={"episode": EPISODE}, headers=auth)
    assert small.status_code == 200


def test_the_token_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import hmac

    from memwork.core.doors.http import guard

    seen: list[tuple[bytes, bytes]] = []
    compare = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(guard.hmac, "compare_digest", spy)
    door = guard.Guard(lambda *a: None, token=TOKEN, max_body=10)  # type: ignore[arg-type]
    assert door.authorized({b"authorization": f"Bearer {TOKEN}".encode()})
    assert not door.authorized({b"authorization": b"Bearer nope"})
    assert not door.authorized({b"authorization": f"Basic {TOKEN}".encode()})
    assert not door.authorized({})
    assert seen == [
        (TOKEN.encode(), TOKEN.encode()),
        (b"nope", TOKEN.encode()),
        (TOKEN.encode(), TOKEN.encode()),
        (b"", TOKEN.encode()),
    ]


@pytest.mark.slow
def test_the_event_stream_delivers_a_commit_made_by_a_cli_writer(
    served: Served, tmp_path: Path
) -> None:
    db = tmp_path / "db"
    post(served, "stats")  # the store exists
    events: list[tuple[str, dict[str, Any]]] = []
    with httpx2.stream("GET", f"{served.url}/v1/events", timeout=60) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        name = ""
        for line in stream.iter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((name, json.loads(line.removeprefix("data: "))))
                if name == "ready":
                    written = cli(db, "observe", "--session", "run-1", "seen from the CLI")
                    assert written.returncode == 0, written.stderr
                elif any(e["actor"] == "cli" for e in events[-1][1]["entries"]):
                    break
    assert events[0][0] == "ready"
    name, commit = events[-1]
    assert name == "commit" and commit["generation"] > events[0][1]["generation"]
    assert "observe note: seen from the CLI" in [e["summary"] for e in commit["entries"]]


@pytest.mark.slow
def test_mcp_over_http_with_the_token(guarded: Served, tmp_path: Path) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "X-Memwork-Agent": "remote"}

    async def main() -> dict[str, Any]:
        http = httpx2.AsyncClient(headers=headers, timeout=60)
        transport = streamable_http_client(f"{guarded.url}/mcp", http_client=http)
        async with http, Client(transport, cache=None) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            recorded = await client.call_tool("record_episode", {"episode": EPISODE})
            wrong = await client.call_tool("get_context", {"budget": "lots"})
            context = await client.call_tool("get_context", {"task": "deploy-api"})
            return {"tools": tools, "recorded": recorded, "wrong": wrong, "context": context}

    got = anyio.run(main)
    assert {"get_context", "record_episode", "get_record"} <= got["tools"]
    assert len(got["tools"]) <= 15 and "lint" not in got["tools"]  # the agent set by default
    assert not got["recorded"].is_error
    assert got["wrong"].is_error
    assert got["wrong"].content[0].text == "memwork: budget: must be an integer (got 'lots')"
    assert "Rolled back worker-7" in got["context"].content[0].text
    history = cli(tmp_path / "db", "--json", "history").stdout
    assert {e["actor"] for e in json.loads(history)} == {"mcp:remote"}


def test_the_mcp_sdk_loads_on_the_first_mcp_request(served: Served, tmp_path: Path) -> None:
    """The door starts without the MCP SDK (~1.4 s of CPU to import); two clients arriving
    first at once both get the one server it builds then."""
    probe = (
        "import sys; from memwork.core.doors.http.app import HttpDoor; "
        "from memwork.core.ops.memory import Memory; "
        f"HttpDoor(Memory({str(tmp_path / 'probe')!r}), token=None); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

    async def tools_seen_by_one_client() -> set[str]:
        http = httpx2.AsyncClient(timeout=60)
        transport = streamable_http_client(f"{served.url}/mcp", http_client=http)
        async with http, Client(transport, cache=None) as mcp_client:
            return {t.name for t in (await mcp_client.list_tools()).tools}

    async def main() -> list[set[str]]:
        seen: list[set[str]] = []

        async def one() -> None:
            seen.append(await tools_seen_by_one_client())

        async with anyio.create_task_group() as group:
            group.start_soon(one)
            group.start_soon(one)
        return seen

    first, second = anyio.run(main)
    assert "get_context" in first and first == second


@pytest.mark.slow
def test_a_redis_store_is_served_and_followed_alike(redis_url: str) -> None:
    server = Served(redis_url, _env())
    try:
        assert post(server, "add_lesson", {"text": "Canary on Redis"}).json()["action"] == "created"
        with httpx2.stream("GET", f"{server.url}/v1/events", timeout=60) as stream:
            for line in stream.iter_lines():
                if line.startswith("event: ready"):
                    written = cli(redis_url, "observe", "--session", "run-2", "seen on Redis")
                    assert written.returncode == 0, written.stderr
                elif line.startswith("data: ") and "seen on Redis" in line:
                    break
        assert [x["content"] for x in post(server, "list_lessons").json()] == ["Canary on Redis"]
    finally:
        assert server.stop()[0] == 0


@pytest.mark.slow
def test_a_token_with_whitespace_around_it_is_refused_at_start(tmp_path: Path) -> None:
    for token in ("s3cret\n", " s3cret", "  "):
        done = subprocess.run(
            [sys.executable, "-m", "memwork", "--db", str(tmp_path / "db"), "serve"],
            capture_output=True,
            text=True,
            env=_env(MEMWORK_TOKEN=token),
            timeout=60,
        )
        assert done.returncode == 2
        assert done.stderr == (
            "memwork: MEMWORK_TOKEN: has whitespace around it, which no client sends: every "
            "request would be refused (remove the spaces or newline)\n"
        )
    assert not (tmp_path / "db").exists()


def _half_request(url: str) -> socket.socket:
    """A connection that sends the start of a request's headers, never the end."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    client = socket.create_connection((host, int(port)), timeout=30)
    client.sendall(b"POST /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return client


@pytest.mark.slow
def test_a_client_that_never_finishes_its_headers_is_dropped(tmp_path: Path) -> None:
    server = Served(tmp_path / "db", _env(MEMWORK_HTTP_HEADER_TIMEOUT="1.5"))
    try:
        started = time.monotonic()
        slow = [_half_request(server.url) for _ in range(20)]
        # A byte now and then does not restart the clock.
        for _ in range(3):
            time.sleep(0.3)
            slow[0].sendall(b"X")
        # Meanwhile the others are served as usual.
        assert post(server, "stats").status_code == 200
        answers = []
        for client in slow:
            data = b""
            while chunk := client.recv(4096):  # the server closes: recv returns b""
                data += chunk
            answers.append(data)
            client.close()
        waited = time.monotonic() - started
        assert 1.4 < waited < 15, waited
        for data in answers:
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408 "), data
            assert json.loads(body) == {
                "error": "memwork: the request's headers did not arrive within 1.5 s",
                "kind": "timeout",
            }
        # A kept-alive connection that goes quiet in its next request is dropped as well.
        host, port = server.url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as kept:
            kept.sendall(b"GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            first = b""
            while not first.endswith(b'{"status":"ok"}'):  # the whole first answer
                chunk = kept.recv(4096)
                assert chunk, first
                first += chunk
            assert first.startswith(b"HTTP/1.1 200 "), first
            kept.sendall(b"GET /livez HTTP/1.1\r\n")
            rest = b""
            while chunk := kept.recv(4096):
                rest += chunk
            assert rest.startswith(b"HTTP/1.1 408 "), rest
        assert post(server, "stats").status_code == 200
    finally:
        code, rest = server.stop()
    assert code == 0, rest


def test_a_header_timeout_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(tmp_path / "db"), "serve", "--port", "0"],
        capture_output=True,
        text=True,
        env=_env(MEMWORK_HTTP_HEADER_TIMEOUT="soon"),
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("memwork: MEMWORK_HTTP_HEADER_TIMEOUT: must be a number")
