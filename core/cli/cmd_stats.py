"""``memwork stats`` (how it prints) and ``memwork doctor``."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import emit_json, say


def stats(ctx: Context, found: dict[str, Any]) -> int:
    """``stats``: always JSON."""
    emit_json(found)
    return 0


def doctor(ctx: Context) -> int:
    import os

    from ..doctor import report
    from ..errors import NoStore

    path = ctx.store_path
    if isinstance(path, str):  # a Redis URL
        from ..doctor_redis import report as redis_report
        from ..storage.url import parse

        result = redis_report(parse(path))
    elif not os.path.lexists(path):
        raise NoStore(path)
    else:
        result = report(path)
    if ctx.json:
        emit_json(result)
    else:
        for check in result["checks"]:
            mark = {"ok": "ok     ", "warn": "warning", "problem": "PROBLEM"}[check["status"]]
            say(f"{mark}  {check['name']}: {check['detail']}")
        say("store is healthy" if result["ok"] else "problems found; nothing was changed")
    return 0 if result["ok"] else 1
