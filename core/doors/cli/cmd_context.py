"""``memwork context``: printed on every agent step, so it imports little."""

from __future__ import annotations

import sys

from ...base.errors import MemworkError
from .main import Context


def _not_logged(exc: MemworkError) -> None:
    # The context is printed all the same: a store the agent cannot write to gets a note.
    print(f"memwork: context not logged: {exc}", file=sys.stderr)


def _dropped(note: str) -> None:
    # Never cut silently: what the budget dropped, in one line (JSON lists it instead).
    print(f"memwork: {note}", file=sys.stderr)


def run(ctx: Context) -> int:
    from ...base.errors import NoStore
    from ...services.context.build import for_agent

    a = ctx.args
    try:
        store = ctx.store
    except NoStore:
        # An agent's first step, before it has written anything: no memory yet is
        # an empty context, and a read must not create a store at the path.
        from ...storage.store import Store

        store = Store.in_memory()
    as_json = a.format == "json" or ctx.json
    result = for_agent(
        store,
        now=ctx.now,
        actor=ctx.actor,
        task=a.task,
        project=a.project,
        budget=a.budget,
        style=a.style,
        format="json" if as_json else "text",
        on_log_error=_not_logged,
        on_dropped=None if as_json else _dropped,
        query=getattr(a, "query", None),
        max_rules=a.max_rules,
        max_recent=a.max_recent,
    )
    if isinstance(result, dict):
        from .output import emit_json

        emit_json(result)
    elif result:
        from ...privacy.controls import terminal_text

        sys.stdout.write(terminal_text(result) + "\n")
    return 0
