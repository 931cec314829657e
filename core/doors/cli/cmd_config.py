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
    # Columns as wide as their widest cell: a long value (a path, a model name) must not
    # push its own help text out of line with the others'.
    cells = [
        (str(row["key"]), f"{row['value']}{'' if row['set'] else ' (default)'}", row["help"])
        for row in settings
    ]
    key_width = max((len(key) for key, _, _ in cells), default=0)
    value_width = max((len(shown) for _, shown, _ in cells), default=0)
    for key, shown, help_text in cells:
        say(f"{key:<{key_width}}  {shown:<{value_width}}  {help_text}")
    return 0
