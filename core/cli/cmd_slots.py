"""``memwork slot …``"""

from __future__ import annotations

from typing import Any

from .. import slots
from .main import Context
from .output import clip, emit_json, note, say


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


def _written(ctx: Context, slot: dict[str, Any], **extra: Any) -> int:
    """After set/append/replace: the record with --json, else ``label chars/limit``."""
    if ctx.json:
        emit_json({**slot, **extra})
    else:
        say(f"{slot['label']} {_size(slot)}")
    return 0


def _submit(ctx: Context, op: str, **args: Any) -> Any:
    """Write, or propose while review is on; None when it became a proposal (printed)."""
    from .. import review

    submitted = review.submit_slot(
        ctx.store, op, ctx.args.label, now=ctx.now, actor=ctx.actor, curator=ctx.curator, **args
    )
    if submitted.proposal is not None:
        from .cmd_review import proposed

        proposed(ctx, submitted.proposal)
        return None
    return submitted.result


def set_(ctx: Context) -> int:
    a = ctx.args
    slot = _submit(ctx, "set", content=a.text, limit=a.limit, description=a.description)
    return 0 if slot is None else _written(ctx, slot)


def append(ctx: Context) -> int:
    slot = _submit(ctx, "append", text=ctx.args.text)
    return 0 if slot is None else _written(ctx, slot)


def replace(ctx: Context) -> int:
    a = ctx.args
    done = _submit(ctx, "replace", old=a.old, new=a.new)
    if done is None:
        return 0
    slot, count = done
    if count > 1:
        note(f"replaced {count} occurrences in slot {slot['label']}")
    return _written(ctx, slot, replaced=count)


def show(ctx: Context) -> int:
    slot = slots.get_slot(ctx.store, ctx.args.label)
    if ctx.json:
        emit_json(slot)
        return 0
    # The content alone, as stored, so it can be piped; flags go to stderr.
    content = slot["content"]
    if content:
        say(content[:-1] if content.endswith("\n") else content)
    if slot["over_limit"]:
        note(f"slot {slot['label']} is over its limit: {_size(slot)} characters")
    return 0


def delete(ctx: Context) -> int:
    slot = slots.delete_slot(ctx.store, ctx.args.label, now=ctx.now, actor=ctx.actor)
    if ctx.json:
        emit_json(slot)
    else:
        say(f"deleted {slot['label']}")
    return 0


def list_(ctx: Context) -> int:
    rows = slots.list_slots(ctx.store)
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(_line(row))
    return 0
