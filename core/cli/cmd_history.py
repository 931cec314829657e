"""``memwork history``: the audit log, newest first."""

from __future__ import annotations

from .main import Context
from .output import clip, emit_json, say


def run(ctx: Context) -> int:
    from .. import history
    from ..errors import InvalidInput

    a = ctx.args
    if a.limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {a.limit})")
    entries = history.query(ctx.store, table=a.table, record=a.record, actor=a.actor, limit=a.limit)
    if ctx.json:
        emit_json(entries)
        return 0
    for e in entries:
        imported = " (imported)" if e.get("imported") else ""
        say(
            f"#{e['seq']:<6} {e['ts'][:19]}Z  {clip(e['actor'], 20):<20} {e['action']:<10} "
            f"{e['table']:<14} {e['record_id']}  {clip(e['summary'], 70)}{imported}"
        )
    return 0
