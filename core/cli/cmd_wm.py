"""``memwork wm --session S …``: a session's working memory."""

from __future__ import annotations

from typing import Any

import orjson

from .. import working_memory as wm
from .main import Context
from .output import clip, emit_json, note, say


def _text(value: Any) -> str:
    """A value as the shell sees it: strings verbatim, anything else as compact JSON."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _ttl(entry: wm.KeyView) -> str:
    left = entry["ttl_remaining"]
    return "" if left is None else f"  (expires in {left:g}s)"


def _task_line(task: dict[str, Any]) -> str:
    steps = ""
    if task.get("current_step") is not None or task.get("total_steps") is not None:
        step = task.get("current_step")
        total = task.get("total_steps")
        steps = f"  step {'-' if step is None else step}/{'?' if total is None else total}"
    desc = f"  {clip(task['description'], 70)}" if task.get("description") else ""
    return f"{task['task_id']}  {task['status']}  {task['progress_percent']:g}%{steps}{desc}"


def _checkpoint_line(cp: dict[str, Any]) -> str:
    task = " task" if cp["has_task"] else ""
    desc = f"  {clip(cp['description'], 60)}" if cp["description"] else ""
    return (
        f"{cp['id']}  {cp['created_at'][:19]}Z  {cp['keys']} keys, "
        f"{cp['scratch_entries']} scratch{task}{desc}"
    )


def _print(ctx: Context, record: object, text: str) -> int:
    if ctx.json:
        emit_json(record)
    else:
        say(text)
    return 0


# -- keys -----------------------------------------------------------------------------
def set_(ctx: Context) -> int:
    a = ctx.args
    # The value is stored exactly as typed (a string), even when it looks like JSON:
    # `wm get` then prints back what was set, and "007", "true" or "1e3" keep their text.
    entry = wm.set_key(
        ctx.store, a.session, a.key, a.value, ttl=a.ttl, now=ctx.now, actor=ctx.actor
    )
    return _print(ctx, entry, entry["key"])


def get(ctx: Context) -> int:
    entry = wm.get_key(ctx.store, ctx.args.session, ctx.args.key, now=ctx.now)
    return _print(ctx, entry, _text(entry["value"]))


def delete(ctx: Context) -> int:
    entry = wm.delete_key(ctx.store, ctx.args.session, ctx.args.key, now=ctx.now, actor=ctx.actor)
    return _print(ctx, entry, entry["key"])


def list_(ctx: Context) -> int:
    rows = wm.list_keys(ctx.store, ctx.args.session, now=ctx.now)
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(f"{row['key']} = {clip(_text(row['value']), 80)}{_ttl(row)}")
    return 0


# -- task -----------------------------------------------------------------------------
def task(ctx: Context) -> int:
    a = ctx.args
    changes = {
        "task_id": a.task_id,
        "description": a.description,
        "status": a.status,
        "current_step": a.step,
        "total_steps": a.total,
        "progress_percent": a.progress,
    }
    if all(v is None for v in changes.values()):
        current = wm.get_task(ctx.store, a.session)
        if ctx.json:
            emit_json(current)
        elif current is None:
            note("no task state in this session (set one with --id/--step/--total/--progress)")
        else:
            say(_task_line(current))
        return 0
    updated = wm.update_task(ctx.store, a.session, now=ctx.now, actor=ctx.actor, **changes)
    if a.progress is not None and updated["progress_percent"] != a.progress:
        note(f"progress {a.progress:g} clamped to {updated['progress_percent']:g}")
    return _print(ctx, updated, _task_line(updated))


# -- scratchpad -----------------------------------------------------------------------
def scratch_add(ctx: Context) -> int:
    entry = wm.scratch_add(ctx.store, ctx.args.session, ctx.args.text, now=ctx.now, actor=ctx.actor)
    if entry["dropped"]:
        note(f"scratchpad full: dropped the {entry['dropped']} oldest entries")
    return _print(ctx, entry, entry["ts"])


def scratch_list(ctx: Context) -> int:
    rows = wm.scratch_list(ctx.store, ctx.args.session)
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(f"{row['ts'][:19]}Z  {row['text']}")
    return 0


# -- checkpoints ----------------------------------------------------------------------
def cp_create(ctx: Context) -> int:
    cp_id = wm.create_wm_checkpoint(
        ctx.store, ctx.args.session, description=ctx.args.message, now=ctx.now, actor=ctx.actor
    )
    if ctx.json:
        found = [c for c in wm.list_wm_checkpoints(ctx.store, ctx.args.session) if c["id"] == cp_id]
        emit_json(found[0])
    else:
        say(cp_id)
    return 0


def cp_list(ctx: Context) -> int:
    rows = wm.list_wm_checkpoints(ctx.store, ctx.args.session)
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(_checkpoint_line(row))
    return 0


def cp_restore(ctx: Context) -> int:
    cp = wm.restore_wm_checkpoint(
        ctx.store, ctx.args.session, ctx.args.id, now=ctx.now, actor=ctx.actor
    )
    return _print(ctx, cp, cp["id"])


def cp_delete(ctx: Context) -> int:
    cp = wm.delete_wm_checkpoint(
        ctx.store, ctx.args.session, ctx.args.id, now=ctx.now, actor=ctx.actor
    )
    return _print(ctx, cp, cp["id"])
