"""``memwork stats`` and ``memwork doctor``."""

from __future__ import annotations

from .main import Context
from .output import emit_json, say


def stats(ctx: Context) -> int:
    from ..stats import store_stats

    emit_json(store_stats(ctx.store))
    return 0


def doctor(ctx: Context) -> int:
    import os

    from ..doctor import report
    from ..errors import NoStore
    from ..storage.url import REDIS, parse, parse_location

    location = parse_location(ctx.store_path, "--db")
    if location.scheme == REDIS:
        from ..doctor_redis import report as redis_report

        result = redis_report(parse(location.url))
    elif location.folder is None:
        raise NoStore(location.scheme + ":")  # memory: lives only in its own process
    elif not os.path.lexists(location.folder):
        raise NoStore(location.folder)
    else:
        result = report(location.folder)
    if ctx.json:
        emit_json(result)
    else:
        for check in result["checks"]:
            mark = {"ok": "ok     ", "warn": "warning", "problem": "PROBLEM"}[check["status"]]
            say(f"{mark}  {check['name']}: {check['detail']}")
        say("store is healthy" if result["ok"] else "problems found; nothing was changed")
    return 0 if result["ok"] else 1
