"""`memwork mcp`: a real MCP client from the SDK starts the server over stdio and uses it."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from memwork.core.ops.operations import door_ops
from memwork.core.services.context.budget import DEFAULT_BUDGET
from memwork.core.storage.store import Store
from tests.conftest import folder_digest, python_env

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOW = "2026-11-01T12:00:00Z"
TOOLS = {
    "get_context",
    "record_episode",
    "record_failure",
    "observe",
    "start_session",
    "end_session",
    "add_lesson",
    "reinforce_lesson",
    "weaken_lesson",
    "list_lessons",
    "search",
    "list_slots",
    "get_slot",
    "set_slot",
    "append_slot",
    "replace_in_slot",
    "wm_set",
    "wm_get",
    "wm_delete",
    "wm_list",
    "wm_task",
    "scratch_add",
    "stats",
}


def params(db: Path, agent: str | None = "tester") -> StdioServerParameters:
    args = ["-m", "memwork", "--db", str(db), "mcp", "--tools", "all"]
    if agent:
        args += ["--agent", agent]
    return StdioServerParameters(
        command=sys.executable, args=args, env=python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0")
    )


def with_server(db: Path, body: Callable[[Client], Awaitable[Any]], **kw: Any) -> Any:
    """Start ``memwork mcp`` on ``db``, run ``body`` with a connected client, stop it."""

    async def main() -> Any:
        async with Client(params(db, **kw), cache=None) as client:
            return await body(client)

    return anyio.run(main)


async def call(client: Client, name: str, **args: Any) -> Any:
    """A successful tool call's result: JSON decoded, or the context text."""
    result = await client.call_tool(name, args)
    text = result.content[0].text
    assert not result.is_error, text
    if name == "get_context" and args.get("format", "text") == "text":
        return text
    return json.loads(text)


async def fails(client: Client, name: str, **args: Any) -> str:
    """A failing tool call's message."""
    result = await client.call_tool(name, args)
    assert result.is_error, result.content[0].text
    return result.content[0].text


EPISODE = {
    "task_id": "deploy-api",
    "score": 0.3,
    "steps": 9,
    "summary": "Rolled back worker-25 after failed health checks",
    "mistakes": ["Skipped the canary stage"],
}


def test_the_server_offers_every_operation_each_saying_when_to_call_it(db: Path) -> None:
    async def body(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = with_server(db, body)
    names = {t.name for t in tools}
    assert TOOLS <= names  # the tools agents already use keep their names
    assert names == {op.mcp or op.name for op in door_ops("mcp")}
    # Getting a lesson, the history, any record a search names: agents can read them now.
    assert {"get_lesson", "history", "get_record", "restore_checkpoint", "merge_lessons"} <= names
    # Deciding proposals and turning review off stay with people (CLI, Python API).
    assert not names & {"approve_proposal", "reject_proposal", "set_config", "unlock_slot"}
    by_name = {t.name: t for t in tools}
    for tool in tools:
        assert tool.description and len(tool.description) > 30, tool.name
        # Every parameter is described, and every tool says what it returns.
        for name, prop in tool.input_schema["properties"].items():
            assert len(prop.get("description", "")) > 5, (tool.name, name)
        assert tool.output_schema["type"] == "object", tool.name
    assert "start of every task" in by_name["get_context"].description
    assert by_name["get_context"].annotations.read_only_hint is True
    assert by_name["record_episode"].annotations.read_only_hint is False
    assert by_name["restore_checkpoint"].annotations.destructive_hint is True
    props = by_name["get_context"].input_schema["properties"]
    assert set(props) == {
        *("task", "project", "budget", "style", "format", "query"),
        *("max_rules", "max_recent"),
    }
    # No budget: MEMWORK_TOKEN_BUDGET, else the style's own (2000, none for episodic).
    assert "integer" in json.dumps(props["budget"])
    assert props["budget"].get("default") is None
    assert str(DEFAULT_BUDGET) in props["budget"]["description"]
    assert props["format"]["enum"] == ["text", "json"]
    assert by_name["get_lesson"].output_schema["properties"]["effective_confidence"]


@pytest.mark.slow
def test_every_tool_works_and_the_cli_sees_the_writes(
    db: Path,
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        session = await call(client, "start_session", project="api", title="deploy")
        sid = session["id"]
        assert session["agent_id"] == "tester"  # the server's agent id by default
        out["obs"] = await call(client, "observe", session=sid, text="ran the deploy", kind="tool")
        assert (await call(client, "wm_set", session=sid, key="branch", value="main"))["key"]
        await call(client, "wm_set", session=sid, key="attempt", value=3, ttl=60)
        assert (await call(client, "wm_get", session=sid, key="attempt"))["value"] == 3
        assert [e["key"] for e in await call(client, "wm_list", session=sid)] == [
            "attempt",
            "branch",
        ]
        task = await call(client, "wm_task", session=sid, task_id="deploy-api", step=2, total=4)
        assert task["progress_percent"] == 50
        assert (await call(client, "wm_task", session=sid))["current_step"] == 2
        assert (await call(client, "scratch_add", session=sid, text="check the canary"))["ts"]
        assert (await call(client, "wm_delete", session=sid, key="branch"))["key"] == "branch"

        one = await call(client, "record_episode", episode={**EPISODE, "session_id": sid})
        batch = await call(
            client,
            "record_episode",
            episodes=[
                {**EPISODE, "score": 0.95, "successes": ["Canaried first"]},
                {**EPISODE, "score": "0.3"},  # read as the episodic library reads it
            ],
        )
        assert len(one["ids"]) == 1 and len(batch["ids"]) == 2
        assert one["warnings"] == []
        assert batch["warnings"] == ["item 2: score: the text '0.3' read as the number 0.3"]
        crash = {"error_class": "TimeoutError", "fingerprint": "f1", "task": "ops", "message": "m"}
        crashed = await call(client, "record_failure", report=crash)
        assert (crashed["count"], crashed["repeated"]) == (1, False)
        again = await call(client, "record_failure", report=crash)
        assert again["episode_id"] == crashed["episode_id"] and again["count"] == 2
        out["context"] = await call(client, "get_context", task="deploy-api")
        out["context_json"] = await call(client, "get_context", task="deploy-api", format="json")

        lesson = await call(
            client, "add_lesson", text="Canary every deploy", scope="project:api", tags=["ops"]
        )
        assert lesson["action"] == "created"
        again = await call(client, "add_lesson", text="Canary every deploy", scope="project:api")
        assert again["action"] == "reinforced" and again["id"] == lesson["id"]
        up = await call(client, "reinforce_lesson", lesson=lesson["id"])
        down = await call(client, "weaken_lesson", lesson=lesson["id"])
        assert down["confidence"] < up["confidence"]
        out["lessons"] = await call(client, "list_lessons")
        out["all_lessons"] = await call(client, "list_lessons", all=True)
        out["project_context"] = await call(client, "get_context", project="api")

        await call(client, "set_slot", label="persona", text="Be terse.", description="tone")
        await call(client, "append_slot", label="persona", text="Cite files.")
        replaced = await call(client, "replace_in_slot", label="persona", old="terse", new="brief")
        assert replaced["replaced"] == 1
        assert (await call(client, "get_slot", label="persona"))["content"] == (
            "Be brief.\nCite files."
        )
        out["slots"] = await call(client, "list_slots")
        out["search"] = await call(client, "search", query="worker-25", limit=5)
        out["search_lessons"] = await call(client, "search", query="canary", kinds=["lesson"])
        assert (await call(client, "end_session", session=sid, summary="done"))["status"] == "ended"
        out["stats"] = await call(client, "stats")
        out["context_end"] = await call(client, "get_context", task="deploy-api")
        out["search_end"] = await call(client, "search", query="worker-25", limit=5)
        out["sid"] = sid
        return out

    out = with_server(db, body)
    assert "## Recent deploy-api episodes" in out["context"]
    assert "Rolled back worker-25" in out["context"]
    assert out["context_json"]["task"] == "deploy-api"
    assert "Canary every deploy" in out["project_context"]
    assert [h["kind"] for h in out["search_lessons"]] == ["lesson"]
    assert out["search"][0]["kind"] == "episode" and "worker-25" in out["search"][0]["title"]
    assert out["stats"]["total_episodes"] == 4

    # The same store through the CLI, at the same instant and as the same agent (whose
    # ended sessions' summaries the context shows): the same answers.
    assert "## Recent sessions\n- 2026-11-01 deploy: done" in out["context_end"]
    monkeypatch.setenv("MEMWORK_AGENT", "tester")
    assert cli("context", "--task", "deploy-api", now=NOW).out == out["context_end"] + "\n"
    monkeypatch.delenv("MEMWORK_AGENT")
    assert cli("--json", "lesson", "list", now=NOW).json() == out["lessons"]
    assert cli("--json", "lesson", "list", "--all", now=NOW).json() == out["all_lessons"]
    assert cli("--json", "slot", "list", now=NOW).json() == out["slots"]
    assert cli("--json", "search", "worker-25", "--limit", "5", now=NOW).json() == out["search_end"]
    assert cli("stats", now=NOW).json() == out["stats"]
    # Every write is in the audit log under the MCP actor and the agent id.
    history = cli("--json", "history", "--actor", "mcp", "--limit", "500", now=NOW).json()
    assert history and {e["actor"] for e in history} == {"mcp:tester"}
    assert {"episodes", "lessons", "slots", "sessions", "working_memory"} <= {
        e["table"] for e in history
    }


# Each case: the tool call, the CLI command that makes the same mistake, its stdin.
BAD_INPUT: list[tuple[str, dict[str, Any], list[str], Any]] = [
    ("record_episode", {"episode": {**EPISODE, "score": 2}}, ["record-episode"], {"score": 2}),
    (
        "record_episode",
        {"episodes": [EPISODE, {**EPISODE, "steps": -1}]},
        ["record-episode"],
        [EPISODE, {**EPISODE, "steps": -1}],
    ),
    ("record_episode", {"episode": {"score": None}}, ["record-episode"], {"score": None}),
    (
        "add_lesson",
        {"text": "x", "confidence": 5.0},
        ["lesson", "add", "x", "--confidence", "5"],
        None,
    ),
    (
        "add_lesson",
        {"text": "x", "scope": "team:a"},
        ["lesson", "add", "x", "--scope", "team:a"],
        None,
    ),
    ("reinforce_lesson", {"lesson": "les_nope"}, ["lesson", "reinforce", "les_nope"], None),
    ("weaken_lesson", {"lesson": "les_nope"}, ["lesson", "weaken", "les_nope"], None),
    ("get_slot", {"label": "nope"}, ["slot", "show", "nope"], None),
    ("append_slot", {"label": "nope", "text": "x"}, ["slot", "append", "nope", "x"], None),
    (
        "replace_in_slot",
        {"label": "persona", "old": "absent", "new": "x"},
        ["slot", "replace", "persona", "absent", "x"],
        None,
    ),
    (
        "set_slot",
        {"label": "persona", "text": "x" * 50, "limit": 10},
        ["slot", "set", "persona", "x" * 50, "--limit", "10"],
        None,
    ),
    (
        "wm_set",
        {"session": "S", "key": "_x", "value": "1"},
        ["wm", "--session", "S", "set", "_x", "1"],
        None,
    ),
    ("wm_get", {"session": "S", "key": "gone"}, ["wm", "--session", "S", "get", "gone"], None),
    ("get_context", {"budget": -1}, ["context", "--budget", "-1"], None),
    ("search", {"query": "x", "kinds": ["nonsense"]}, ["search", "x", "--kind", "nonsense"], None),
    ("end_session", {"session": "ses_nope"}, ["session", "end", "ses_nope"], None),
]


@pytest.mark.slow
def test_bad_input_is_a_tool_error_with_the_clis_message_and_the_store_is_untouched(
    db: Path,
    cli,  # noqa: ANN001
) -> None:
    sid = cli("session", "start", now=NOW).out.strip()
    cli("slot", "set", "persona", "Be terse.", now=NOW)
    expected = []
    for _, _, argv, stdin in BAD_INPUT:
        argv = [a if a != "S" else sid for a in argv]
        done = cli(*argv, stdin=json.dumps(stdin) if stdin is not None else None, now=NOW)
        assert done.code == 2, (argv, done.err)
        expected.append(done.err.strip())
    before = folder_digest(db)

    async def body(client: Client) -> list[str]:
        messages = []
        for name, args, _, _ in BAD_INPUT:
            args = {k: (sid if v == "S" else v) for k, v in args.items()}
            messages.append(await fails(client, name, **args))
        messages.append(await fails(client, "record_episode"))
        messages.append(await fails(client, "get_context", budget="lots"))
        return messages

    messages = with_server(db, body)
    assert messages[: len(expected)] == expected
    assert messages[-2] == (
        "memwork: episode: give either episode (one object) or episodes (a list)"
    )
    # A wrong type is memwork's one line naming the field, not the SDK's validation text.
    assert messages[-1] == "memwork: budget: must be an integer (got 'lots')"
    assert folder_digest(db) == before


@pytest.mark.slow
def test_two_servers_writing_one_store_at_once_lose_nothing(db: Path, cli) -> None:  # noqa: ANN001
    per_server = 25
    seen: dict[str, str] = {}

    async def writer(name: str) -> None:
        async with Client(params(db, agent=name), cache=None) as client:
            for n in range(per_server):
                await call(client, "record_episode", episode={**EPISODE, "summary": f"{name} {n}"})
                if n % 5 == 0:
                    await call(
                        client, "add_lesson", text=f"{name} lesson {n}", on_duplicate="keep-both"
                    )
            seen[name] = await call(client, "get_context", task="deploy-api")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(writer, "alpha")
            group.start_soon(writer, "beta")

    anyio.run(main)
    store = Store(db)
    with store.reading():
        from memwork.core.domain import episodes

        docs = list(episodes.iter_all(store))
    assert sorted(d["index"] for d in docs) == list(range(1, 2 * per_server + 1))
    assert {d["summary"] for d in docs} == {
        f"{name} {n}" for name in ("alpha", "beta") for n in range(per_server)
    }
    assert len(cli("--json", "lesson", "list", now=NOW).json()) == 10
    # Whichever finished last saw every episode the other one wrote.
    assert any(f"(over {2 * per_server} episodes)" in text for text in seen.values())
    actors = {e["actor"] for e in cli("--json", "history", "--limit", "500", now=NOW).json()}
    assert actors == {"mcp:alpha", "mcp:beta"}


@pytest.mark.slow
def test_the_context_and_every_slot_are_resources(db: Path, cli) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "Be terse.", now=NOW)
    cli("slot", "set", "corrections/mistakes", "Never force-push.", now=NOW)
    cli("record-episode", stdin=json.dumps(EPISODE), now=NOW)

    async def body(client: Client) -> dict[str, Any]:
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]

        async def read(uri: str) -> str:
            return (await client.read_resource(uri)).contents[0].text

        await call(client, "set_slot", label="late", text="added while serving")
        relisted = [str(r.uri) for r in (await client.list_resources()).resources]
        try:
            await client.read_resource("memwork://slot/nope")
            missing = ""
        except MCPError as exc:
            missing = str(exc)
        return {
            "listed": listed,
            "relisted": relisted,
            "templates": templates,
            "slot": await read("memwork://slot/corrections/mistakes"),
            "context": await read("memwork://context"),
            "task": await read("memwork://context/deploy-api?budget=60"),
            "missing": missing,
        }

    got = with_server(db, body)
    assert got["listed"] == [
        "memwork://context",
        "memwork://slot/persona",
        "memwork://slot/corrections/mistakes",
    ]
    assert got["relisted"][-1] == "memwork://slot/late"
    assert "memwork://slot/{+label}" in got["templates"]
    assert got["slot"] == "Never force-push."
    assert got["context"] + "\n" == cli("context", now=NOW).out
    assert (
        got["task"] + "\n" == cli("context", "--task", "deploy-api", "--budget", "60", now=NOW).out
    )
    assert got["missing"] == "memwork: slot not found: nope"


@pytest.mark.slow
def test_without_an_agent_id_the_actor_is_mcp(db: Path, cli) -> None:  # noqa: ANN001
    async def body(client: Client) -> Any:
        return await call(client, "add_lesson", text="Read the logs first")

    with_server(db, body, agent=None)
    assert [e["actor"] for e in cli("--json", "history", now=NOW).json()] == ["mcp"]


@pytest.mark.slow
def test_the_server_loads_no_rich_or_textual(tmp_path: Path) -> None:
    """The SDK logs through rich when it can; memwork's server keeps core free of it."""
    import subprocess

    probe = (
        "import sys; from memwork import Memory; "
        "from memwork.core.doors.mcp.server import build_server; "
        f"build_server(Memory({str(tmp_path / 's')!r}, actor='mcp')); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'textual'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.slow
def test_agent_writes_become_proposals_while_review_is_on(db: Path, cli) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "You are terse.")
    cli("config", "set", "review", "on")

    async def body(client: Client) -> tuple[Any, Any, Any, Any]:
        lesson = await call(client, "add_lesson", text="Pin the image digest")
        slot = await call(client, "append_slot", label="persona", text="You ask first.")
        context = await call(client, "get_context")
        return lesson, slot, context, (await client.list_tools()).tools

    lesson, slot, context, tools = with_server(db, body)
    # The agent is told what such a result means, in the tools it reads.
    queued = {"add_lesson", "set_slot", "append_slot", "replace_in_slot"}
    assert queued <= {op.mcp or op.name for op in door_ops("mcp") if op.review}
    queued = {op.mcp or op.name for op in door_ops("mcp") if op.review}
    for tool in tools:
        assert ('"proposed": true' in tool.description) == (tool.name in queued), tool.name
    assert lesson["proposed"] is True and lesson["proposed_by"] == "mcp:tester"
    assert slot["proposed"] is True and slot["after"] == "You are terse.\nYou ask first."
    assert "Pin the image digest" not in context and "ask first" not in context
    pending = cli("review", "list", "--json").json()
    assert [p["id"] for p in pending] == [lesson["id"], slot["id"]]
    assert cli("lesson", "list", "--json").json() == []


@pytest.mark.slow
def test_every_result_is_structured_and_keeps_its_output_schema(db: Path, cli) -> None:  # noqa: ANN001
    import jsonschema

    cli("record-episode", stdin=json.dumps(EPISODE), now=NOW)
    lesson = cli("lesson", "add", "Canary every deploy", now=NOW).out.strip()

    async def body(client: Client) -> dict[str, Any]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        results = {}
        sid = (await client.call_tool("start_session", {"title": "canary"})).structured_content
        calls = [
            ("get_context", {"task": "deploy-api"}),
            ("get_context", {"task": "deploy-api", "format": "json"}),
            ("get_lesson", {"lesson": lesson}),
            ("history", {"limit": 3}),
            ("list_cards", {}),
            ("search", {"query": "canary"}),
            ("wm_task", {"session": sid["id"]}),
            ("add_lesson", {"text": "Canary every deploy"}),
            ("observe", {"session": sid["id"], "text": "looked at the canary"}),
        ]
        for name, args in calls:
            result = await client.call_tool(name, args)
            assert not result.is_error, (name, result.content[0].text)
            jsonschema.validate(result.structured_content, tools[name].output_schema)
            results.setdefault(name, result)  # the first call of each tool
        hit = results["search"].structured_content["result"][0]
        got = await client.call_tool("get_record", {"id": hit["id"]})
        jsonschema.validate(got.structured_content, tools["get_record"].output_schema)
        results["get_record"] = got
        return results

    results = with_server(db, body)
    context = results["get_context"]
    assert context.structured_content == {"result": context.content[0].text}
    shown = results["get_lesson"]
    assert shown.structured_content == json.loads(shown.content[0].text)
    assert shown.structured_content["id"] == lesson
    assert results["wm_task"].structured_content == {"result": None}
    assert results["get_record"].structured_content["kind"] in {"lesson", "session", "episode"}


@pytest.mark.slow
def test_prompts_recall_and_start_a_task_with_memory(db: Path, cli) -> None:  # noqa: ANN001
    cli("lesson", "add", "Canary every deploy for fifteen minutes", now=NOW)
    cli("lesson", "add", "Watch the error budget for fifteen minutes after a deploy", now=NOW)
    cli("record-episode", stdin=json.dumps(EPISODE), now=NOW)

    async def body(client: Client) -> dict[str, Any]:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        recall = await client.get_prompt("recall", {"topic": "canary"})
        start = await client.get_prompt("start_task", {"task": "deploy-api"})
        wrap = await client.get_prompt("wrap_up", {"task": "deploy-api", "session": "run-7"})
        return {"prompts": prompts, "recall": recall, "start": start, "wrap": wrap}

    got = with_server(db, body)
    assert set(got["prompts"]) == {"recall", "start_task", "wrap_up"}
    for prompt in got["prompts"].values():
        assert prompt.description and all(a.description for a in prompt.arguments or [])
    recall = got["recall"].messages[0].content.text
    assert "Canary every deploy for fifteen minutes" in recall and "get_record" in recall
    # The lesson without the topic's word comes in as related, and says so.
    budget = next(line for line in recall.splitlines() if "error budget" in line)
    assert "related, without the topic's words" in budget
    assert "related" not in next(line for line in recall.splitlines() if "Canary every" in line)
    start = got["start"].messages[0].content.text
    assert cli("context", "--task", "deploy-api", now=NOW).out.strip() in start
    assert "start_session" in start and "record_episode" in start
    assert "end_session(session='run-7')" in got["wrap"].messages[0].content.text


@pytest.mark.slow
def test_a_bad_prompt_or_resource_call_is_the_clients_error_in_memworks_words(
    db: Path,
    cli,  # noqa: ANN001
) -> None:
    cli("lesson", "add", "Canary every deploy", now=NOW)

    async def body(client: Client) -> dict[str, Any]:
        async def refused(get: Awaitable[Any]) -> tuple[int, str]:
            try:
                await get
            except MCPError as exc:
                return exc.error.code, exc.error.message
            raise AssertionError("answered")

        return {
            "unknown": await refused(client.get_prompt("nope", {})),
            "missing": await refused(client.get_prompt("recall", {})),
            "stranger": await refused(client.get_prompt("recall", {"subject": "x"})),
            "budget": await refused(client.read_resource("memwork://context/t?budget=lots")),
            "negative": await refused(client.read_resource("memwork://context/t?budget=-5")),
            # The server goes on as ever after them.
            "fine": (await client.read_resource("memwork://context/t?budget=300")).contents[0].text,
        }

    got = with_server(db, body)
    invalid = -32602
    assert got["unknown"] == (
        invalid,
        "memwork: no prompt named 'nope' (known: recall, start_task, wrap_up)",
    )
    assert got["missing"] == (invalid, "memwork: topic: is required")
    assert got["stranger"] == (
        invalid,
        "memwork: subject: is not an argument of recall (it takes: topic)",
    )
    assert got["budget"] == (invalid, "memwork: budget: must be an integer (got 'lots')")
    assert got["negative"][0] == invalid and got["negative"][1].startswith("memwork: budget:")
    assert got["fine"] + "\n" == cli("context", "--task", "t", "--budget", "300", now=NOW).out


# -- hanging up ---------------------------------------------------------------------------------
HANGUP = """
import json, subprocess, sys
server = subprocess.Popen(
    [sys.executable, "-m", "memwork", "--db", sys.argv[1], "mcp"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
)
def send(message):
    server.stdin.write((json.dumps(message) + "\\n").encode())
    server.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}})
server.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
batch = [{"task_id": "t", "score": 0.5, "summary": "s" * 2000} for _ in range(int(sys.argv[2]))]
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
      "params": {"name": "record_episode", "arguments": {"episodes": batch}}})
# The client goes away mid-call: both pipes close, as when it is killed.
server.stdout.close()
server.stdin.close()
code = server.wait(timeout=120)
print(json.dumps({"code": code, "stderr": server.stderr.read().decode()}))
"""


@pytest.mark.slow
@pytest.mark.folder_only
def test_a_client_that_hangs_up_mid_call_ends_the_server_cleanly(tmp_path: Path) -> None:
    import subprocess

    store = tmp_path / "s"
    done = subprocess.run(
        [sys.executable, "-c", HANGUP, str(store), "400"],
        capture_output=True,
        text=True,
        env=python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0"),
        timeout=180,
    )
    outcome = json.loads(done.stdout.strip().splitlines()[-1])
    assert outcome == {"code": 0, "stderr": ""}
    # The call was all-or-nothing: either every episode of the batch is there, or none.
    if store.exists():
        opened = Store(store)
        with opened.reading():
            recorded = opened.get("meta", "episodes")
        assert recorded is None or recorded["total_episodes"] in (0, 400)


@pytest.mark.slow
def test_the_working_memory_librarys_answers_as_tool_arguments(db: Path) -> None:
    """A default for a missing key, a delete that may find nothing, progress only for a
    task that exists, and a session id of the agent's own with a project."""

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        await call(client, "wm_set", key="deploy", value="friday", scope="project:web")
        out["start"] = await call(client, "start_session", project="web", session="run-42")
        out["shared"] = await call(client, "wm_get", session="run-42", key="deploy")
        out["default"] = await call(client, "wm_get", session="run-42", key="x", default=7)
        out["delete"] = await call(client, "wm_delete", session="run-42", key="x", missing_ok=True)
        out["task"] = await call(client, "wm_task", session="run-42", progress=5, if_exists=True)
        return out

    out = with_server(db, body)
    assert (out["start"]["id"], out["start"]["project"]) == ("run-42", "web")
    assert (out["shared"]["value"], out["shared"]["scope"]) == ("friday", "project:web")
    assert out["default"] == {"key": "x", "value": 7, "found": False, "scope": None}
    assert out["delete"] == {"key": "x", "deleted": False, "scope": None}
    assert out["task"] is None
