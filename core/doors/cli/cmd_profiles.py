"""How ``memwork profile …`` prints a project's profile."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, emit_rows, note, say


def _size(profile: dict[str, Any]) -> str:
    return f"{profile['chars']}/{profile['limit']}"


def written(ctx: Context, profile: dict[str, Any]) -> int:
    """After ``profile set``: the record with ``--json``, else ``project chars/limit``."""
    if ctx.json:
        emit_json(profile)
    else:
        say(f"{profile['project']} {_size(profile)}")
    return 0


def shown(ctx: Context, profile: dict[str, Any]) -> int:
    """``profile show``: the text alone (it can be piped); its size on stderr."""
    if ctx.json:
        emit_json(profile)
        return 0
    say(profile["content"])
    note(f"profile {profile['project']}: {_size(profile)} characters")
    return 0


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``profile list``: a line each."""
    return emit_rows(ctx.json, rows, _line)


def _line(row: dict[str, Any]) -> str:
    return f"{clip(row['project'], 30):<30}  {_size(row):>11}  {clip(row['content'], 60)}"
