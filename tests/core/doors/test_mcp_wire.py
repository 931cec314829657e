"""`memwork mcp`'s stdio wire: every line the protocol cannot read is answered, never
dropped, and never changes the store."""

from __future__ import annotations

import json
import random
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.doors.mcp.wire import Refused, read_line
from tests.conftest import python_env
from tests.http_server import Served

NOW = "2026-11-01T12:00:00Z"


def call(ident: int, name: str, arguments: str) -> str:
    """A tools/call line with ``arguments`` spelled as raw JSON text."""
    return (
        f'{{"jsonrpc":"2.0","id":{ident},"method":"tools/call",'
        f'"params":{{"name":"{name}","arguments":{arguments}}}}}'
    )


DEEP = "[" * 5000 + "]" * 5000

#: Lines no JSON-RPC reader takes, with the id and code each must be answered with and
#: what the answer must say.
HOSTILE: list[tuple[str, bytes, Any, int, str]] = [
    (
        "half an emoji",
        call(2, "add_lesson", '{"text":"deploy \\ud83d then wait"}').encode(),
        2,
        types.INVALID_PARAMS,
        "text: must be Unicode text: it holds an unpaired surrogate (U+D83D) at character 8",
    ),
    (
        "a surrogate in a nested key",
        call(3, "observe", '{"session":"s","text":"x","tags":["ok","\\udfff"]}').encode(),
        3,
        types.INVALID_PARAMS,
        "tags.1: must be Unicode text",
    ),
    (
        "bytes that are not UTF-8",
        call(4, "add_lesson", '{"text":"caf\xe9"}').encode("latin-1"),
        4,
        types.PARSE_ERROR,
        "must be UTF-8 text: byte 0xE9",
    ),
    (
        "JSON cut short",
        call(5, "add_lesson", '{"text":"never fini').encode()[:-3],
        5,
        types.PARSE_ERROR,
        "a message must be JSON: Unterminated string",
    ),
    (
        "nesting past any parser",
        call(6, "search", '{"query":' + DEEP + "}").encode(),
        6,
        types.INVALID_PARAMS,
        "nests deeper than 64 levels",
    ),
    (
        "no jsonrpc member",
        b'{"id":"seven","method":"tools/list"}',
        "seven",
        types.INVALID_REQUEST,
        "not a JSON-RPC 2.0 message: jsonrpc: Field required",
    ),
    (
        "a batch",
        b'[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]',
        None,
        types.INVALID_REQUEST,
        "one JSON object (batches are not taken)",
    ),
    ("not JSON at all", b"hello?", None, types.PARSE_ERROR, "a message must be JSON"),
    (
        "an id of null",
        b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
        None,
        types.INVALID_REQUEST,
        "id: must be a string or a whole number (got null)",
    ),
    (
        "an id of 1.5",
        b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}',
        None,
        types.INVALID_REQUEST,
        "(got 1.5)",
    ),
]


@pytest.mark.parametrize(
    ("line", "ident", "code", "says"),
    [case[1:] for case in HOSTILE],
    ids=[case[0] for case in HOSTILE],
)
def test_a_line_the_protocol_cannot_read_is_refused_with_its_id(
    line: bytes, ident: Any, code: int, says: str
) -> None:
    refused = read_line(line + b"\n")
    assert isinstance(refused, Refused)
    assert (refused.id, refused.code) == (ident, code)
    assert refused.message.startswith("memwork: ")
    assert says in refused.message
    assert not refused.notification


def test_good_lines_pass_and_blank_ones_are_skipped() -> None:
    message = read_line(call(1, "search", '{"query":"caf\\u00e9 \\ud83d\\ude00"}').encode() + b"\n")
    assert isinstance(message, types.JSONRPCRequest)
    assert message.params["arguments"]["query"] == "café 😀"
    assert read_line(b"  \r\n") is None


def test_a_broken_notification_is_logged_and_never_answered() -> None:
    refused = read_line(b'{"jsonrpc":"2.0","method":"notifications/\\ud800"}')
    assert isinstance(refused, Refused)
    assert refused.notification
    assert refused.id is None


def test_an_id_is_found_however_the_rest_of_the_line_is_broken() -> None:
    # The id after a value nested past every parser's depth, and a string id with escapes.
    line = '{"jsonrpc":"2.0","params":{"arguments":' + DEEP + '},"id":"a\\"b","method":"x"}'
    refused = read_line(line.encode())
    assert isinstance(refused, Refused)
    assert refused.id == 'a"b'
    # A line cut inside its id names no id: answering "1" might end another call.
    refused = read_line(b'{"jsonrpc":"2.0","method":"tools/list","id":12'[:-1])
    assert isinstance(refused, Refused)
    assert refused.id is None
    # An id that is no JSON-RPC id (true, a float, an object) is answered as null.
    for spelled in ("true", "1.5", '{"n":1}'):
        line = '{"jsonrpc":"2.0","id":' + spelled + ',"method":"x","params":"\\ud800"}'
        refused = read_line(line.encode())
        assert isinstance(refused, Refused)
        assert refused.id is None


# -- a real server ------------------------------------------------------------------------------
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


class Wire:
    """``memwork mcp`` in a child process, spoken to line by line."""

    def __init__(self, store: Path, *args: str) -> None:
        self.server = subprocess.Popen(
            [sys.executable, "-m", "memwork", "--db", str(store), "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0"),
        )

    def send(self, line: bytes | dict[str, Any]) -> None:
        raw = json.dumps(line).encode() if isinstance(line, dict) else line
        assert self.server.stdin is not None
        self.server.stdin.write(raw + b"\n")
        self.server.stdin.flush()

    def answer(self, wait: float = 30.0) -> dict[str, Any] | None:
        assert self.server.stdout is not None
        ready, _, _ = select.select([self.server.stdout], [], [], wait)
        return json.loads(self.server.stdout.readline()) if ready else None

    def close(self) -> str:
        assert self.server.stdin is not None and self.server.stderr is not None
        self.server.stdin.close()
        assert self.server.wait(timeout=60) == 0
        return self.server.stderr.read().decode()


def test_the_server_answers_every_request_line_and_the_store_is_untouched(
    db: Path,
    cli,  # noqa: ANN001
) -> None:
    wire = Wire(db)
    wire.send(INITIALIZE)
    assert wire.answer()["id"] == 1  # type: ignore[index]
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send(b'{"jsonrpc":"2.0","method":"notifications/\\ud800"}')  # logged, no answer
    for _what, line, ident, code, says in HOSTILE:
        wire.send(line)
        got = wire.answer()
        assert got is not None, f"no answer to {_what}"
        assert got["id"] == ident
        assert got["error"]["code"] == code
        assert says in got["error"]["message"]
    # A request the protocol reads but the server cannot serve is the client's error too,
    # never one the server logs as its own (with a traceback).
    for ident, method, params, says in (
        (20, "prompts/get", {"name": "nope"}, "memwork: no prompt named 'nope'"),
        # (the SDK checks a request's own shape first, in its own words)
        (21, "prompts/get", {"name": "recall", "arguments": {"topic": 3}}, "Invalid request"),
        (22, "resources/read", {"uri": "memwork://context/t?budget=lots"}, "memwork: budget:"),
    ):
        wire.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        got = wire.answer()
        assert got is not None and got["id"] == ident
        assert got["error"]["code"] == types.INVALID_PARAMS
        assert got["error"]["message"].startswith(says)
    # The conversation goes on: a good call after them all is answered as ever.
    wire.send(call(9, "add_lesson", '{"text":"wait for the canary"}').encode())
    done = wire.answer()
    assert done is not None and done["id"] == 9 and "error" not in done
    log = wire.close()
    assert log.count("refused a message") == len(HOSTILE) + 1
    assert "unpaired surrogate (U+D83D)" in log
    assert "Traceback" not in log and "ERROR" not in log
    lessons = json.loads(cli("lesson", "list", "--json").out)
    assert [lesson["content"] for lesson in lessons] == ["wait for the canary"]


# -- any bytes at all -----------------------------------------------------------------------------
GOOD = call(11, "observe", '{"session":"run-1","text":"deploy \\u00e9 done","tags":["a",["b"]]}')


@given(
    cuts=st.lists(
        st.tuples(
            st.integers(0, len(GOOD)),
            st.sampled_from(["", "\\ud800", '"', "{", "[", "]", "}", ",", "\\", "\xff", "\x00"]),
        ),
        max_size=4,
    ),
    cut_at=st.none() | st.integers(0, len(GOOD)),
)
@settings(max_examples=400, deadline=None)
def test_a_mangled_line_is_read_or_refused_never_an_error(
    cuts: list[tuple[int, str]], cut_at: int | None
) -> None:
    line = GOOD
    for at, piece in cuts:
        line = line[:at] + piece + line[at + 1 :]
    raw = line.encode("utf-8", "surrogatepass").replace("\xff".encode(), b"\xff")
    raw = raw if cut_at is None else raw[:cut_at]
    read = read_line(raw)
    if isinstance(read, Refused):
        assert read.message.startswith("memwork: ")
        # An id is answered only as the line spells it, whole ("id":1 of a cut "id":11
        # is no id).
        spelled = raw.decode("utf-8", "replace")
        assert read.id is None or f'"id":{read.id},' in spelled or f'"id":{read.id}}}' in spelled
        assert read.code in (types.PARSE_ERROR, types.INVALID_REQUEST, types.INVALID_PARAMS)
        read.reply()  # an answer that can be written
    else:
        assert read is None or isinstance(read, types.JSONRPCMessage.__args__)  # type: ignore[attr-defined]


# -- random calls through a real server --------------------------------------------------------
ODD_VALUES: list[Any] = [
    None, True, 0, -1, 2**70, 1.5, "", "x", "lots", "\u0000", "é" * 10, [], {}, [1],
    {"a": 1}, "memwork://context", "../../etc", "x" * 5000,
]  # fmt: skip
METHODS = [
    "tools/call", "prompts/get", "resources/read", "resources/list", "prompts/list",
    "tools/list", "ping", "completion/complete", "logging/setLevel", "resources/subscribe",
    "resources/templates/list",
]  # fmt: skip
#: What a client's mistake is answered with: invalid request or params, no such method.
CLIENT_ERRORS = {types.INVALID_REQUEST, types.INVALID_PARAMS, types.METHOD_NOT_FOUND}


def random_call(rng: random.Random, ident: int, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A JSON-RPC request of a random method whose params are random, odd values."""
    method = rng.choice(METHODS)
    params: Any
    if method == "tools/call":
        tool = rng.choice(tools)
        names = list(tool["inputSchema"].get("properties", {}))
        chosen = rng.sample(names, k=rng.randint(0, len(names)))
        arguments = {name: rng.choice(ODD_VALUES) for name in chosen}
        if rng.random() < 0.2:
            arguments["not_a_parameter"] = 1
        params = {"name": tool["name"], "arguments": arguments}
    elif method == "prompts/get":
        keys = ["topic", "task", "session", "x"]
        arguments = {rng.choice(keys): rng.choice(ODD_VALUES) for _ in range(rng.randint(0, 2))}
        params = {
            "name": rng.choice(["recall", "start_task", "wrap_up", "x"]),
            "arguments": arguments,
        }
    elif method in ("resources/read", "resources/subscribe"):
        odd = str(rng.choice(ODD_VALUES))
        params = {
            "uri": rng.choice(
                [
                    "memwork://context",
                    f"memwork://context/t?budget={odd}",
                    f"memwork://slot/{odd}",
                    "file:///etc/passwd",
                    odd,
                ]
            )
        }
    elif method == "logging/setLevel":
        params = {"level": rng.choice(["debug", "nope", 3])}
    elif method == "completion/complete":
        params = {
            "ref": {"type": "ref/prompt", "name": "recall"},
            "argument": {"name": "topic", "value": "x"},
        }
    else:
        params = rng.choice([{}, None, {"cursor": rng.choice(ODD_VALUES)}])
    call = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        call["params"] = params
    return call


def test_random_calls_each_get_one_answer_and_none_is_the_servers_error(db: Path) -> None:
    wire = Wire(db, "--tools", "all")
    wire.send(INITIALIZE)
    assert wire.answer() is not None
    wire.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire.send({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    tools = wire.answer()["result"]["tools"]  # type: ignore[index]
    rng = random.Random(36)
    for ident in range(1, 301):
        call = random_call(rng, ident, tools)
        wire.send(call)
        got = wire.answer()
        assert got is not None and got["id"] == ident, call
        if "error" in got:
            assert got["error"]["code"] in CLIENT_ERRORS, (call, got)
        else:
            assert "internal error" not in json.dumps(got["result"]), (call, got)
    log = wire.close()
    assert "Traceback" not in log and "ERROR" not in log, log[-2000:]


# -- the same lines over HTTP ------------------------------------------------------------------
def test_over_http_each_line_is_refused_in_the_same_words_with_its_id(tmp_path: Path) -> None:
    server = Served(tmp_path / "db", python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0"))
    try:
        headers = {"Accept": "application/json, text/event-stream"}
        with httpx2.Client(base_url=server.url, headers=headers, timeout=60) as http:
            opened = http.post("/mcp", json=INITIALIZE)
            assert opened.status_code == 200
            headers = {
                "Content-Type": "application/json",
                "mcp-session-id": opened.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            for what, line, ident, code, says in HOSTILE:
                got = http.post("/mcp", content=line, headers=headers)
                assert got.status_code == 400, what
                answer = got.json()
                assert answer["id"] == ident, what
                assert answer["error"]["code"] == code, what
                assert says in answer["error"]["message"], what
            # A good call after them is answered as ever.
            listed = http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "ping"}, headers=headers
            )
            assert listed.status_code == 200
            assert '"id":9' in listed.text
    finally:
        code, rest = server.stop()
        assert code == 0, rest
    listed = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(tmp_path / "db"), "lesson", "list", "--json"],
        capture_output=True,
        text=True,
        env=python_env(MEMWORK_NOW=NOW),
        check=True,
    )
    assert json.loads(listed.stdout) == []  # nothing any refused line held was written
