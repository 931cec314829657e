"""How ``memwork wm --session S …`` prints its results."""

from __future__ import annotations

from typing import Any

import orjson

from ...domain.working_memory import state as wm_state
from .main import Context
from .output import clip, emit_json, note, say


def _text(value: Any) -> str:
    """A value as the shell sees it: strings verbatim, anything else as compact JSON."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _ttl(entry: dict[str, Any]) -> str:
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
def key_set(ctx: Context, entry: dict[str, Any]) -> int:
    """``wm set`` and ``wm delete``: the key (a delete with ``--missing-ok`` that found no
    key says so on stderr and prints nothing else)."""
    if entry.get("deleted") is False:
        note(f"no key {entry['key']!r} here: nothing deleted")
        if ctx.json:
            emit_json(entry)
        return 0
    return _print(ctx, entry, entry["key"])


def key_value(ctx: Context, entry: wm_state.KeyView) -> int:
    """``wm get``: the value as the shell sees it."""
    return _print(ctx, entry, _text(entry["value"]))


def keys(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``wm list``: ``key = value`` each, with the time it has left and, for a key the
    session inherits, ``[scope]``."""
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            where = row.get("scope", "session")
            inherited = f"  [{where}]" if where != "session" else ""
            say(f"{row['key']} = {clip(_text(row['value']), 80)}{_ttl(row)}{inherited}")
    return 0


# -- task -----------------------------------------------------------------------------
def task(ctx: Context, state: dict[str, Any] | None) -> int:
    """``wm task``: the task state (read or updated); a note when progress was clamped."""
    a = ctx.args
    if state is None:
        if ctx.json:
            emit_json(None)
        elif getattr(a, "if_exists", False):
            note("no task state in this session: nothing updated (--if-exists)")
        else:
            note("no task state in this session (set one with --id/--step/--total/--progress)")
        return 0
    if a.progress is not None and state["progress_percent"] != a.progress:
        note(f"progress {a.progress:g} clamped to {state['progress_percent']:g}")
    return _print(ctx, state, _task_line(state))


# -- scratchpad -----------------------------------------------------------------------
def scratch_added(ctx: Context, entry: dict[str, Any]) -> int:
    """``wm scratch add``: a note when the oldest were dropped, then the entry's time."""
    if entry["dropped"]:
        note(f"scratchpad full: dropped the {entry['dropped']} oldest entries")
    return _print(ctx, entry, entry["ts"])


def scratch_listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``wm scratch list``."""
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(f"{row['ts'][:19]}Z  {row['text']}")
    return 0


# -- checkpoints ----------------------------------------------------------------------
def checkpoints(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``wm checkpoint list``."""
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(_checkpoint_line(row))
    return 0


# -- clearing, questions and counts (core/domain/working_memory: keys, scratchpad, overview) --
def names(ctx: Context, rows: list[str]) -> int:
    """``wm keys``: a name a line."""
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(row)
    return 0


def exists(ctx: Context, answer: dict[str, Any]) -> int:
    """``wm exists``: true or false (exit 0 either way)."""
    return _print(ctx, answer, "true" if answer["exists"] else "false")


def values(ctx: Context, found: dict[str, Any]) -> int:
    """``wm get-all``: the object as JSON either way (values are JSON)."""
    emit_json(found)
    return 0


def cleared(ctx: Context, result: dict[str, Any]) -> int:
    """``wm clear``: how many keys went (the names on stderr)."""
    keys = result["cleared"]
    _print(ctx, result, f"cleared {len(keys)} key{'' if len(keys) == 1 else 's'}")
    if keys and not ctx.json:
        note(", ".join(keys))
    return 0


def scratch_cleared(ctx: Context, result: dict[str, Any]) -> int:
    """``wm scratch clear``: how many notes went."""
    count = result["cleared"]
    return _print(ctx, result, f"cleared {count} note{'' if count == 1 else 's'}")


def stats(ctx: Context, result: dict[str, Any]) -> int:
    """``wm stats``: ``name value`` a line."""
    if ctx.json:
        emit_json(result)
    else:
        for name, value in result.items():
            shown = str(value).lower() if isinstance(value, bool) else value
            if isinstance(value, dict):
                shown = orjson.dumps(value).decode()
            say(f"{name} {shown}")
    return 0
