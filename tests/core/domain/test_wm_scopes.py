"""Working-memory keys shared above the session (``--scope project:P`` / ``agent:A``):
every session of that project or agent sees them, its own key first, then its agent's,
then its project's; through the CLI, the Python API and MCP, on a folder and on Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import InvalidInput, NotFound
from tests.conftest import folder_digest
from tests.doors import mcp, tool, tool_error

BOTH_BACKENDS = True
NOW = "2026-11-01T12:00:00Z"
LATER = "2026-11-01T12:02:00Z"


def _session(cli: Any, agent: str, project: str) -> str:
    started = cli("--json", "session", "start", "--agent", agent, "--project", project, now=NOW)
    assert started.code == 0, started.err
    return str(started.json()["id"])


def test_a_session_sees_its_agents_and_projects_keys_its_own_first(cli: Any) -> None:
    bot_web = _session(cli, "bot", "web")
    other_web = _session(cli, "other", "web")
    bot_api = _session(cli, "bot", "api")
    for args in (
        ("set", "deploy", "friday", "--scope", "project:web"),
        ("set", "style", "project", "--scope", "project:web"),
        ("set", "style", "agent", "--scope", "agent:bot"),
    ):
        assert cli("wm", *args, now=NOW).code == 0  # no --session needed with a scope
    assert cli("wm", "--session", bot_web, "set", "style", "mine", now=NOW).code == 0

    def seen(sid: str) -> dict[str, tuple[Any, str]]:
        rows = cli("--json", "wm", "--session", sid, "list", now=NOW).json()
        return {r["key"]: (r["value"], r["scope"]) for r in rows}

    # Nearest wins: the session's own key, then its agent's, then its project's.
    assert seen(bot_web) == {"deploy": ("friday", "project:web"), "style": ("mine", "session")}
    assert seen(other_web) == {
        "deploy": ("friday", "project:web"),
        "style": ("project", "project:web"),
    }
    assert seen(bot_api) == {"style": ("agent", "agent:bot")}
    # Every read says where a key came from.
    got = cli("--json", "wm", "--session", other_web, "get", "deploy", now=NOW).json()
    assert got["value"] == "friday" and got["scope"] == "project:web"
    assert cli("wm", "--session", other_web, "get", "deploy", now=NOW).out == "friday\n"
    exists = cli("--json", "wm", "--session", bot_api, "exists", "style", now=NOW).json()
    assert exists == {"key": "style", "exists": True, "scope": "agent:bot"}
    assert cli("wm", "--session", bot_api, "exists", "deploy", now=NOW).out == "false\n"
    assert cli("wm", "--session", bot_web, "keys", now=NOW).out.split() == ["deploy", "style"]
    assert cli("--json", "wm", "--session", bot_web, "get-all", now=NOW).json() == {
        "deploy": "friday",
        "style": "mine",
        "_scopes": {"deploy": "project:web"},
    }
    listed = cli("wm", "--session", other_web, "list", now=NOW).out.splitlines()
    assert listed == ["deploy = friday  [project:web]", "style = project  [project:web]"]
    # A scope read alone gives that scope's keys.
    assert cli("wm", "keys", "--scope", "project:web", now=NOW).out.split() == ["deploy", "style"]
    stats = cli("--json", "wm", "--session", bot_web, "stats", now=NOW).json()
    assert stats["user_keys"] == 1 and stats["inherited_keys"] == 1
    assert stats["scope_keys"] == {"agent:bot": 1, "project:web": 2}
    scope_stats = cli("--json", "wm", "stats", "--scope", "project:web", now=NOW).json()
    assert scope_stats["scope"] == "project:web" and scope_stats["user_keys"] == 2


def test_delete_and_clear_act_on_one_scope_and_are_audited(cli: Any) -> None:
    sid = _session(cli, "bot", "web")
    cli("wm", "set", "deploy", "friday", "--scope", "project:web", now=NOW)
    cli("wm", "set", "lint", "strict", "--scope", "project:web", now=NOW)
    cli("wm", "--session", sid, "set", "own", "1", now=NOW)
    # A session never deletes what it inherits; the refusal names where the key lives.
    refused = cli("wm", "--session", sid, "delete", "deploy", now=NOW)
    assert refused.code == 2 and "inherited from project:web" in refused.err
    cleared = cli("--json", "wm", "--session", sid, "clear", now=NOW).json()
    assert cleared["cleared"] == ["own"]  # the session's clear leaves its project's keys
    assert cli("wm", "--session", sid, "keys", now=NOW).out.split() == ["deploy", "lint"]
    gone = cli("--json", "wm", "delete", "deploy", "--scope", "project:web", now=NOW).json()
    assert gone["key"] == "deploy" and gone["scope"] == "project:web"
    assert cli("wm", "--session", sid, "keys", now=NOW).out.split() == ["lint"]
    cleared = cli("--json", "wm", "clear", "--scope", "project:web", now=NOW).json()
    assert cleared == {"session_id": None, "scope": "project:web", "cleared": ["lint"]}
    assert cli("wm", "--session", sid, "keys", now=NOW).out == ""
    missing = cli("wm", "delete", "deploy", "--scope", "project:web", now=NOW)
    assert missing.code == 2 and "deploy in project:web" in missing.err
    entries = cli("--json", "history", "--table", "wm_scopes").json()
    assert [(e["action"], e["record_id"]) for e in entries] == [
        ("wm-clear", "project:web"),
        ("wm-delete", "project:web"),
        ("wm-set", "project:web"),
        ("wm-set", "project:web"),
    ]


def test_ttls_and_the_default_ttl_apply_to_scoped_keys(cli: Any) -> None:
    sid = _session(cli, "bot", "web")
    cli("wm", "set", "lease", "x", "--ttl", "60", "--scope", "agent:bot", now=NOW)
    assert cli("config", "set", "wm_default_ttl", "90", now=NOW).code == 0
    cli("wm", "set", "build", "41", "--scope", "project:web", now=NOW)
    rows = {r["key"]: r for r in cli("--json", "wm", "--session", sid, "list", now=NOW).json()}
    assert rows["lease"]["ttl_remaining"] == 60 and rows["build"]["ttl_remaining"] == 90
    assert cli("wm", "--session", sid, "exists", "lease", now=LATER).out == "false\n"
    assert cli("wm", "--session", sid, "keys", now=LATER).out == ""
    assert (
        cli("--json", "wm", "stats", "--scope", "project:web", now=LATER).json()["user_keys"] == 0
    )


def test_bad_scope_syntax_is_refused_and_leaves_the_store_alone(cli: Any, db: Path | str) -> None:
    sid = _session(cli, "bot", "web")
    cli("wm", "set", "k", "v", "--scope", "project:web", now=NOW)
    before = folder_digest(db)
    for scope in ("team", "project:", "user:me", "project: web", "session:x"):
        refused = cli("wm", "--session", sid, "set", "k", "v", "--scope", scope, now=NOW)
        assert refused.code == 2, scope
        assert refused.err.startswith("memwork: scope: must be project:<project> or agent:<agent>")
    no_one = cli("wm", "set", "k", "v", now=NOW)
    assert no_one.code == 2 and no_one.err.startswith("memwork: session: is required")
    task = cli("wm", "task", now=NOW)  # verbs without a scope still need their session
    assert task.code == 2 and task.err.startswith("memwork: session: is required")
    assert folder_digest(db) == before


@pytest.mark.slow
def test_the_api_and_mcp_share_and_resolve_alike(cli: Any, db: Path | str) -> None:
    sid = _session(cli, "tester", "web")
    with Memory(db) as memory:
        shared = memory.wm_set(None, "deploy", {"day": "friday"}, scope="project:web")
        assert shared["scope"] == "project:web"
        assert memory.wm_get(sid, "deploy")["scope"] == "project:web"
        assert memory.wm_get_all(sid) == {
            "deploy": {"day": "friday"},
            "_scopes": {"deploy": "project:web"},
        }
        try:
            memory.wm_set(sid, "x", 1, scope="nowhere")
        except InvalidInput as exc:
            assert exc.field == "scope"
        else:
            raise AssertionError("a bad scope must be refused")
        try:
            memory.wm_delete(sid, "deploy")
        except NotFound as exc:
            assert "project:web" in str(exc)
        else:
            raise AssertionError("a session must not delete what it inherits")

    async def body(client: Client) -> dict[str, Any]:
        return {
            "set": await tool(client, "wm_set", key="style", value="terse", scope="agent:tester"),
            "list": await tool(client, "wm_list", session=sid),
            "exists": await tool(client, "wm_exists", session=sid, key="style"),
            "bad": await tool_error(client, "wm_get", session=sid, key="k", scope="x:y"),
            "none": await tool_error(client, "wm_get", key="k"),
        }

    out = mcp(db, body)
    assert out["set"]["scope"] == "agent:tester"
    assert [(r["key"], r["scope"]) for r in out["list"]] == [
        ("deploy", "project:web"),
        ("style", "agent:tester"),
    ]
    assert out["exists"]["scope"] == "agent:tester"
    assert "scope: must be project:<project> or agent:<agent>" in out["bad"]
    assert "session: is required" in out["none"]


def test_while_isolated_an_agent_scope_is_that_agents_alone(
    cli: Any, monkeypatch: Any, db: Path | str
) -> None:
    from tests.core.ledger.test_isolation import as_agent

    assert cli("curator", "init").code == 0
    assert cli("config", "set", "isolation", "agent").code == 0

    def run(agent: str, *args: str) -> Any:
        return as_agent(cli, monkeypatch, agent, *args)

    alice = run("alice", "session", "start", "--project", "web").out.strip()
    bob = run("bob", "session", "start", "--project", "web").out.strip()
    assert run("alice", "wm", "set", "style", "giraffe", "--scope", "agent:alice").code == 0
    assert run("alice", "wm", "set", "deploy", "friday", "--scope", "project:web").code == 0
    before = folder_digest(db)
    for args in (
        ("get", "style", "--scope", "agent:alice"),
        ("keys", "--scope", "agent:alice"),
        ("set", "style", "x", "--scope", "agent:alice"),
        ("clear", "--scope", "agent:alice"),
    ):
        refused = run("bob", "wm", *args)
        assert refused.code == 2 and "working-memory scope not found: agent:alice" in refused.err
    assert folder_digest(db) == before
    # Bob's session inherits his project's keys, never alice's own.
    seen = run("bob", "--json", "wm", "--session", bob, "get-all").json()
    assert seen == {"deploy": "friday", "_scopes": {"deploy": "project:web"}}
    mine = run("alice", "--json", "wm", "--session", alice, "get-all").json()
    assert mine["style"] == "giraffe" and mine["_scopes"]["style"] == "agent:alice"
