"""memwork: a memory workbench for AI agents.

``from memwork import Memory`` is the Python API for agents (see
:mod:`memwork.core.ops.memory`). The installed package holds ``memwork.core`` (domain,
storage, context export, CLI; never imports textual), ``memwork.tui`` (the
workbench) and ``memwork/demo`` (the demo store). In the source tree these are the
top-level ``core/``, ``tui/`` and ``data/demo/`` folders; the build maps them here.
"""

from __future__ import annotations

from memwork.core import __version__

# Not `typing.TYPE_CHECKING`: every CLI call imports this package, and typing is not free.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memwork.core.ops.memory import Memory

__all__ = ["Memory", "__version__"]


def __getattr__(name: str) -> Any:
    # Imported on first use: every CLI call imports this package, few need the API.
    if name == "Memory":
        from memwork.core.ops.memory import Memory

        return Memory
    raise AttributeError(f"module 'memwork' has no attribute {name!r}")
