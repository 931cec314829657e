"""``memwork copy SRC DST``: a whole store into a new one, on any backend."""

from __future__ import annotations

from .main import Context
from .output import emit_json, say


def run(ctx: Context) -> int:
    from ...storage.copy import copy_store
    from ...storage.paths import resolve_location

    source = resolve_location(ctx.args.source, "SRC")
    target = resolve_location(ctx.args.target, "DST")
    result = copy_store(source, target)
    if ctx.json:
        emit_json(result)
    else:
        say(
            f"copied {result['source']} to {result['target']}: {result['tables']} tables, "
            f"{result['documents']} records, {result['checkpoints']} checkpoints"
        )
    return 0
