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

    from ...base.errors import NoStore
    from ...services.doctor.findings import Check, verdict
    from ...services.doctor.folder import report
    from ...storage.paths import ENV_DB, agent_setting, store_origin
    from ...storage.url import REDIS, parse, parse_location

    path = ctx.store_path
    origin = store_origin(ctx.args.db)
    location = parse_location(path, "--db")
    if location.scheme == REDIS:
        from ...services.doctor.redis import report as redis_report

        result = redis_report(parse(location.url))
    elif location.folder is None:
        raise NoStore(location.scheme + ":")  # memory: lives only in its own process
    elif not os.path.lexists(location.folder):
        if origin != "default":
            raise NoStore(location.folder)  # a path someone named and got wrong, most likely
        # The first run on a machine: nothing is wrong, so say where memory will live and
        # how to point an agent at it (exit 0: there is nothing to repair).
        nothing_yet = f"no store at {location.folder} yet; the first write creates it there"
        result = verdict([Check("store", "ok", nothing_yet)], str(location.folder))
        result["exists"] = False
    else:
        result = report(location.folder)
    result["origin"] = origin
    result["agent_env"] = agent_setting(path)
    if ctx.json:
        emit_json(result)
    else:
        for check in result["checks"]:
            mark = {"ok": "ok     ", "warn": "warning", "problem": "PROBLEM"}[check["status"]]
            say(f"{mark}  {check['name']}: {check['detail']}")
        where = {"--db": "named by --db", ENV_DB: f"named by {ENV_DB}"}.get(origin, "the default")
        say(f"this store is {where}; point an agent at it with {result['agent_env']}")
        if result.get("exists") is False:
            say("nothing to check yet")
        else:
            warned = sum(check["status"] == "warn" for check in result["checks"])
            if not result["ok"]:
                say("problems found; nothing was changed")
            elif warned:
                # "healthy" under a warning would read as if the warning did not count.
                say(f"store is usable; {warned} warning{'s' if warned > 1 else ''} above")
            else:
                say("store is healthy")
    return 0 if result["ok"] else 1
