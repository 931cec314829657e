"""A session's keys as a whole (core/domain/working_memory/keys.py: clear, exists, keys by
a glob, get-all), with scratch clear and stats, through the CLI, the Python API and MCP,
on a folder and on Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from tests.doors import mcp, tool

BOTH_BACKENDS = True
NOW = "2026-11-01T12:00:00Z"
LATER = "2026-11-01T12:02:00Z"


def _fill(cli: Any, session: str) -> None:
    for key, value in (("build.id", "41"), ("build.url", "ci/41"), ("owner", "me")):
        assert cli("wm", "--session", session, "set", key, value, now=NOW).code == 0
    cli("wm", "--session", session, "set", "lease", "x", "--ttl", "60", now=NOW)
    cli("wm", "--session", session, "task", "--id", "t1", "--description", "ship", now=NOW)
    cli("wm", "--session", session, "scratch", "add", "tried a", now=NOW)
    cli("wm", "--session", session, "scratch", "add", "tried b", now=NOW)
    cli("wm", "--session", session, "checkpoint", "create", "-m", "before", now=NOW)


def test_the_cli_asks_lists_counts_and_clears(cli: Any, db: Path | str) -> None:
    _fill(cli, "run-1")
    wm = ("wm", "--session", "run-1")
    assert cli(*wm, "keys", now=NOW).out.split() == ["build.id", "build.url", "lease", "owner"]
    assert cli(*wm, "keys", "build.*", now=NOW).out.split() == ["build.id", "build.url"]
    assert cli(*wm, "exists", "lease", now=NOW).out == "true\n"
    # Expired keys are invisible to every question.
    assert cli(*wm, "exists", "lease", now=LATER).out == "false\n"
    assert cli(*wm, "keys", "l*", now=LATER).out == ""
    assert cli("--json", *wm, "get-all", now=LATER).json() == {
        "build.id": "41",
        "build.url": "ci/41",
        "owner": "me",
    }
    stats = cli("--json", *wm, "stats", now=NOW).json()
    assert stats == {
        "session_id": "run-1",
        "total_keys": 6,
        "user_keys": 4,
        "checkpoints": 1,
        "scratchpad_entries": 2,
        "has_task_state": True,
        "ttl_keys": 1,
        "using_fallback": False,
        "scope": "session",
        "inherited_keys": 0,
        "scope_keys": {},
    }
    cleared = cli("--json", *wm, "clear", now=LATER).json()
    assert cleared["cleared"] == ["build.id", "build.url", "owner"]
    after = cli("--json", *wm, "stats", now=LATER).json()
    assert after["user_keys"] == 0 and after["has_task_state"] and after["scratchpad_entries"] == 2
    assert cli(*wm, "scratch", "clear", now=LATER).out == "cleared 2 notes\n"
    assert cli("--json", *wm, "scratch", "list").json() == []
    assert cli(*wm, "task", now=LATER).out.startswith("t1")  # the task state stayed
    bad = cli(*wm, "keys", "")
    assert bad.code == 2 and bad.err.startswith("memwork: pattern")


@pytest.mark.slow
def test_the_api_and_mcp_answer_alike(cli: Any, db: Path | str) -> None:
    _fill(cli, "run-2")
    with Memory(db) as memory:
        assert memory.wm_keys("run-2", "own*") == ["owner"]
        assert memory.wm_exists("run-2", "owner") == {
            "key": "owner",
            "exists": True,
            "scope": "session",
        }
        assert memory.wm_get_all("run-2")["build.id"] == "41"
        assert memory.wm_stats("run-2")["user_keys"] >= 3

    async def body(client: Client) -> dict[str, Any]:
        return {
            "keys": await tool(client, "wm_keys", session="run-2", pattern="build.*"),
            "exists": await tool(client, "wm_exists", session="run-2", key="nope"),
            "stats": await tool(client, "wm_stats", session="run-2"),
            "clear": await tool(client, "wm_clear", session="run-2"),
            "scratch": await tool(client, "scratch_clear", session="run-2"),
            "all": await tool(client, "wm_get_all", session="run-2"),
        }

    out = mcp(db, body)
    assert out["keys"] == ["build.id", "build.url"]
    assert out["exists"] == {"key": "nope", "exists": False, "scope": None}
    assert out["stats"]["using_fallback"] is False and out["stats"]["checkpoints"] == 1
    assert "owner" in out["clear"]["cleared"] and out["scratch"]["cleared"] == 2
    assert out["all"] == {}
    assert cli("--json", "wm", "--session", "run-2", "get-all").json() == {}


def test_an_operators_default_ttl_applies_to_keys_set_without_one(cli: Any, db: Path | str) -> None:
    from tests.conftest import folder_digest

    wm = ("wm", "--session", "run-3")
    cli(*wm, "set", "before", "x", now=NOW)
    assert cli("config", "set", "wm_default_ttl", "90", now=NOW).code == 0
    snapshot = folder_digest(db)
    refused = cli("config", "set", "wm_default_ttl", "soon")
    assert refused.code == 2 and "wm_default_ttl must be off or whole seconds" in refused.err
    assert folder_digest(db) == snapshot
    cli(*wm, "set", "lease", "x", now=NOW)
    cli(*wm, "set", "short", "x", "--ttl", "10", now=NOW)  # a key's own TTL wins
    keys = {k["key"]: k for k in cli("--json", *wm, "list", now=NOW).json()}
    assert keys["lease"]["ttl_remaining"] == 90 and keys["short"]["ttl_remaining"] == 10
    assert keys["before"]["ttl_remaining"] is None  # set before: kept as it was
    later = "2026-11-01T12:01:31Z"
    assert cli(*wm, "keys", now=later).out.split() == ["before"]
    cli("config", "set", "wm_default_ttl", "off", now=NOW)
    cli(*wm, "set", "after", "x", now=NOW)
    assert cli("--json", *wm, "get", "after", now=NOW).json()["expires_at"] is None
