"""Which operations an MCP server lists as tools: ``--tools`` / ``MEMWORK_MCP_TOOLS``.

A tool list is sent into every agent session that connects, so a server lists the
``agent`` set unless told otherwise. A choice is a comma-separated list of set
names (:data:`core.ops.operations.TOOLSETS`, plus ``all`` for every tool) and
single tool names (``get_lesson``), in any mix; the tools come back in
declaration order, each once. The flag wins over the variable. Anything unknown
is refused in one line that names the field ``tools`` and lists the known sets,
before a server starts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..base.errors import InvalidInput
from .operations import TOOLSETS, Op, door_ops

#: The environment variable that picks the tools when ``--tools`` is not given.
TOOLS_ENV = "MEMWORK_MCP_TOOLS"
#: What a server lists when neither the flag nor the variable says.
DEFAULT_TOOLS = "agent"
#: The name that stands for every tool.
ALL = "all"


def tool_name(op: Op) -> str:
    """An operation's MCP tool name (``get_context`` for the ``context`` operation)."""
    return op.mcp or op.name


def known_sets() -> list[str]:
    """The set names ``--tools`` takes, ``all`` last."""
    return [*TOOLSETS, ALL]


def tools_choice(flag: str | None, environ: Mapping[str, str] | None = None) -> str:
    """The choice in force: the flag, else ``MEMWORK_MCP_TOOLS``, else ``agent``."""
    if flag is not None and flag.strip():
        return flag
    env = os.environ if environ is None else environ
    return env.get(TOOLS_ENV, "").strip() or DEFAULT_TOOLS


def select_tools(choice: str) -> list[Op]:
    """The MCP operations ``choice`` names (sets and tool names, comma-separated).

    Raises :class:`InvalidInput` for the field ``tools`` on an empty choice or a name
    that is neither a set nor a tool.
    """
    ops = door_ops("mcp")
    by_name = {tool_name(op): op for op in ops}
    wanted: set[str] = set()
    words = [word.strip() for word in choice.split(",")]
    sets = ", ".join(known_sets())
    for word in words:
        if word == ALL:
            wanted.update(by_name)
        elif word in TOOLSETS:
            wanted.update(tool_name(op) for op in ops if op.toolset == word)
        elif word in by_name:
            wanted.add(word)
        elif not word:
            raise InvalidInput(
                "tools", f"a set or tool name is empty in {choice!r} (known sets: {sets})"
            )
        else:
            raise InvalidInput(
                "tools",
                f"{word!r} is neither a tool set nor a tool (known sets: {sets}; "
                "or a tool's name, e.g. get_lesson)",
            )
    return [op for op in ops if tool_name(op) in wanted]


def chosen_tools(flag: str | None, environ: Mapping[str, str] | None = None) -> list[Op]:
    """The tools a server lists, from ``--tools`` and the environment (see the module)."""
    return select_tools(tools_choice(flag, environ))
