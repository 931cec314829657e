"""``memwork config …``: store settings."""

from __future__ import annotations

from .. import config
from .main import Context
from .output import emit_json, note, say


def set_(ctx: Context) -> int:
    from .. import review

    a = ctx.args
    submitted = review.set_setting(
        ctx.store, a.key, a.value, now=ctx.now, actor=ctx.actor, curator=ctx.curator
    )
    if submitted.proposal is not None:
        from .cmd_review import proposed

        return proposed(ctx, submitted.proposal)
    done = submitted.result
    if "curator_key" in done:
        made = "made now" if done["curator_key"]["made"] else "already there"
        note(
            f"curator key: {done['curator_key']['file']} ({made}); it decides for this store "
            "while review is on (memwork --curator-key FILE review ...): keep it where "
            "agents cannot read it"
        )
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
