"""How ``memwork history`` prints the audit log."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, say


def entries(ctx: Context, found: list[dict[str, Any]]) -> int:
    """``history``: a line per entry, newest first."""
    if ctx.json:
        emit_json(found)
        return 0
    for e in found:
        imported = " (imported)" if e.get("imported") else ""
        say(
            f"#{e['seq']:<6} {e['ts'][:19]}Z  {clip(e['actor'], 20):<20} {e['action']:<10} "
            f"{e['table']:<14} {e['record_id']}  {clip(e['summary'], 70)}{imported}"
        )
    return 0
