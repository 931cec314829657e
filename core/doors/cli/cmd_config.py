"""How ``memwork config …`` prints its results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import emit_json, note, say


def changed(ctx: Context, done: dict[str, Any]) -> int:
    """``config set``: the change (or that there was none); where the curator key is,
    when turning review on registered one."""
    if "curator_key" in done:
        note(
            f"curator key: {done['curator_key']['file']}; it decides for this store while "
            "review is on (memwork --curator-key FILE review ...): keep it where agents "
            "cannot read it"
        )
    if ctx.json:
        emit_json(done)
    elif done["previous"] == done["value"]:
        say(f"{done['key']} is already {done['value']}")
    else:
        say(f"{done['key']}: {done['previous']} -> {done['value']}")
    return 0


def value(ctx: Context, found: dict[str, Any]) -> int:
    """``config get``: the value alone."""
    if ctx.json:
        emit_json(found)
    else:
        say(found["value"])
    return 0


def rows(ctx: Context, settings: list[dict[str, Any]]) -> int:
    """``config list``: each setting, its value and what it does."""
    if ctx.json:
        emit_json(settings)
        return 0
    for row in settings:
        origin = "" if row["set"] else " (default)"
        say(f"{row['key']:<12} {row['value']}{origin:<10}  {row['help']}")
    return 0
