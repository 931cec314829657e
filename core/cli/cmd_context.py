"""``memwork context``: printed on every agent step, so it imports little."""

from __future__ import annotations

import sys

from core.cli.main import Context


def run(ctx: Context) -> int:
    from core.context.build import build_context
    from core.errors import NoStore

    a = ctx.args
    try:
        store = ctx.store
    except NoStore:
        # An agent's first step, before it has written anything: no memory yet is
        # an empty context, and a read must not create a store at the path.
        from core.storage.store import Store

        store = Store.in_memory()
    result = build_context(
        store,
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
