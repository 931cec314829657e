"""`memwork serve`'s /viewer: who may open the workbench in a browser, and a real
headless Chromium that opens it, sees the Sessions pane and switches panes by key."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx2
import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from memwork.core.doors.http.guard import viewer_cookie
from tests.browser import Chromium, chromium_path, screen_text
from tests.conftest import python_env
from tests.http_server import Served

TOKEN = "s3cret-operator-token-for-the-viewer"
DEMO = Path(__file__).resolve().parents[3] / "data" / "demo"


def _env(**extra: str) -> dict[str, str]:
    return python_env(MEMWORK_FSYNC="0", **extra)


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo store (sessions, episodes, links to show)."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns(".lock"))
    return target


def _served(db: Path) -> Iterator[Served]:
    server = Served(db, _env(MEMWORK_TOKEN=TOKEN))
    yield server
    code, rest = server.stop()
    assert code == 0, rest


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Served]:
    """A server that wants the token, on a fresh store (agent tokens can be issued)."""
    yield from _served(tmp_path / "db")


@pytest.fixture
def guarded_demo(demo: Path) -> Iterator[Served]:
    """A server that wants the token, on a copy of the demo store."""
    yield from _served(demo)


def agent_token(db: Path, agent: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), "--json", "agent-token", "add", agent],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["token"])


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux: read from /proc)."""
    found = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in found.read_text().split()] if found.exists() else []


def wait_for(ready: Callable[[], bool], seconds: float) -> bool:
    """Whether ``ready()`` holds within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def socket_refused(url: str, **headers: str) -> bool:
    """Whether the viewer's WebSocket at ``url`` is refused before it opens."""
    try:
        with connect(url, additional_headers=headers, open_timeout=30):
            return False
    except InvalidStatus as refused:
        return refused.response.status_code == 403


@pytest.mark.slow
def test_the_viewer_wants_the_operators_token(guarded: Served, tmp_path: Path) -> None:
    page = f"{guarded.url}/viewer"
    assert httpx2.get(page).status_code == 401
    # A link with the token trades it for a cookie and drops it from the address bar.
    traded = httpx2.get(f"{page}?token={TOKEN}")
    assert traded.status_code == 303 and traded.headers["location"] == "/viewer"
    cookie = traded.cookies["memwork_viewer"]
    assert cookie == viewer_cookie(TOKEN) and TOKEN not in traded.headers["set-cookie"]
    assert "HttpOnly" in traded.headers["set-cookie"]
    shown = httpx2.get(page, cookies={"memwork_viewer": cookie})
    assert shown.status_code == 200 and "textual-terminal" in shown.text
    # The page's terminal comes from this server, not from another host.
    assert "https://" not in shown.text and "//fonts" not in shown.text
    script = httpx2.get(f"{page}/static/js/textual.js", cookies={"memwork_viewer": cookie})
    assert script.status_code == 200 and len(script.content) > 100_000
    # The cookie opens the viewer only; the operations still want the token.
    openapi = httpx2.get(f"{guarded.url}/v1/openapi.json", cookies={"memwork_viewer": cookie})
    assert openapi.status_code == 401
    assert httpx2.get(page, params={"token": "wrong"}).status_code == 401
    assert httpx2.get(page, cookies={"memwork_viewer": "forged"}).status_code == 401
    # An agent token acts for an agent, never as the operator's workbench.
    token = agent_token(tmp_path / "db", "coder")
    refused = httpx2.get(page, headers={"Authorization": f"Bearer {token}"})
    assert refused.status_code == 403 and "operator" in refused.json()["error"]
    assert httpx2.post(
        f"{guarded.url}/v1/stats", json={}, headers={"Authorization": f"Bearer {token}"}
    ).is_success


@pytest.mark.slow
def test_the_viewer_socket_is_guarded_like_the_page(guarded: Served, tmp_path: Path) -> None:
    ws = guarded.url.replace("http://", "ws://") + "/viewer/ws"
    host = guarded.url.removeprefix("http://")
    assert socket_refused(ws)
    assert socket_refused(ws, Authorization=f"Bearer {agent_token(tmp_path / 'db', 'coder')}")
    # A page on another site, in a browser that holds the cookie, is turned away.
    cookie = f"memwork_viewer={viewer_cookie(TOKEN)}"
    assert socket_refused(ws, Cookie=cookie, Origin="http://evil.example")
    # The page's own origin with the cookie: a workbench starts for the tab, and stops
    # when the tab goes.
    with connect(ws, additional_headers={"Cookie": cookie, "Origin": f"http://{host}"}) as sock:
        sock.send(json.dumps(["ping", "1"]))
        assert json.loads(sock.recv(timeout=60)) == ["pong", "1"]
        assert len(children(guarded.process.pid)) == 1
    assert wait_for(lambda: not children(guarded.process.pid), 30)


@pytest.mark.slow
def test_stopping_the_server_stops_the_open_workbenches(demo: Path) -> None:
    server = Served(demo, _env(MEMWORK_TOKEN=TOKEN))
    ws = server.url.replace("http://", "ws://") + "/viewer/ws?width=100&height=30"
    with connect(ws, additional_headers={"Authorization": f"Bearer {TOKEN}"}) as sock:
        # The workbench draws its first screen (the demo's sessions) into the socket.
        drawn = b""
        while b"Sessions" not in drawn:
            drawn += sock.recv(timeout=90)
        workbench = children(server.process.pid)
        assert len(workbench) == 1
        code, rest = server.stop()
    assert code == 0, rest
    assert not Path(f"/proc/{workbench[0]}").exists() or wait_for(
        lambda: not Path(f"/proc/{workbench[0]}").exists(), 10
    )


@pytest.mark.slow
def test_without_a_token_only_the_loopback_page_may_open_it(demo: Path) -> None:
    server = Served(demo, _env())
    try:
        ws = server.url.replace("http://", "ws://") + "/viewer/ws"
        assert httpx2.get(f"{server.url}/viewer").status_code == 200
        # Loopback without a token: a page elsewhere must still not drive the store.
        assert socket_refused(ws, Origin="http://evil.example")
    finally:
        code, rest = server.stop()
    assert code == 0, rest


@pytest.mark.slow
@pytest.mark.skipif(chromium_path() is None, reason="Chromium is not installed")
def test_chromium_shows_the_workbench_and_a_key_switches_panes(
    guarded_demo: Served, tmp_path: Path
) -> None:
    executable = chromium_path()
    assert executable is not None
    browser = Chromium(executable)
    try:
        browser.call("Page.navigate", url=f"{guarded_demo.url}/viewer?token={TOKEN}")
        # The Sessions pane, with a session of the demo store in its list.
        assert browser.wait_for_text("Sessions", 90), screen_text(bytes(browser.received))
        assert browser.wait_for_text("Migrate orders", 60), screen_text(bytes(browser.received))
        assert browser.evaluate("location.pathname + location.search") == "/viewer"
        assert browser.evaluate("document.body.classList.contains('-first-byte')")
        shot = Path(os.environ.get("MEMWORK_VIEWER_SHOT", tmp_path / "viewer.png"))
        browser.screenshot(shot)
        assert shot.stat().st_size > 10_000
        # A digit typed on the page reaches the workbench, which shows that pane.
        browser.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        before = len(browser.received)
        browser.type_key("2")
        assert browser.wait_for_text("deploy-api", 60, after=before), screen_text(
            bytes(browser.received[before:])
        )
        assert any(json.loads(sent) == ["stdin", "2"] for sent in browser.sent)
    finally:
        browser.close()
