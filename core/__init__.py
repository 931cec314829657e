"""memwork core: domain, storage, context export and CLI. Never imports textual.

``from core import Memory`` is the Python API for agents (see :mod:`core.memory`).
"""

from __future__ import annotations

__version__ = "0.1.0"

# Not `typing.TYPE_CHECKING`: every CLI call imports this package, and typing is not free.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from core.memory import Memory

__all__ = ["Memory", "__version__"]


def __getattr__(name: str) -> Any:
    # Imported on first use: every CLI call imports this package, few need the API.
    if name == "Memory":
        from core.memory import Memory

        return Memory
    raise AttributeError(f"module 'core' has no attribute {name!r}")
