"""MEMWORK_TOKEN_BUDGET and MEMWORK_MAX_OBS_PER_SESSION: an operator's defaults, at every door.

A context asked for without a budget takes MEMWORK_TOKEN_BUDGET (else 2000); a
session started while MEMWORK_MAX_OBS_PER_SESSION is set keeps that many
observations. A malformed value is refused in one line naming the variable,
and nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memwork import Memory
from memwork.core.base.errors import UserError
from tests.conftest import folder_digest
from tests.doors import mcp, tool, tool_error

BOTH_BACKENDS = True


WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()


def _fill(cli: Any) -> None:
    for n, word in enumerate(WORDS):
        text = f"Check the {word} dashboard before step {n} of every {WORDS[-n]} rollout"
        assert cli("lesson", "add", text, "--on-duplicate", "keep-both").code == 0


@pytest.mark.slow
def test_the_context_takes_its_default_budget_from_the_environment(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(cli)
    full = cli("context", "--format", "json").json()
    assert full["budget_tokens"] == 2000 and not full["dropped"]

    monkeypatch.setenv("MEMWORK_TOKEN_BUDGET", "40")
    small = cli("context", "--format", "json").json()
    assert small["budget_tokens"] == 40
    assert small["dropped"] and small["estimated_tokens"] <= 40
    text = cli("context")
    assert len(text.out) < len(cli("context", "--budget", "2000").out)
    # A budget given on the command line wins over the environment.
    assert cli("context", "--budget", "2000", "--format", "json").json()["budget_tokens"] == 2000

    with Memory(db) as memory:
        assert memory.context(format="json")["budget_tokens"] == 40
        assert memory.context(budget=500, format="json")["budget_tokens"] == 500

    async def body(client: Client) -> Any:
        return await tool(client, "get_context", format="json")

    assert mcp(db, body, MEMWORK_TOKEN_BUDGET="40")["budget_tokens"] == 40


@pytest.mark.parametrize("bad", ["lots", "-5", "1.5", "9" * 30])
def test_a_malformed_budget_is_refused_naming_the_variable(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    _fill(cli)
    monkeypatch.setenv("MEMWORK_TOKEN_BUDGET", bad)
    before = folder_digest(db)
    result = cli("context")
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("memwork: MEMWORK_TOKEN_BUDGET: must be a whole number")
    assert result.err.count("\n") == 1
    assert folder_digest(db) == before
    with Memory(db) as memory, pytest.raises(UserError, match="MEMWORK_TOKEN_BUDGET"):
        memory.context()


@pytest.mark.slow
def test_mcp_says_a_malformed_budget_in_its_tool_error(db: Path | str, cli: Any) -> None:
    _fill(cli)

    async def body(client: Client) -> str:
        return await tool_error(client, "get_context")

    assert "MEMWORK_TOKEN_BUDGET: must be a whole number" in mcp(
        db, body, MEMWORK_TOKEN_BUDGET="lots"
    )


@pytest.mark.slow
def test_a_new_session_keeps_the_cap_the_environment_gives(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_MAX_OBS_PER_SESSION", "3")
    sid = cli("session", "start", "--title", "capped").out.strip()
    for n in range(5):
        assert cli("observe", "--session", sid, f"step {n}").code == 0
    shown = cli("session", "show", sid, "--json").json()
    assert [o["content"] for o in shown["observations"]] == ["step 2", "step 3", "step 4"]
    assert shown["max_observations"] == 3 and shown["dropped_observations"] == 2
    # An agent's own session id (implicit session) gets the same cap.
    for n in range(4):
        cli("observe", "--session", "run-7", f"note {n}")
    assert cli("session", "show", "run-7", "--json").json()["observation_count"] == 3

    # Sessions keep the cap they started with when the variable changes.
    monkeypatch.setenv("MEMWORK_MAX_OBS_PER_SESSION", "500")
    cli("observe", "--session", sid, "step 5")
    assert cli("session", "show", sid, "--json").json()["observation_count"] == 3
    with Memory(db) as memory:
        assert memory.start_session(title="roomy")["max_observations"] == 500

    async def body(client: Client) -> Any:
        return await tool(client, "start_session", title="mcp")

    assert mcp(db, body, MEMWORK_MAX_OBS_PER_SESSION="7")["max_observations"] == 7


def test_a_malformed_cap_is_refused_naming_the_variable(
    cli: Any, db: Path | str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = cli("session", "start").out.strip()
    monkeypatch.setenv("MEMWORK_MAX_OBS_PER_SESSION", "0")
    before = folder_digest(db)
    for args in (("session", "start"), ("observe", "--session", sid, "hello")):
        result = cli(*args)
        assert result.code == 2, args
        assert result.err.startswith("memwork: MEMWORK_MAX_OBS_PER_SESSION: must be a whole")
    assert folder_digest(db) == before
    with Memory(db) as memory, pytest.raises(UserError, match="MEMWORK_MAX_OBS_PER_SESSION"):
        memory.observe("run-9", "hello")
