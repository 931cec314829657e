"""``memwork config …``: store settings."""

from __future__ import annotations

from .. import config
from .main import Context
from .output import emit_json, say


def set_(ctx: Context) -> int:
    a = ctx.args
    done = config.set_value(ctx.store, a.key, a.value, now=ctx.now, actor=ctx.actor)
    if ctx.json:
        emit_json(done)
    elif done["previous"] == done["value"]:
        say(f"{done['key']} is already {done['value']}")
    else:
        say(f"{done['key']}: {done['previous']} -> {done['value']}")
    return 0


def get(ctx: Context) -> int:
    key = config.check_key(ctx.args.key)
    found = config.get(ctx.store, key)
    if ctx.json:
        emit_json({"key": key, "value": found})
    else:
        say(found)
    return 0


def list_(ctx: Context) -> int:
    rows = config.all_settings(ctx.store)
    if ctx.json:
        emit_json(rows)
        return 0
    for row in rows:
        origin = "" if row["set"] else " (default)"
        say(f"{row['key']:<12} {row['value']}{origin:<10}  {row['help']}")
    return 0
