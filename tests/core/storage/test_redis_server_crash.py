"""SIGKILL of the Redis server under writers, then a restart: with AOF,
``appendfsync always`` and ``aof-load-truncated no`` (the settings docs/STORES.md asks
for) no acknowledged write is lost and the store is whole."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memwork.core.domain import aggregates, episodes
from memwork.core.services.doctor.redis import report
from memwork.core.storage.store import Store
from memwork.core.storage.url import parse
from tests.conftest import python_env
from tests.redis_server import RedisServer

CHILD = str(Path(__file__).with_name("writer_child.py"))
ROUNDS = 3
WRITERS = 2


@pytest.fixture
def durable_server(tmp_path: Path):  # noqa: ANN201
    server = RedisServer(tmp_path / "server", fsync="always")
    server.folder.mkdir()
    server.start()
    yield server
    server.stop()


def _writer(url: str, name: str, acknowledged: list[str]) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, CHILD, url, name, "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=python_env(MEMWORK_LOCK_TIMEOUT="60"),
    )

    def collect() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("ep_"):
                acknowledged.append(line.strip())

    threading.Thread(target=collect, daemon=True).start()
    return child


@pytest.mark.slow
def test_a_killed_server_keeps_every_acknowledged_write(durable_server: RedisServer) -> None:
    url = f"{durable_server.url}/0"
    Store(url)
    acknowledged: list[str] = []
    for round_ in range(ROUNDS):
        writers = [_writer(url, f"r{round_}w{n}", acknowledged) for n in range(WRITERS)]
        start = len(acknowledged)
        deadline = time.monotonic() + 60
        while len(acknowledged) < start + 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(acknowledged) >= start + 20, "the writers should be writing"
        durable_server.kill()  # mid-write: some commit is always in flight
        for child in writers:
            child.wait(30)
            assert child.returncode != 0  # it lost its server...
            assert child.stderr is not None and "connection" in child.stderr.read()
        durable_server.start()  # ...which replays its AOF
        docs = _whole(url)
        stored = {d["id"] for d in docs}
        lost = set(acknowledged) - stored
        assert not lost, f"round {round_}: acknowledged episodes lost: {sorted(lost)[:3]}"
        # Beyond them, at most the commit each writer had in flight.
        assert len(stored) - len(set(acknowledged)) <= WRITERS
        acknowledged[:] = sorted(stored)  # what landed is the store from here on


def _whole(url: str) -> list[dict[str, Any]]:
    """The store's episodes, once doctor and the aggregates agree it is whole."""
    verdict = report(parse(url))
    assert verdict["ok"], [c for c in verdict["checks"] if c["status"] == "problem"]
    store = Store(url)
    try:
        with store.reading():
            docs = list(episodes.iter_all(store))
            glob = aggregates.read_global(store)
    finally:
        store.close()
    # Half a commit shows here: an episode without its count, or an index twice.
    assert glob["stored_episodes"] == len(docs)
    assert sorted(d["index"] for d in docs) == list(range(1, len(docs) + 1))
    return docs


def _record(url: str, summary: str) -> str:
    store = Store(url)
    try:
        [doc] = episodes.record_episodes(
            store,
            [{"task_id": "t", "score": 0.3, "summary": summary, "mistakes": ["m " * 900]}],
            now=datetime.now(UTC),
            actor="api:test",
        )
    finally:
        store.close()
    return str(doc["id"])


def _cut_last_commit(aof: Path) -> None:
    """Cut the AOF in the middle of its last commit, as a crash inside ``write()`` can."""
    data = aof.read_bytes()
    start = data.rindex(b"*1\r\n$5\r\nMULTI\r\n")
    with aof.open("r+b") as file:
        file.truncate(start + (len(data) - start) // 2)


@pytest.mark.slow
def test_a_commit_a_crash_cut_short_never_comes_back_in_half(durable_server: RedisServer) -> None:
    # Redis's default (aof-load-truncated yes) would load the cut file, keep the cut
    # commit's first half in it, and replay that half after the next commit and restart.
    url = f"{durable_server.url}/0"
    kept = [_record(url, f"episode {n}") for n in range(2)]
    _record(url, "cut short")
    durable_server.kill()
    _cut_last_commit(durable_server.folder / "appendonly.aof")
    durable_server.start()
    assert durable_server.repairs == 1  # the server refused the cut file until it was fixed
    assert [d["id"] for d in _whole(url)] == kept
    kept.append(_record(url, "after the repair"))
    durable_server.kill()
    durable_server.start()
    assert sorted(d["id"] for d in _whole(url)) == sorted(kept)
