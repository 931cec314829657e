"""Work items: the frontier's order, dependencies and their cycles, and the frontier in
the context, through the CLI, the Python API and MCP, on a folder and on Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import UserError
from tests.conftest import folder_digest
from tests.doors import mcp, tool, tool_error

BOTH_BACKENDS = True


def _add(cli: Any, title: str, *flags: str, now: str | None = None) -> str:
    done = cli("--json", "action", "add", title, *flags, now=now)
    assert done.code == 0, done.err
    return str(done.json()["id"])


def test_the_frontier_is_workable_actions_by_priority_then_age(cli: Any, db: Path | str) -> None:
    first = _add(cli, "write the runbook", now="2026-11-01T10:00:00Z")
    older = _add(cli, "rotate keys", "--priority", "1", now="2026-11-01T10:01:00Z")
    newer = _add(cli, "backfill", "--priority", "1", now="2026-11-01T10:02:00Z")
    urgent = _add(
        cli, "page on-call", "--priority", "3", "--after", first, now="2026-11-01T10:03:00Z"
    )
    blocked = _add(cli, "flags", "--priority", "5", now="2026-11-01T10:04:00Z")
    cli("action", "update", blocked, "--status", "blocked")
    active = _add(cli, "canary", now="2026-11-01T10:05:00Z")
    cli("action", "update", active, "--status", "active")

    def frontier() -> list[str]:
        return [a["id"] for a in cli("--json", "action", "frontier").json()]

    # Highest priority first, then oldest; waiting or blocked actions are not on it.
    assert frontier() == [older, newer, first, active]
    shown = cli("--json", "action", "show", urgent).json()
    assert shown["waiting_for"] == [first] and shown["workable"] is False
    # Its dependency done, the waiting action joins, at its priority.
    cli("action", "update", first, "--status", "done", "--note", "docs/runbook.md")
    assert frontier() == [urgent, older, newer, active]
    assert cli("--json", "action", "show", first).json()["notes"][0]["text"] == "docs/runbook.md"
    assert [a["id"] for a in cli("--json", "action", "list", "--status", "blocked").json()] == [
        blocked
    ]
    # The context shows the top 5 as a section of its own.
    text = cli("context").out
    assert "## Work to do now" in text
    section = text.split("## Work to do now", 1)[1].split("##", 1)[0]
    assert section.index("page on-call") < section.index("rotate keys") < section.index("canary")
    assert "flags" not in section and "write the runbook" not in section


def test_a_cycle_is_refused_naming_it_and_the_store_is_untouched(cli: Any, db: Path | str) -> None:
    a = _add(cli, "a")
    b = _add(cli, "b", "--after", a)
    c = _add(cli, "c", "--after", b)
    before = folder_digest(db)
    refused = cli("action", "update", a, "--after", c)
    assert refused.code == 2
    assert "cycle" in refused.err and all(x in refused.err for x in (a, b, c))
    assert refused.err.startswith("memwork: ") and refused.err.count("\n") == 1
    assert folder_digest(db) == before
    # Waiting for itself is the smallest cycle.
    assert cli("action", "update", a, "--after", a).code == 2
    assert cli("link", a, c, "--kind", "after").code == 2  # the same rule through links
    assert folder_digest(db) == before
    assert cli("action", "add", "x", "--after", "act_nope").code == 2


@pytest.mark.slow
def test_the_api_and_mcp_share_the_frontier_and_the_cycle_rule(cli: Any, db: Path | str) -> None:
    with Memory(db) as memory:
        one = memory.action_create("deploy", priority=2)["id"]
        two = memory.action_create("verify", after=[one])["id"]
        assert [a["id"] for a in memory.frontier()] == [one]
        with pytest.raises(UserError, match="cycle"):
            memory.action_update(one, after=[two])

    async def body(client: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        await tool(client, "action_update", action=one, status="done")
        out["frontier"] = await tool(client, "frontier")
        out["cycle"] = await tool_error(client, "action_update", action=one, after=[two])
        out["made"] = await tool(client, "action_create", title="announce", after=[two])
        return out

    out = mcp(db, body)
    assert [a["id"] for a in out["frontier"]] == [two]
    assert "cycle" in out["cycle"]
    assert cli("--json", "action", "show", out["made"]["id"]).json()["waiting_for"] == [two]
    assert [a["id"] for a in cli("--json", "action", "frontier").json()] == [two]


def _chain_file(folder: Path, length: int) -> tuple[Path, list[str]]:
    """An export of ``length`` actions, each waiting for the one before (made in one
    import: a thousand adds would each check the growing chain)."""
    from memwork.core.base.ids import new_id

    stamp = "2026-11-01T10:00:00Z"
    chain = [new_id("act") for _ in range(length)]
    actions = [
        {
            "id": key,
            "title": f"step {n}",
            "status": "pending",
            "priority": 0,
            "project": "",
            "session_id": "",
            "agent_id": "",
            "notes": [],
            "closed_at": None,
            "created_at": stamp,
            "updated_at": stamp,
        }
        for n, key in enumerate(chain)
    ]
    links = [
        {
            "id": new_id("lnk"),
            "kind": "after",
            "from": later,
            "to": earlier,
            "home": "actions",
            "note": "",
            "seq": 1,
            "created_at": stamp,
            "updated_at": stamp,
        }
        for earlier, later in zip(chain, chain[1:], strict=False)
    ]
    path = folder / "chain.json"
    export = {
        "format": "memwork-export",
        "schema_version": 3,
        "exported_at": stamp,
        "tables": {"actions": actions, "links": links},
    }
    path.write_text(json.dumps(export))
    return path, chain


def test_a_chain_deeper_than_the_recursion_limit_is_walked_and_its_cycle_named(
    cli: Any, db: Path | str, tmp_path: Path
) -> None:
    path, chain = _chain_file(tmp_path, 1100)
    imported = cli("import", str(path))
    assert imported.code == 0, imported.err
    done = cli("--json", "action", "add", "ship it", "--after", chain[-1])
    assert done.code == 0, done.err
    assert done.json()["after"] == [chain[-1]]
    assert cli("link", chain[-1], chain[-2], "--kind", "related").code == 0
    before = folder_digest(db)
    # Closing the chain into a loop is refused with one short line that names its ends.
    refused = cli("action", "update", chain[0], "--after", chain[-1])
    assert refused.code == 2, refused.err
    assert refused.err.count("\n") == 1 and len(refused.err) < 600
    assert "cycle" in refused.err and chain[0] in refused.err and chain[-1] in refused.err
    assert "(1100 actions)" in refused.err
    assert cli("link", chain[0], chain[-1], "--kind", "after").code == 2
    assert folder_digest(db) == before
    assert [a["id"] for a in cli("--json", "action", "frontier").json()] == [chain[0]]


@pytest.mark.folder_only
def test_a_wrong_typed_action_is_named_and_left_out(cli: Any, db: Path) -> None:
    from tests.conftest import folded, resealed

    bad = _add(cli, "write the runbook")
    good = _add(cli, "rotate keys")
    path = folded(db) / "actions.json"
    data = json.loads(path.read_text())
    data["documents"][bad]["priority"] = "high"
    data["documents"][good].pop("notes")  # an older memwork's record: read with its default
    path.write_text(json.dumps(data))
    resealed(path)  # planted by hand: not damage
    said = (
        f"memwork: actions: record '{bad}': priority: must be a whole number (got 'high'); "
        "left out (memwork doctor names it)\n"
    )
    for args in (("context",), ("action", "list"), ("--json", "action", "frontier")):
        done = cli(*args)
        # Said once per process (each CLI call is one; these run in this test's process).
        assert done.code == 0 and done.err == (said if args == ("context",) else ""), args
        assert bad not in done.out and good in done.out
    assert cli("action", "add", "page on-call", "--after", good).code == 0
    assert cli("--json", "action", "show", good).json()["notes"] == []
    folded(db)
    assert json.loads(path.read_text())["documents"][bad]["priority"] == "high"  # kept as is
