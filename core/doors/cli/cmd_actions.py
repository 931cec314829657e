"""How ``memwork action …`` prints work items."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, emit_rows, say


def _line(action: dict[str, Any]) -> str:
    waiting = f"  waits for {', '.join(action['waiting_for'])}" if action["waiting_for"] else ""
    project = f"  [{action['project']}]" if action.get("project") else ""
    return (
        f"{action['id']}  {action['status']:<9}  p{action['priority']:<3}  "
        f"{clip(action['title'], 70)}{project}{waiting}"
    )


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``action list`` and ``action frontier``: a line each."""
    return emit_rows(ctx.json, rows, _line)


def shown(ctx: Context, action: dict[str, Any]) -> int:
    """``action show``: the action, its dependencies and notes."""
    if ctx.json:
        emit_json(action)
        return 0
    say(_line(action))
    if action["after"]:
        say(f"  after: {', '.join(action['after'])}")
    for item in action.get("notes", []):
        say(f"  {item['ts'][:19]}Z  {clip(item['text'], 100)}")
    return 0
