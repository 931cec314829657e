"""Every HTTP route and every MCP tool over ``/mcp``, given parameters no one meant.

A seeded walk over the routes the server's own OpenAPI document lists, and over the
tools ``/mcp`` lists with ``--tools all``: each call's parameters are values of the
hostile corpus or ordinary ones, now and then with a parameter no route takes. Each
answer is a 2xx or a 4xx whose body says what was wrong (an MCP tool's error is a
result the agent reads), never a 5xx nor an internal error; the server ends cleanly
with no traceback.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.core.doors.test_mcp_wire import INITIALIZE
from tests.core.ops import test_door_parity as parity
from tests.core.ops.test_hostile_inputs import HOSTILE
from tests.http_server import Served

#: The corpus without its 200,000-character string (a body cap test of its own).
VALUES = [v for v in HOSTILE if not (isinstance(v, str) and len(v) > 10_000)]
ORDINARY: list[Any] = ["s1", "x", 1, ["a"], {"k": "v"}, True, "les_x"]


def _body(rng: random.Random, names: list[str]) -> bytes | None:
    given = {n: rng.choice(VALUES) if rng.random() < 0.5 else rng.choice(ORDINARY) for n in names}
    if rng.random() < 0.2:
        given[rng.choice(["zz", ""])] = rng.choice(VALUES)
    try:
        text = json.dumps(given, allow_nan=True)
    except (ValueError, RecursionError):
        return None  # nested past what the encoder writes: the nesting test sends such
    # A lone surrogate goes out as its escape, as a client's JSON encoder writes it.
    return text.encode("utf-8", "surrogatepass")


def _sse_json(answer: httpx2.Response) -> dict[str, Any]:
    text = answer.text
    if text.lstrip().startswith("{"):
        return dict(json.loads(text))
    line = next(line for line in text.splitlines() if line.startswith("data:"))
    return dict(json.loads(line[5:]))


@pytest.mark.slow
def test_no_route_nor_tool_given_random_parameters_answers_with_a_5xx(tmp_path: Path) -> None:
    server = Served(tmp_path / "db", parity.python_env(MEMWORK_FSYNC="0"), "--tools", "all")
    rng = random.Random(11)
    found: dict[str, str] = {}
    answered: dict[str, int] = {"ok": 0, "refused": 0, "tool results": 0}
    try:
        headers = {"Accept": "application/json, text/event-stream"}
        with httpx2.Client(base_url=server.url, headers=headers, timeout=60) as http:
            spec = http.get("/v1/openapi.json").json()
            routes = [(path, d["post"]) for path, d in spec["paths"].items() if "post" in d]
            assert len(routes) > 80
            for path, post in routes:
                content = post.get("requestBody", {}).get("content", {})
                names = list(
                    content.get("application/json", {}).get("schema", {}).get("properties", {})
                )
                for _ in range(12):
                    body = _body(rng, names)
                    if body is None:
                        continue
                    answer = http.post(
                        path, content=body, headers={"Content-Type": "application/json"}
                    )
                    answered["ok" if answer.status_code < 300 else "refused"] += 1
                    if answer.status_code >= 500 or not (
                        200 <= answer.status_code < 300 or json.loads(answer.text).get("error")
                    ):
                        found.setdefault(path, f"{body[:120]!r} -> {answer.status_code}")
            opened = http.post("/mcp", json=INITIALIZE)
            session = {
                "Content-Type": "application/json",
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            http.post("/mcp", json=ready, headers=session)
            listed = http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=session
            )
            tools = _sse_json(listed)["result"]["tools"]
            assert len(tools) > 80
            ident = 3
            for tool in tools:
                names = list((tool.get("inputSchema") or {}).get("properties", {}))
                for _ in range(6):
                    arguments = _body(rng, names)
                    if arguments is None:
                        continue
                    line = (
                        (
                            f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call","params":'
                            f'{{"name":{json.dumps(tool["name"])},"arguments":'
                        ).encode()
                        + arguments
                        + b"}}"
                    )
                    ident += 1
                    answer = http.post("/mcp", content=line, headers=session)
                    said = answer.text
                    answered["tool results"] += '"result"' in said
                    if answer.status_code >= 500 or "internal error" in said.lower():
                        found.setdefault(tool["name"], f"{arguments[:120]!r} -> {said[:200]}")
    finally:
        code, rest = server.stop()
    assert not found, "\n".join(f"{k}: {v}" for k, v in sorted(found.items()))
    # The walk reached the operations: some calls worked, most were refused.
    assert answered["ok"] > 50 and answered["refused"] > 500, answered
    assert answered["tool results"] > 400, answered
    assert code == 0, rest
    assert "Traceback" not in rest
