"""A Starlette router that finds a route by its exact path before walking the list.

Starlette matches a request against its routes one by one, a regular expression
each, until one matches. The HTTP door has a route per operation (~80) plus the
viewer's and ``/mcp``; ``/mcp`` comes last, and every call of an operation near the
end of the list paid ~85 matches (~40 µs) before its endpoint ran. A route whose path
holds no parameter, and that no route before it could match, is found here by its
path in one dict lookup; anything else (a path with parameters, a method the route
does not take, a trailing slash, a WebSocket) goes through Starlette's own walk, so
every answer is the one the list gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.routing import BaseRoute, Match, Route, Router, WebSocketRoute
from starlette.types import Receive, Scope, Send


def first_by_path(routes: Sequence[BaseRoute]) -> dict[str, Route]:
    """Each HTTP route with a plain path (no parameters) that no route before it can
    match, by its path: the route the list's walk would reach first for that path."""
    found: dict[str, Route] = {}
    before: list[BaseRoute] = []
    for route in routes:
        if isinstance(route, Route) and not route.param_convertors:
            path = route.path
            if path not in found and not any(_may_match(r, path) for r in before):
                found[path] = route
        before.append(route)
    return found


def _may_match(route: BaseRoute, path: str) -> bool:
    """Whether ``route`` (met earlier in the list) could answer an HTTP request for
    ``path``: a route of another kind, or without a path pattern, is taken to."""
    if isinstance(route, WebSocketRoute):
        return False  # never an HTTP request
    pattern = getattr(route, "path_regex", None)
    return pattern is None or pattern.match(path) is not None


class ExactRouter(Router):
    """:class:`starlette.routing.Router`, with a route found by its exact path first
    (see the module docstring); the routes as given, in the same order."""

    def __init__(self, routes: Sequence[BaseRoute], **kwargs: Any) -> None:
        super().__init__(list(routes), **kwargs)
        self._by_path = first_by_path(self.routes)

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve ``scope`` by the route its exact path names when that route takes its
        method; else as Starlette's router does."""
        # (Under a root path the walk below works out the route's path.)
        if scope["type"] == "http" and not scope.get("root_path"):
            route = self._by_path.get(scope["path"])
            if route is not None:
                match, child_scope = route.matches(scope)
                if match is Match.FULL:
                    if "router" not in scope:
                        scope["router"] = self
                    scope["route"] = route
                    scope.update(child_scope)
                    await route.handle(scope, receive, send)
                    return
        await super().app(scope, receive, send)
