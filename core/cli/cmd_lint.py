"""``memwork lint``: what a curator should look at (exit 0 whatever it finds)."""

from __future__ import annotations

from .. import lint
from .main import Context
from .output import emit_json, note, say


def run(ctx: Context) -> int:
    found = lint.lint(ctx.store, ctx.now)
    if ctx.json:
        emit_json(found)
        return 0
    for finding in found:
        say(f"{finding['kind']}: {finding['message']}")
    note(f"{len(found)} finding{'' if len(found) == 1 else 's'}")
    return 0
