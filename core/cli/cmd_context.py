"""``memwork context``: printed on every agent step, so it imports little."""

from __future__ import annotations

import sys

from core.cli.main import Context


def run(ctx: Context) -> int:
    from core.context.build import build_context

    a = ctx.args
    result = build_context(
        ctx.store,
        now=ctx.now,
        task_id=a.task,
        budget_tokens=a.budget,
        style=a.style,
        project=a.project,
    )
    if a.format == "json" or ctx.json:
        from core.cli.output import emit_json

        emit_json(result.to_json())
    elif result.text:
        sys.stdout.write(result.text + "\n")
    return 0
