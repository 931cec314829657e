"""Per-agent isolation (``memwork config set isolation agent``): agent A never sees agent
B's sessions, observations, working memory or episodes, by any door (CLI, Python API,
MCP, HTTP), on a folder and on a Redis store; global records are seen by both; turning
isolation off (the curator's decision) shows everything again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import Conflict, NotFound
from tests.conftest import curator_args, folder_digest, python_env
from tests.doors import mcp, tool, tool_error
from tests.http_server import Served, client

BOTH_BACKENDS = True

#: Words only one agent's records hold: finding one in the other's answer is a leak.
SECRET = {"alice": "giraffe", "bob": "elephant"}


def as_agent(cli: Any, monkeypatch: pytest.MonkeyPatch, agent: str | None, *args: str) -> Any:
    """``memwork ARGS`` run by ``agent`` (MEMWORK_AGENT; None: no agent id)."""
    if agent is None:
        monkeypatch.delenv("MEMWORK_AGENT", raising=False)
    else:
        monkeypatch.setenv("MEMWORK_AGENT", agent)
    try:
        return cli(*args)
    finally:
        monkeypatch.delenv("MEMWORK_AGENT", raising=False)


def populate(cli: Any, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Two agents' private records and a few global ones, isolation on; their ids."""
    assert cli("curator", "init").code == 0  # the person who may turn isolation off
    assert cli("config", "set", "isolation", "agent").out == "isolation: shared -> agent\n"
    made: dict[str, Any] = {}
    for agent, word in SECRET.items():
        run = lambda *a, agent=agent: as_agent(cli, monkeypatch, agent, *a)  # noqa: E731
        sid = run("session", "start", "--title", f"{agent} purple run").out.strip()
        obs = run("observe", "--session", sid, f"{agent} saw the purple {word}").out.strip()
        assert run("wm", "--session", sid, "set", "plan", f"purple {word} plan").code == 0
        episode = {
            "task_id": "deploy",
            "score": 0.2 if agent == "alice" else 0.9,
            "summary": f"purple deploy with the {word}",
            "errors": [{"error_type": f"{word.title()}Error", "message": f"the {word} bit"}],
        }
        ep = as_agent_stdin(cli, monkeypatch, agent, json.dumps(episode))
        run("session", "end", sid, "--summary", f"{agent} finished the purple {word} work")
        made[agent] = {"session": sid, "observation": obs, "episode": ep}
    # Global: slots and lessons are shared on purpose; an agent with no id writes globally.
    assert cli("slot", "set", "persona", "Be terse about purple things.").code == 0
    lesson = cli("--json", "lesson", "add", "Purple deploys want a canary").json()["id"]
    made["lesson"] = lesson
    for agent in SECRET:  # linked by a person (the curator sees every agent's records)
        linked = cli(*curator_args(), "link", lesson, made[agent]["episode"], "--kind", "about")
        assert linked.code == 0, linked.err
    anon = json.dumps({"task_id": "deploy", "score": 0.5, "summary": "purple deploy shared"})
    made["global_episode"] = cli("record-episode", "-", stdin=anon).out.strip()
    return made


def as_agent_stdin(cli: Any, monkeypatch: pytest.MonkeyPatch, agent: str, text: str) -> str:
    monkeypatch.setenv("MEMWORK_AGENT", agent)
    try:
        done = cli("record-episode", "-", stdin=text)
    finally:
        monkeypatch.delenv("MEMWORK_AGENT", raising=False)
    assert done.code == 0, done.err
    return str(done.out.strip())


def test_an_agent_never_sees_another_agents_records_at_the_cli(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = populate(cli, monkeypatch)
    for me, other in (("alice", "bob"), ("bob", "alice")):
        run = lambda *a, me=me: as_agent(cli, monkeypatch, me, *a)  # noqa: E731
        mine, theirs = made[me], made[other]
        hidden = SECRET[other]
        # Lists and search: own and global records only.
        listed = run("--json", "session", "list").json()
        assert [s["id"] for s in listed] == [mine["session"]]
        hits = run("--json", "search", "purple", "--limit", "50").json()
        ids = {h["id"] for h in hits}
        assert mine["episode"] in ids and made["global_episode"] in ids
        assert f"{mine['session']}/{mine['observation']}" in ids
        assert f"{mine['session']}/plan" in ids
        assert not any(theirs["session"] in i or i == theirs["episode"] for i in ids)
        assert hidden not in json.dumps(hits)
        # The context: own failures, episodes, mean, summaries and relevant memories.
        context = run("context", "--task", "deploy", "--query", f"purple {hidden}")
        assert context.code == 0, context.err
        assert SECRET[me] in context.out and hidden not in context.out
        assert "Be terse about purple things." in context.out
        assert "Purple deploys want a canary" in context.out
        own_mean = 0.2 if me == "alice" else 0.9
        assert f"Your mean score on deploy: {(own_mean + 0.5) / 2:.2f} (over 2 episodes)" in (
            context.out
        )
        as_json = run("context", "--task", "deploy", "--format", "json", "--project", "x")
        assert hidden not in as_json.out
        # By id: not found (exit 2, one line), the store untouched.
        before = folder_digest(db)
        for args in (
            ("session", "show", theirs["session"]),
            ("get", theirs["session"]),
            ("get", theirs["episode"]),
            ("get", theirs["observation"]),
            ("get", f"{theirs['session']}/{theirs['observation']}"),
            ("get", f"{theirs['session']}/plan"),
            ("wm", "--session", theirs["session"], "get", "plan"),
            ("wm", "--session", theirs["session"], "list"),
            ("wm", "--session", theirs["session"], "keys"),
            ("wm", "--session", theirs["session"], "get-all"),
            ("wm", "--session", theirs["session"], "set", "mine", "now"),
            ("observe", "--session", theirs["session"], "sneaking in"),
            ("session", "end", theirs["session"]),
            ("session", "delete", theirs["session"]),
            ("observation", "delete", theirs["observation"]),
            ("links", theirs["episode"]),
        ):
            done = run(*args)
            assert done.code == 2, (args, done.out)
            assert "not found" in done.err and done.err.count("\n") == 1, (args, done.err)
            assert hidden not in done.out + done.err
        assert folder_digest(db) == before
        # The audit log: not the other agent's doings.
        history = run("--json", "history", "--limit", "100").json()
        assert history and not any(e["actor"].endswith(f":{other}") for e in history)
        assert hidden not in json.dumps(history)
        # A global record linked to both agents' episodes: only the link to one's own.
        ends = run("--json", "links", made["lesson"]).json()["outgoing"]
        assert [e["target"]["id"] for e in ends] == [mine["episode"]]
        # What the agent may read by id, it reads.
        assert run("--json", "get", mine["episode"]).json()["record"]["agent_id"] == me
        assert run("wm", "--session", mine["session"], "get", "plan").code == 0


def test_no_agent_id_sees_only_global_records_and_export_is_for_the_curator(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = populate(cli, monkeypatch)
    # No MEMWORK_AGENT while isolation is on: only what belongs to no agent.
    assert cli("--json", "session", "list").json() == []
    hits = cli("--json", "search", "purple", "--limit", "50").json()
    assert {h["kind"] for h in hits} >= {"episode", "lesson", "slot"}
    assert not any(h["kind"] in ("observation", "session", "wm") for h in hits)
    assert all(h["id"] not in (made["alice"]["episode"], made["bob"]["episode"]) for h in hits)
    # Export holds every agent's records: an agent's door is refused, the curator is not.
    for agent in ("alice", None):
        refused = as_agent(cli, monkeypatch, agent, "export")
        assert refused.code == 2 and refused.out == ""
        assert refused.err.startswith("memwork: export: isolation is agent")
    checkpoint = cli(*curator_args(), "checkpoint", "create").out.strip()
    refused = as_agent(cli, monkeypatch, "alice", "checkpoint", "restore", checkpoint)
    assert refused.code == 2
    assert refused.err.startswith("memwork: checkpoint restore: isolation is agent")
    exported = cli(*curator_args(), "export")
    assert exported.code == 0 and "giraffe" in exported.out and "elephant" in exported.out
    # A session for another agent is refused (it would be a write into another's memory).
    done = as_agent(cli, monkeypatch, "alice", "session", "start", "--agent", "bob")
    assert done.code == 2 and done.err.startswith("memwork: agent: must be your own agent id")


def test_turning_isolation_off_takes_the_curator_and_shows_everything_again(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = populate(cli, monkeypatch)
    for agent in ("alice", None):
        refused = as_agent(cli, monkeypatch, agent, "config", "set", "isolation", "shared")
        assert refused.code == 2 and "curator key" in refused.err
    assert cli("config", "get", "isolation").out == "agent\n"
    bad = cli(*curator_args(), "config", "set", "isolation", "private")
    assert bad.code == 2
    assert bad.err == "memwork: value: isolation must be one of shared, agent (got 'private')\n"
    done = cli(*curator_args(), "config", "set", "isolation", "shared")
    assert done.code == 0 and done.out == "isolation: agent -> shared\n"
    listed = as_agent(cli, monkeypatch, "alice", "--json", "session", "list").json()
    assert {s["id"] for s in listed} == {made["alice"]["session"], made["bob"]["session"]}
    shown = as_agent(cli, monkeypatch, "alice", "get", made["bob"]["episode"])
    assert shown.code == 0 and "elephant" in shown.out
    context = as_agent(cli, monkeypatch, "alice", "context", "--task", "deploy")
    assert "(over 3 episodes)" in context.out
    # And on again: an agent may turn it on (it only ever hides more).
    assert as_agent(cli, monkeypatch, "alice", "config", "set", "isolation", "agent").code == 0
    assert (
        as_agent(cli, monkeypatch, "alice", "--json", "session", "list").json()[0]["id"]
        == (made["alice"]["session"])
    )


def test_the_python_api_filters_by_its_agent(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = populate(cli, monkeypatch)
    with Memory(db, agent="alice") as alice, Memory(db, agent="bob") as bob:
        assert [s["id"] for s in alice.list_sessions()] == [made["alice"]["session"]]
        assert [s["id"] for s in bob.list_sessions()] == [made["bob"]["session"]]
        assert "elephant" not in json.dumps(alice.search("purple elephant", limit=50))
        assert "giraffe" in json.dumps(alice.search("purple giraffe", limit=50))
        text = alice.context("deploy", query="purple elephant")
        assert "giraffe" in text and "elephant" not in text
        with pytest.raises(NotFound, match="session not found"):
            alice.get_session(made["bob"]["session"])
        with pytest.raises(NotFound):
            alice.wm_get(made["bob"]["session"], "plan")
        with pytest.raises(NotFound):
            alice.get_record(made["bob"]["episode"])
        with pytest.raises(Conflict, match="isolation is agent"):
            alice.export()
        assert bob.wm_get(made["bob"]["session"], "plan")["value"] == "purple elephant plan"
        # Writes are stamped: an episode recorded here is alice's, not bob's to read.
        new = alice.record_episode({"task_id": "deploy", "score": 0.4, "summary": "zebra"})
        with pytest.raises(NotFound):
            bob.get_record(new)
        assert alice.get_record(new)["record"]["agent_id"] == "alice"
    # A person's script with the store's curator key reads every agent's memory.
    with Memory(db, agent="ops", curator_key=curator_args()[1]) as person:
        assert len(person.list_sessions()) == 2
        assert "elephant" in json.dumps(person.export()["tables"]["observations"])


@pytest.mark.slow
def test_mcp_serves_an_agent_only_its_own_records(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = populate(cli, monkeypatch)
    bob = made["bob"]

    async def body(client: Client) -> dict[str, Any]:
        return {
            "sessions": await tool(client, "list_sessions"),
            "search": await tool(client, "search", query="purple elephant giraffe", limit=50),
            "context": await tool(client, "get_context", task="deploy", query="elephant"),
            "session": await tool_error(client, "get_session", session=bob["session"]),
            "record": await tool_error(client, "get_record", id=bob["episode"]),
            "wm": await tool_error(client, "wm_get_all", session=bob["session"]),
            "export": await tool_error(client, "export"),
            "history": await tool(client, "history", limit=100),
        }

    got = mcp(db, body, agent="alice")
    assert [s["id"] for s in got["sessions"]] == [made["alice"]["session"]]
    assert "elephant" not in json.dumps(got["search"]) and "giraffe" in json.dumps(got["search"])
    assert "elephant" not in got["context"] and "giraffe" in got["context"]
    assert "session not found" in got["session"]
    assert "episode not found" in got["record"]
    assert "session not found" in got["wm"]
    assert "isolation is agent" in got["export"]
    assert "elephant" not in json.dumps(got["history"])


@pytest.fixture
def served(db: Path | str) -> Iterator[Served]:
    server = Served(db, python_env(MEMWORK_NOW="2026-11-01T12:00:00Z", MEMWORK_FSYNC="0"))
    yield server
    code, rest = server.stop()
    assert code == 0, rest


@pytest.mark.slow
def test_the_http_door_filters_by_the_agent_header(
    cli: Any, monkeypatch: pytest.MonkeyPatch, served: Served
) -> None:
    made = populate(cli, monkeypatch)

    def post(name: str, body: dict[str, Any], agent: str) -> httpx2.Response:
        headers = {"X-Memwork-Agent": agent}
        return client().post(f"{served.url}/v1/{name}", json=body, headers=headers, timeout=60)

    listed = post("list_sessions", {}, "bob").json()
    assert [s["id"] for s in listed] == [made["bob"]["session"]]
    found = post("search", {"query": "purple giraffe elephant", "limit": 50}, "bob").json()
    assert "giraffe" not in json.dumps(found) and "elephant" in json.dumps(found)
    refused = post("get_session", {"session": made["alice"]["session"]}, "bob")
    assert refused.status_code >= 400 and "session not found" in refused.text


@pytest.mark.slow
def test_other_agents_records_never_crowd_out_ones_own_hits(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ranking looks only so deep: another agent's many better matches must not
    leave an isolated agent's one match out of its search or its context."""
    assert cli("config", "set", "isolation", "agent").code == 0
    # Alice's note first: on a tie the newest ranks first, so bob's all outrank it.
    mine = as_agent(cli, monkeypatch, "alice", "session", "start").out.strip()
    as_agent(cli, monkeypatch, "alice", "observe", "--session", mine, "deploy check passed")
    theirs = as_agent(cli, monkeypatch, "bob", "session", "start").out.strip()
    for n in range(150):
        as_agent(cli, monkeypatch, "bob", "observe", "--session", theirs, f"deploy check {n}")
    hits = as_agent(cli, monkeypatch, "alice", "--json", "search", "deploy check").json()
    assert [h["id"].partition("/")[0] for h in hits] == [mine]
    context = as_agent(cli, monkeypatch, "alice", "context", "--query", "deploy check")
    assert "deploy check passed" in context.out
    assert len(as_agent(cli, monkeypatch, "bob", "--json", "search", "deploy check").json()) == 10
