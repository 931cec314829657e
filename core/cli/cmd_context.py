"""``memwork context``: printed on every agent step, so it imports little."""

from __future__ import annotations

import sys

from .main import Context


def run(ctx: Context) -> int:
    from ..context.build import build_context
    from ..errors import NoStore

    a = ctx.args
    try:
        store = ctx.store
    except NoStore:
        # An agent's first step, before it has written anything: no memory yet is
        # an empty context, and a read must not create a store at the path.
        from ..storage.store import Store

        store = Store.in_memory()
    result = build_context(
        store,
        now=ctx.now,
        task_id=a.task,
        budget_tokens=a.budget,
        style=a.style,
        project=a.project,
        query=a.query,
    )
    if a.format == "json" or ctx.json:
        from .output import emit_json

        emit_json(result.to_json())
    elif result.text:
        sys.stdout.write(result.text + "\n")
    if result.log_wanted:
        _log(ctx, store, result)
    return 0


def _log(ctx: Context, store: object, result: object) -> None:
    """Record the injected lessons and slots (store setting ``context_log``); the context
    is already printed, so a store that cannot take the write only gets a note."""
    from ..context.log import record_injections
    from ..errors import MemworkError

    try:
        record_injections(store, result, now=ctx.now, actor=ctx.actor)  # type: ignore[arg-type]
    except MemworkError as exc:
        print(f"memwork: context not logged: {exc}", file=sys.stderr)
