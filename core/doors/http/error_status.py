"""The HTTP status and JSON body of a memwork error, for every route and for a search
worker process, which sends them back to the server to answer with (kept apart from
the routes so that a worker does not import the web framework to word an error)."""

from __future__ import annotations

from typing import Any

from ...base.errors import (
    Conflict,
    InvalidInput,
    MemworkError,
    NotFound,
    StoreUnreachable,
    UserError,
    worded,
)


def error_body(exc: MemworkError) -> tuple[int, dict[str, Any]]:
    """The status and JSON body of a memwork error (a search worker sends them back)."""
    if isinstance(exc, InvalidInput):
        status, kind = 400, "invalid"
    elif isinstance(exc, StoreUnreachable):  # the CLI's exit 2, but the server is away
        status, kind = 503, "unavailable"
    elif isinstance(exc, NotFound):
        status, kind = 404, "not_found"
    elif isinstance(exc, Conflict | UserError):
        status, kind = 409, "conflict"
    else:
        status, kind = 503, "unavailable"
    body: dict[str, Any] = {"error": worded(exc), "kind": kind}
    if isinstance(exc, InvalidInput):
        body["field"] = exc.field
    return status, body
