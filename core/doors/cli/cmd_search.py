"""How ``memwork search`` and ``memwork get`` print their results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, say


def hits(ctx: Context, found: list[dict[str, Any]]) -> int:
    """``search``: score, kind, id and title of each hit, best first."""
    if ctx.json:
        emit_json(found)
        return 0
    shown_fill = False
    for hit in found:
        if hit.get("filled") and not shown_fill:
            say("        (below: none of the query's words; filled in as related)")
            shown_fill = True
        say(f"{hit['score']:6.3f}  {hit['kind']:<11}  {hit['id']}  {clip(hit['title'], 80)}")
    return 0


def record(ctx: Context, found: dict[str, Any]) -> int:
    """``get``: the record as JSON (it is read whole), with or without ``--json``."""
    emit_json(found)
    return 0
