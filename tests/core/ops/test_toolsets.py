"""The MCP tool sets: declared with the operations, chosen by ``--tools`` / the environment."""

from __future__ import annotations

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.ops.operations import TOOLSETS, door_ops
from memwork.core.ops.toolsets import chosen_tools, select_tools, tool_name


def test_every_tool_belongs_to_one_declared_set() -> None:
    for op in door_ops("mcp"):
        assert op.toolset in TOOLSETS, op.name
    agent = {tool_name(op) for op in select_tools("agent")}
    assert len(agent) <= 15
    # The names the server's instructions and prompts tell an agent to call are all there.
    assert {
        "get_context",
        "record_episode",
        "add_lesson",
        "reinforce_lesson",
        "weaken_lesson",
        "search",
        "get_record",
        "start_session",
        "observe",
        "end_session",
        "wm_set",
        "wm_task",
        "scratch_add",
    } <= agent


def test_the_sets_together_are_every_tool_in_declaration_order() -> None:
    every = select_tools(",".join(TOOLSETS))
    assert every == door_ops("mcp") == select_tools("all")


def test_the_flag_wins_over_the_environment_which_wins_over_the_default() -> None:
    env = {"MEMWORK_MCP_TOOLS": "curation"}
    assert [tool_name(op) for op in chosen_tools("search", env)] == ["search"]
    assert {op.toolset for op in chosen_tools(None, env)} == {"curation"}
    assert {op.toolset for op in chosen_tools(None, {})} == {"agent"}
    assert {op.toolset for op in chosen_tools(" ", {"MEMWORK_MCP_TOOLS": " "})} == {"agent"}


@pytest.mark.parametrize("choice", ["agents", "agent,,search", "approve_proposal", ""])
def test_an_unknown_or_empty_name_names_the_field_and_the_sets(choice: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        select_tools(choice)
    assert caught.value.field == "tools"
    assert "known sets: agent, workspace, curation, all" in caught.value.rule
