"""How ``memwork links`` and ``memwork unlink`` print."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, say


def listed(ctx: Context, found: dict[str, Any]) -> int:
    """``links ID``: the record, then a line per link out and in."""
    if ctx.json:
        emit_json(found)
        return 0
    say(f"{found['kind']} {found['id']}: {clip(found['title'], 80)}")
    for link in found["outgoing"]:
        end = link["target"]
        gone = "" if end["exists"] else "  (gone)"
        say(f"  -> {link['kind']:<13} {end['kind']} {end['id']}: {clip(end['title'], 60)}{gone}")
    for link in found["incoming"]:
        end = link["source"]
        gone = "" if end["exists"] else "  (gone)"
        say(f"  <- {link['kind']:<13} {end['kind']} {end['id']}: {clip(end['title'], 60)}{gone}")
    return 0


def removed(ctx: Context, gone: list[dict[str, Any]]) -> int:
    """``unlink``: the removed links' ids."""
    if ctx.json:
        emit_json(gone)
    else:
        for link in gone:
            say(link["id"])
    return 0
