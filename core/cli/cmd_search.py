"""``memwork search``: recall across every kind of memory."""

from __future__ import annotations

from .main import Context
from .output import clip, emit_json, say


def run(ctx: Context) -> int:
    from .. import search

    a = ctx.args
    hits = search.search(
        ctx.store,
        a.query,
        now=ctx.now,
        kinds=search.parse_kinds(a.kind),
        limit=a.limit,
        since=a.since,
        until=a.until,
        session=a.session,
    )
    if ctx.json:
        emit_json([hit.to_json() for hit in hits])
        return 0
    for hit in hits:
        say(f"{hit.score:6.3f}  {hit.kind:<11}  {hit.id}  {clip(hit.title, 80)}")
    return 0
