"""How ``memwork lint`` prints what a curator should look at (exit 0 whatever it finds)."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import emit_json, note, say


def findings(ctx: Context, found: list[dict[str, Any]]) -> int:
    """``lint``: a line per finding, the count on stderr."""
    if ctx.json:
        emit_json(found)
        return 0
    for finding in found:
        say(f"{finding['kind']}: {finding['message']}")
    note(f"{len(found)} finding{'' if len(found) == 1 else 's'}")
    return 0
