"""The HTTP door's router finds a plain path in one lookup and answers every request as
Starlette's walk through the same routes would: the first route that can match wins
(a mount or a path with parameters before it included), a method a route does not take
is 405, an unknown path 404, a trailing slash redirects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route, Router, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket

from memwork.core.doors.http.exact_router import ExactRouter, first_by_path


def _says(text: str):  # noqa: ANN202 - an endpoint
    async def endpoint(request: Request) -> Response:
        return PlainTextResponse(f"{text} {request.url.path}")

    return endpoint


async def _socket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("socket")
    await websocket.close()


def _routes() -> list[BaseRoute]:
    return [
        Route("/livez", _says("livez"), methods=["GET"]),
        Route("/v1/search", _says("search"), methods=["POST"]),
        Route("/v1/search", _says("search again"), methods=["GET"]),  # same path, later
        Route("/items/{name}", _says("item")),
        Route("/items/special", _says("shadowed by the one above")),
        Mount("/static", app=PlainTextResponse("mounted")),
        Route("/static/file", _says("shadowed by the mount")),
        WebSocketRoute("/ws", _socket),
        Route("/ws", _says("plain ws")),
        Route("/mcp", _says("mcp")),
    ]


def _app(router_class: type[Router]) -> Starlette:
    app = Starlette()
    app.router = router_class(_routes())
    return app


@pytest.fixture
def clients() -> Iterator[tuple[TestClient, TestClient]]:
    with TestClient(_app(ExactRouter)) as exact, TestClient(_app(Router)) as walked:
        yield exact, walked


REQUESTS = [
    ("GET", "/livez"),
    ("POST", "/livez"),  # 405
    ("POST", "/v1/search"),
    ("GET", "/v1/search"),  # the second route of that path
    ("PUT", "/v1/search"),  # 405
    ("GET", "/items/special"),  # the route with a parameter comes first
    ("GET", "/items/other"),
    ("GET", "/static/file"),  # the mount comes first
    ("GET", "/ws"),  # the WebSocket route never takes an HTTP request
    ("POST", "/mcp"),
    ("GET", "/mcp/"),  # a trailing slash: redirected
    ("GET", "/nowhere"),  # 404
]


@pytest.mark.parametrize(("method", "path"), REQUESTS)
def test_each_request_is_answered_as_the_walk_answers_it(
    clients: tuple[TestClient, TestClient], method: str, path: str
) -> None:
    exact, walked = clients
    got = exact.request(method, path, follow_redirects=False)
    expected = walked.request(method, path, follow_redirects=False)
    assert (got.status_code, got.text, got.headers.get("location")) == (
        expected.status_code,
        expected.text,
        expected.headers.get("location"),
    )


def test_only_paths_no_earlier_route_can_match_are_looked_up() -> None:
    found = first_by_path(_routes())
    assert set(found) == {"/livez", "/v1/search", "/ws", "/mcp"}
    assert found["/v1/search"].methods == {"POST"}  # the first of the two


def test_the_socket_still_opens_beside_a_plain_route_of_its_path(
    clients: tuple[TestClient, TestClient],
) -> None:
    exact, _ = clients
    with exact.websocket_connect("/ws") as socket:
        assert socket.receive_text() == "socket"


def test_the_door_serves_its_operations_through_it(tmp_path) -> None:  # noqa: ANN001
    """The HTTP door's own app: an operation, the spec, a wrong method and no route."""
    from memwork import Memory
    from memwork.core.doors.http.app import HttpDoor

    door = HttpDoor(Memory(tmp_path / "store"), token=None)
    assert isinstance(door.starlette.router, ExactRouter)
    with TestClient(door.starlette) as client:
        saved = client.post("/v1/add_lesson", json={"text": "Pin the base image tag"})
        assert saved.status_code == 200, saved.text
        hits = client.post("/v1/search", json={"query": "base image"}).json()
        assert [hit["kind"] for hit in hits] == ["lesson"]
        assert client.get("/v1/openapi.json").status_code == 200
        wrong = client.get("/v1/search")
        assert wrong.status_code == 405 and wrong.json()["kind"] == "method_not_allowed"
        assert client.post("/v1/nothing", json={}).json()["kind"] == "not_found"
