"""What the CLI could always do, an agent over MCP can do now: doctor, export, a session's
timeline (and history, get_lesson, list_sessions, get_session, delete_slot, lint and the
review list, which the registry already offered)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from tests.doors import mcp, tool

BOTH_BACKENDS = True


@pytest.mark.slow
def test_an_agent_checks_exports_and_reads_a_timeline_over_mcp(cli: Any, db: Path | str) -> None:
    sid = cli("session", "start", "--title", "rollout").out.strip()
    for n in range(4):
        cli("observe", "--session", sid, f"step {n}")
    cli("slot", "set", "persona", "Be terse.")
    cli("lesson", "add", "Canary every deploy")

    async def body(client: Client) -> dict[str, Any]:
        tools = {t.name for t in (await client.list_tools()).tools}
        return {
            "tools": tools,
            "doctor": await tool(client, "doctor"),
            "export": await tool(client, "export"),
            "timeline": await tool(client, "get_session", session=sid, order="newest", limit=2),
            "oldest": await tool(client, "get_session", session=sid),
            "deleted": await tool(client, "delete_slot", label="persona"),
            "lint": await tool(client, "lint"),
            "history": await tool(client, "history", limit=3),
            "pending": await tool(client, "list_proposals"),
        }

    got = mcp(db, body)
    assert {
        "history",
        "get_lesson",
        "list_sessions",
        "get_session",
        "doctor",
        "export",
        "delete_slot",
        "lint",
        "list_proposals",
    } <= got["tools"]
    assert got["doctor"]["ok"] is True
    assert {c["name"] for c in got["doctor"]["checks"]} >= {"schema"}
    # The same document the CLI exports (taken before the slot went).
    exported = got["export"]
    assert exported["format"] == "memwork-export"
    assert [s["label"] for s in exported["tables"]["slots"]] == ["persona"]
    assert [o["content"] for o in got["timeline"]["observations"]] == ["step 3", "step 2"]
    assert [o["content"] for o in got["oldest"]["observations"]][0] == "step 0"
    assert got["deleted"]["label"] == "persona"
    assert got["history"][0]["action"] == "delete"
    assert cli("slot", "list", "--json").json() == []
    with Memory(db) as memory:
        again = memory.export()
    assert json.dumps(again["tables"]["lessons"]) == json.dumps(exported["tables"]["lessons"])


def test_doctor_at_the_api_says_a_problem_without_raising(tmp_path: Path) -> None:
    with Memory(tmp_path / "s") as memory:
        memory.add_lesson("Canary every deploy")
        memory.store.fold_log()  # the lesson in its table file, which is then damaged
        (tmp_path / "s" / "lessons.json").write_text("{not json")
        found = memory.doctor()
    assert found["ok"] is False
    assert any(c["status"] == "problem" for c in found["checks"])
