"""``--format agentmemory`` (placeholder until the Letta parser lands)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.errors import InvalidInput
from core.interop.bundle import Bundle


def looks_like(data: Any) -> bool:
    """Sniff: a agentmemory server export."""
    return isinstance(data, dict) and "exportedAt" in data


def parse(data: Any, *, now: datetime) -> Bundle:
    """Not yet implemented."""
    raise InvalidInput("format", "agentmemory import is not available yet")
