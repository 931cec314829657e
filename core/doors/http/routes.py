"""``/v1/<operation>``: every operation as a JSON route, and the OpenAPI document of them.

A route takes ``POST`` with a JSON object of the operation's parameters (an
empty body is ``{}``) and answers with the JSON the CLI prints for it with
``--json`` (the context's text is a JSON string). Bad input is the CLI's
one-line message with a 4xx status: 400 invalid input, 404 not found, 409 a
failed precondition (a duplicate, a read-only slot, a read-only store); 415
when the body is not JSON (a browser cannot send ``application/json`` to
another site without asking first, so a web page cannot post to a store served
on loopback), 413 when it is over the cap. Writes are audited as ``http``, or
``http:<agent>`` with an ``X-Memwork-Agent`` header or an agent's own token (the guard
turns the token into the header, :mod:`core.doors.http.guard`).
"""

from __future__ import annotations

from typing import Any

import orjson
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ... import __version__
from ...base.errors import InvalidInput, MemworkError
from ...ops import runner as invoke
from ...ops.json_schemas import input_schema
from ...ops.memory import Memory
from ...ops.operations import Op, door_ops
from ...ops.shapes import SHAPES
from ...ops.wm_fallback import used_fallback
from ..header_text import header_text
from ..quick_calls import QuickCalls, answered
from .error_status import error_body
from .search_pool import SearchPool

AGENT_HEADER = "x-memwork-agent"
JSON = "application/json"


#: Set (``true``) on a working-memory answer given from the server's memory while its
#: Redis store does not answer.
FALLBACK_HEADER = "Memwork-Using-Fallback"


def json_response(value: Any, status: int = 200) -> Response:
    """``value`` as JSON (orjson: the context of a big store is long)."""
    return Response(orjson.dumps(value), status_code=status, media_type=JSON)


#: An error kind per HTTP status the router answers by itself.
_ROUTER_KINDS = {404: "not_found", 405: "method_not_allowed"}


async def http_error(request: Request, exc: Exception) -> Response:
    """What the router answers by itself (no such route, a method the route does not
    take), in the JSON error shape of every route, its headers (``Allow``) kept."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    headers = dict(exc.headers or {}) if isinstance(exc, HTTPException) else {}
    path = request.url.path
    if status == 405:
        allowed = headers.get("Allow") or headers.get("allow") or "another method"
        message = f"memwork: {request.method} is not allowed on {path} (use {allowed})"
    elif status == 404:
        message = f"memwork: no route {path} (the operations are under /v1/, POST)"
    else:
        message = f"memwork: {getattr(exc, 'detail', '') or 'the request failed'}"
    body = {"error": message, "kind": _ROUTER_KINDS.get(status, "http")}
    return Response(orjson.dumps(body), status_code=status, media_type=JSON, headers=headers)


def error_response(exc: MemworkError) -> Response:
    """A memwork error as JSON with its status (the CLI's exit-2 errors are all 4xx)."""
    status, body = error_body(exc)
    return json_response(body, status)


def actor_of(request: Request) -> str:
    """``http``, or ``http:<agent>`` when the caller names itself."""
    agent = header_text(request.headers.get(AGENT_HEADER, "").strip(), "X-Memwork-Agent")
    if not agent:
        return "http"
    from ...privacy import identifier_problem

    problem = identifier_problem(agent)
    if problem:
        raise InvalidInput("X-Memwork-Agent", problem)
    return f"http:{agent}"


async def read_json(request: Request, cap: int) -> dict[str, Any]:
    """The body as a JSON object (an empty body is ``{}``), read up to ``cap`` bytes.

    ``Content-Type: application/json`` is required even for an empty body: it is what
    a cross-site form or a no-cors fetch cannot send.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != JSON:
        raise _NotJson
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise _TooLarge
    if not body.strip():
        return {}
    try:
        given = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidInput("body", f"must be JSON ({exc})") from None
    if not isinstance(given, dict):
        raise InvalidInput("body", "must be a JSON object of the operation's parameters")
    return given


class _TooLarge(Exception):
    pass


class _NotJson(Exception):
    pass


class _Answered(Exception):
    """A search worker's error answer: its status and body."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(status)
        self.status, self.body = status, body


def operation_route(op: Op, memory: Memory, cap: int, pool: SearchPool | None = None) -> Route:
    """``POST /v1/<op>``; with ``pool``, a search runs in one of its worker processes."""
    pooled = pool if op.name == "search" else None
    # A read on a store on this machine may be answered on the event loop (see
    # quick_calls); a search pool's worker is a wait, and a Redis store's every read.
    local = memory.wm_fallback is None
    quick = QuickCalls() if pooled is None and not op.writes and local else None

    async def endpoint(request: Request) -> Response:
        try:
            given = await read_json(request, cap)
            actor = actor_of(request)
            params = invoke.check(op, "http", given)

            def run() -> Any:
                if pooled is not None:
                    kind, value = pooled.search(params, now=memory.now(), actor=actor)
                    if kind == "ok":
                        return value
                    if kind == "error":
                        raise _Answered(*value)
                return invoke.call(
                    op,
                    memory.call_target(),
                    params,
                    now=memory.now(),
                    actor=actor,
                    fallback=memory.wm_fallback,
                )

            value = await answered(None if invoke.writes(op, params) else quick, run)
            response = json_response(value)
            if used_fallback(value):  # a list's body cannot carry the field: the header does
                response.headers[FALLBACK_HEADER] = "true"
            return response
        except _TooLarge:
            return json_response(
                {"error": f"memwork: the request body is over {cap} bytes", "kind": "too_large"},
                413,
            )
        except _NotJson:
            return json_response(
                {
                    "error": "memwork: the body must be JSON (Content-Type: application/json)",
                    "kind": "unsupported_media_type",
                },
                415,
            )
        except MemworkError as exc:
            return error_response(exc)
        except _Answered as worker:
            return json_response(worker.body, worker.status)

    return Route(f"/v1/{op.name}", endpoint, methods=["POST"], name=op.name)


def routes(memory: Memory, cap: int, pool: SearchPool | None = None) -> list[Route]:
    """A route per operation the HTTP door offers, and ``/v1/openapi.json``; ``pool``:
    the worker processes that run searches (None: searches run in this process)."""
    document = openapi()

    async def spec(request: Request) -> Response:
        return JSONResponse(document)

    return [
        *(operation_route(op, memory, cap, pool) for op in door_ops("http")),
        Route("/v1/openapi.json", spec, methods=["GET"], name="openapi"),
    ]


# -- OpenAPI --------------------------------------------------------------------------------
_ERROR = {
    "type": "object",
    "description": "An error: the CLI's one-line message.",
    "properties": {
        "error": {"type": "string", "description": "memwork: <field>: <rule>, or what failed"},
        "kind": {
            "type": "string",
            "description": "invalid, not_found, conflict, unauthorized, forbidden, too_large, "
            "unsupported_media_type, unavailable, method_not_allowed, timeout",
        },
        "field": {"type": "string", "description": "the parameter that was wrong (invalid)"},
    },
    "required": ["error", "kind"],
}
_ERRORS = {
    "invalid": ("400", "Invalid input: the message names the field and the rule."),
    "not_found": ("404", "The record the call names does not exist."),
    "conflict": ("409", "A failed precondition (a duplicate, a read-only slot, ...)."),
}


def _error_response(text: str) -> dict[str, Any]:
    return {
        "description": text,
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def openapi() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the HTTP door, made from the declarations."""
    paths: dict[str, Any] = {}
    for op in door_ops("http"):
        responses: dict[str, Any] = {
            "200": {
                "description": (SHAPES[op.result].get("description") or "The result."),
                "content": {JSON: {"schema": SHAPES[op.result]}},
            }
        }
        for kind in op.errors:
            code, text = _ERRORS[kind]
            responses[code] = _error_response(text)
        responses.setdefault("400", _error_response(_ERRORS["invalid"][1]))
        responses["401"] = _error_response("No or a wrong bearer token (or a revoked agent token).")
        responses["403"] = _error_response("An agent token with a header naming another agent.")
        responses["413"] = _error_response("The request body is over the cap.")
        paths[f"/v1/{op.name}"] = {
            "post": {
                "operationId": op.name,
                "summary": op.summary,
                "description": " ".join(t for t in (op.doc, op.when) if t),
                "tags": [op.cli.split()[0] if " " in op.cli else "memory"],
                "requestBody": {
                    "required": False,
                    "content": {JSON: {"schema": input_schema(op, "http")}},
                },
                "responses": responses,
            }
        }
    paths["/v1/events"] = {
        "get": {
            "operationId": "events",
            "summary": "commits as server-sent events",
            "description": (
                "A `ready` event on connect, then a `commit` event for every commit by any "
                "writer (CLI, workbench, other servers): its generation and the audit entries "
                "it added."
            ),
            "responses": {"200": {"description": "text/event-stream"}},
        }
    }
    paths["/livez"] = {
        "get": {
            "operationId": "livez",
            "summary": "whether the server is up (no token needed)",
            "security": [],
            "responses": {"200": {"description": '{"status": "ok"}'}},
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "memwork",
            "version": __version__,
            "description": (
                "Every memwork operation as a JSON route: POST a JSON object of its "
                "parameters, get back what `memwork … --json` prints. MCP over streamable "
                "HTTP is at /mcp."
            ),
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR},
        },
        "security": [{"bearer": []}],
        "paths": paths,
    }
