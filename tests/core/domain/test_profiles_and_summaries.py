"""A project's profile and past sessions' summaries in the context: after the pinned
slots, inside the budget, with sources; profile set/show/list at the CLI, the API and
MCP on a folder and Redis; an agent's write waits for review while review is on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from tests.conftest import curator_args, folder_digest
from tests.doors import mcp, tool

BOTH_BACKENDS = True


def _ended(cli: Any, project: str, title: str, summary: str, when: str) -> str:
    sid = cli("session", "start", "--project", project, "--title", title, now=when).out.strip()
    assert cli("session", "end", sid, "--summary", summary, now=when).code == 0
    return sid


def test_the_profile_follows_the_slots_and_summaries_come_newest_first(
    cli: Any, db: Path | str
) -> None:
    cli("slot", "set", "persona", "Be terse.")
    done = cli("--json", "profile", "set", "api", "The API service, on Postgres 16.")
    assert done.code == 0, done.err and done.json()["project"] == "api"
    assert cli("profile", "show", "api").out == "The API service, on Postgres 16.\n"
    ids = [
        _ended(cli, "api", f"run {n}", f"summary {n}", f"2026-11-0{n}T12:00:00Z")
        for n in range(1, 6)
    ]
    _ended(cli, "web", "other", "not this project", "2026-11-07T12:00:00Z")
    text = cli("context", "--project", "api").out
    assert text.index("Be terse.") < text.index("## Project api") < text.index("Postgres 16")
    recent = text.split("## Recent sessions", 1)[1]
    lines = [x for x in recent.splitlines() if x.startswith("- ")][:3]
    assert [x.split(": ", 1)[1] for x in lines] == ["summary 5", "summary 4", "summary 3"]
    assert "not this project" not in text and "summary 2" not in text
    # Without the project, neither shows.
    plain = cli("context").out
    assert "## Project api" not in plain and "## Recent sessions" not in plain
    # With sources: each line names the record it came from.
    doc = cli("context", "--project", "api", "--format", "json").json()
    sections = {s["name"]: s for s in doc["sections"]}
    assert sections["profile"]["sources"][0][0]["kind"] == "profile"
    assert [src[0]["id"] for src in sections["sessions"]["sources"]] == ids[:1:-1][:3]
    # Inside the budget: summaries go first when it is tight, the profile stays.
    tight = cli("context", "--project", "api", "--budget", "40").out
    assert "## Recent sessions" not in tight and "## Project api" in tight


@pytest.mark.slow
def test_a_profile_over_its_limit_is_refused_and_review_queues_an_agents_edit(
    cli: Any, db: Path | str
) -> None:
    cli("profile", "set", "api", "First words.")
    before = folder_digest(db)
    refused = cli("profile", "set", "api", "x" * 30, "--limit", "20")
    assert refused.code == 2 and "limit" in refused.err
    assert folder_digest(db) == before
    assert cli("config", "set", "review", "on").code == 0
    with Memory(db) as memory:
        proposed = memory.set_profile("api", "An agent's words.")
        assert proposed["proposed"] is True
        assert memory.get_profile("api")["content"] == "First words."

    async def body(client: Client) -> Any:
        return await tool(client, "list_profiles")

    assert [p["content"] for p in mcp(db, body)] == ["First words."]
    [proposal] = cli("--json", "review", "list").json()
    assert proposal["kind"] == "profile" and proposal["after"] == "An agent's words."
    assert cli(*curator_args(), "review", "approve", proposal["id"]).code == 0
    assert cli("profile", "show", "api").out == "An agent's words.\n"
