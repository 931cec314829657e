"""How ``memwork slot …`` prints its results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, emit_rows, note, say


def _size(slot: dict[str, Any]) -> str:
    return f"{slot['chars']}/{slot['limit']}"


def _flags(slot: dict[str, Any]) -> list[str]:
    flags = []
    if slot["over_limit"]:
        flags.append("over limit")
    if slot.get("read_only"):
        flags.append("read-only")
    return flags


def _line(slot: dict[str, Any]) -> str:
    """``label  chars/limit  [flags]  description`` for lists."""
    parts = [f"{slot['label']:<24}", f"{_size(slot):>11}"]
    flags = _flags(slot)
    if flags:
        parts.append(f"[{', '.join(flags)}]")
    if slot.get("description"):
        parts.append(clip(slot["description"], 60))
    return "  ".join(parts)


def written(ctx: Context, slot: dict[str, Any]) -> int:
    """After a slot write: the record with ``--json``, else ``label chars/limit``."""
    if ctx.json:
        emit_json(slot)
    else:
        say(f"{slot['label']} {_size(slot)}")
    return 0


def replaced(ctx: Context, slot: dict[str, Any]) -> int:
    """``slot replace``: how many occurrences when more than one, then as :func:`written`."""
    if slot["replaced"] > 1:
        note(f"replaced {slot['replaced']} occurrences in slot {slot['label']}")
    return written(ctx, slot)


def shown(ctx: Context, slot: dict[str, Any]) -> int:
    """``slot show``: the content alone, as stored, so it can be piped; flags on stderr."""
    if ctx.json:
        emit_json(slot)
        return 0
    content = slot["content"]
    if content:
        say(content[:-1] if content.endswith("\n") else content)
    if slot["over_limit"]:
        note(f"slot {slot['label']} is over its limit: {_size(slot)} characters")
    return 0


def deleted(ctx: Context, slot: dict[str, Any]) -> int:
    """``slot delete``."""
    if ctx.json:
        emit_json(slot)
    else:
        say(f"deleted {slot['label']}")
    return 0


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``slot list``: a line each."""
    return emit_rows(ctx.json, rows, _line)
