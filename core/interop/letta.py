"""``--format letta`` (placeholder until the Letta parser lands)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.errors import InvalidInput
from core.interop.bundle import Bundle


def looks_like(data: Any) -> bool:
    """Sniff: a Letta agent file (v1 ``core_memory`` or v2 ``agents``/``blocks``)."""
    return isinstance(data, dict) and (
        "core_memory" in data or ("agents" in data and "blocks" in data)
    )


def parse(data: Any, *, now: datetime, source: str) -> Bundle:
    """Not yet implemented."""
    raise InvalidInput("format", "letta import is not available yet")
