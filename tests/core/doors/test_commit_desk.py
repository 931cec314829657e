"""The desk of `memwork serve`: agents' writes from other processes, committed by the
server together (core/ops/hand_over.py, core/doors/commit_desk.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memwork import Memory
from memwork.core.base.errors import NotFound
from memwork.core.doors.cli.main import main
from memwork.core.ops import hand_over
from memwork.core.storage.store import Store
from tests.conftest import curator_args, python_env
from tests.http_server import Served

DESK = "committed here"

pytestmark = pytest.mark.skipif(not hand_over.supported(), reason="the desk is Linux's")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, Served]]:
    """A store, and `memwork serve` on it with its desk open (this process's settings)."""
    db = tmp_path / "db"
    server = Served(db, python_env())
    server.wait_for(DESK)
    yield db, server
    code, rest = server.stop()
    assert code == 0, rest


def _notes(db: Path) -> list[dict]:
    """Every observation in the store, read by a process of its own."""
    done = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), "--json", "export"],
        capture_output=True,
        text=True,
        env=python_env(),
        check=True,
    )
    tables = json.loads(done.stdout)["tables"]
    return [doc for name, docs in tables.items() if name == "observations" for doc in docs]


def _handed(memory: Memory) -> int:
    way = memory._hand_over
    return way.handed if way else 0


@pytest.fixture
def never_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call of this process goes to the desk, even while it writes alone."""
    monkeypatch.setattr(hand_over, "RETRY_AFTER", 0.0)


@pytest.mark.slow
@pytest.mark.usefixtures("never_alone")
def test_a_served_stores_agents_writes_are_committed_by_the_server(
    served: tuple[Path, Served],
) -> None:
    db, _ = served
    with Memory(db, agent="coder") as memory:
        sid = memory.start_session(agent="coder", title="deploy")["id"]
        note = memory.observe(sid, "rolled out billing-api to the canary")
        memory.wm_set(sid, "plan", "watch the canary for ten minutes")
        assert _handed(memory) == 3
        # What the server wrote is this process's to read at once, as its own writes are.
        assert note["content"] == "rolled out billing-api to the canary" and note["seq"] == 1
        assert memory.wm_get(sid, "plan")["value"] == "watch the canary for ten minutes"
        assert memory.search("billing-api rolled out")[0]["id"] == f"{sid}/{note['id']}"
        history = memory.history(limit=10)
    # Written as this Memory: its agent, its door.
    assert {entry["actor"] for entry in history} == {"api:coder"}
    assert [n["content"] for n in _notes(db)] == ["rolled out billing-api to the canary"]


@pytest.mark.slow
def test_a_call_the_desk_refuses_runs_here_and_fails_as_it_always_does(
    served: tuple[Path, Served],
) -> None:
    db, _ = served
    with Memory(db, agent="coder") as memory:
        with pytest.raises(NotFound) as failed:
            memory.end_session("ses_nobody_started")
        assert _handed(memory) == 0
    with Memory(db, agent="coder") as alone:  # no desk in the picture: the same error
        alone._hand_over = False
        with pytest.raises(NotFound) as local:
            alone.end_session("ses_nobody_started")
    assert str(failed.value) == str(local.value)
    assert _notes(db) == []


@pytest.mark.slow
@pytest.mark.usefixtures("never_alone")
def test_other_settings_and_a_curator_write_for_themselves(tmp_path: Path) -> None:
    db = tmp_path / "db"
    assert main(["--db", str(db), "curator", "init"]) == 0
    # A server whose settings differ from this process's (a log folded at 500 records).
    server = Served(db, python_env(MEMWORK_LOG_RECORDS="500"))
    try:
        server.wait_for(DESK)
        with Memory(db, agent="coder") as memory:
            memory.observe("ses_a", "written by this process itself")
            assert _handed(memory) == 0
    finally:
        assert server.stop()[0] == 0
    server = Served(db, python_env())
    try:
        server.wait_for(DESK)
        with Memory(db, curator_key=curator_args()[1]) as person:
            person.observe("ses_a", "a person's note, never handed over")
            assert _handed(person) == 0
        with Memory(db, agent="coder") as memory:
            memory.observe("ses_a", "an agent's note, handed over")
            assert _handed(memory) == 1
    finally:
        assert server.stop()[0] == 0
    assert [n["seq"] for n in _notes(db)] == [1, 2, 3]


@pytest.mark.slow
@pytest.mark.usefixtures("never_alone")
def test_a_killed_server_leaves_its_writers_writing_for_themselves(tmp_path: Path) -> None:
    db = tmp_path / "db"
    server = Served(db, python_env())
    server.wait_for(DESK)
    with Memory(db, agent="coder") as memory:
        memory.observe("ses_a", "handed over")
        assert _handed(memory) == 1
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait()
        memory.observe("ses_a", "written here once the server was gone")
        assert _handed(memory) == 1
    assert [n["content"] for n in _notes(db)] == [
        "handed over",
        "written here once the server was gone",
    ]


WRITER = textwrap.dedent(
    """
    import json, sys
    from memwork import Memory
    from memwork.core.ops import hand_over
    hand_over.RETRY_AFTER = 0.0  # to the desk every time, even in a moment alone
    db, me, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Memory(db, agent=f"writer-{me}") as memory:
        for n in range(count):
            memory.observe("ses_shared", f"writer {me} step {n}")
        way = memory._hand_over
        print(json.dumps(way.handed if way else 0))
    """
)


@pytest.mark.slow
def test_writers_in_many_processes_share_the_servers_commits(
    served: tuple[Path, Served],
) -> None:
    db, _ = served
    count = 25
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(me), str(count)],
            stdout=subprocess.PIPE,
            text=True,
            # The last writes for itself beside the server (other settings): both kinds
            # of writer on one store at once.
            env=python_env(**({"MEMWORK_LOG_RECORDS": "500"} if me == 4 else {})),
        )
        for me in range(5)
    ]
    handed = [json.loads(w.communicate(timeout=120)[0]) for w in writers]
    assert all(w.returncode == 0 for w in writers)
    assert handed == [count] * 4 + [0]
    notes = _notes(db)
    assert sorted(n["seq"] for n in notes) == list(range(1, 5 * count + 1))
    for me in range(5):  # each writer's notes in the order it wrote them
        mine = [n for n in sorted(notes, key=lambda n: n["seq"]) if f"writer {me} " in n["content"]]
        assert [n["content"] for n in mine] == [f"writer {me} step {n}" for n in range(count)]


@pytest.mark.slow
def test_a_writer_alone_writes_for_itself_until_it_finds_the_lock_taken(
    served: tuple[Path, Served],
) -> None:
    db, _ = served
    with Memory(db, agent="coder") as memory:
        for n in range(4):
            memory.observe("ses_a", f"alone, step {n}")
        # The desk took the first and said nobody else writes: the rest were written
        # here, without the round trip.
        assert _handed(memory) == 1
        other, held, done = Store(db), threading.Event(), threading.Event()

        def hold() -> None:  # another writer's long hold of the store's lock
            with other.transaction():
                held.set()
                done.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait(10)
        threading.Timer(0.2, done.set).start()
        memory.observe("ses_a", "written here once the lock was free")
        holder.join()
        other.close()
        assert _handed(memory) == 1
        memory.observe("ses_a", "others write too: to the desk again")
        assert _handed(memory) == 2
    assert [n["seq"] for n in _notes(db)] == [1, 2, 3, 4, 5, 6]


def test_a_threads_deferred_flush_holds_only_its_own_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_FSYNC", "1")
    store = Store(tmp_path / "db")
    table = store.table("notes")
    deferred = []

    def insert(doc: dict) -> None:
        with store.transaction():
            table.insert(doc)

    def later() -> None:
        store.defer_flushes()
        insert({"id": "a", "text": "deferred"})
        deferred.append(store.deferred_flush())

    # Another thread's commit while this one defers is made durable as always: it is
    # not among the deferred ones.
    store.defer_flushes()
    other = threading.Thread(target=insert, args=({"id": "b", "text": "its own"},))
    other.start()
    other.join()
    assert store.deferred_flush().files == {}
    thread = threading.Thread(target=later)
    thread.start()
    thread.join()
    (held,) = deferred
    assert len(held.files) == 1  # the log, by a descriptor of its own
    (fd,) = held.files.values()
    held.flush()
    assert held.files == {}
    with pytest.raises(OSError):
        os.fstat(fd)  # let go once flushed
    store.close()
    reopened = Store(tmp_path / "db")
    with reopened.reading():
        assert sorted(d["id"] for d in reopened.table("notes").all()) == ["a", "b"]
    reopened.close()


def test_the_desk_answers_a_call_only_once_its_commit_is_flushed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import time
    from datetime import UTC, datetime

    from memwork.core.doors import commit_desk

    flushed: list[float] = []
    real = commit_desk.flush_together

    def slow_flush(batches: list) -> None:
        time.sleep(0.2)  # a slow disk
        real(batches)
        flushed.append(time.monotonic())

    monkeypatch.setattr(commit_desk, "flush_together", slow_flush)
    memory = Memory(tmp_path / "db", actor="mcp")
    desk = commit_desk.CommitDesk(memory)
    assert desk.open()
    try:
        caller = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        caller.connect(hand_over.address(tmp_path / "db"))
        request = {
            "v": hand_over.VERSION,
            "fp": hand_over.fingerprint(),
            "op": "observe",
            "params": {"session": "ses_a", "text": "flushed before it is answered"},
            "now": datetime(2026, 11, 1, tzinfo=UTC).isoformat(),
            "actor": "api:coder",
        }
        hand_over.send_frame(caller, request)
        answer = hand_over.read_frame(caller)
        answered = time.monotonic()
        assert answer["ok"]["content"] == "flushed before it is answered"
        assert flushed and flushed[0] <= answered
        # Not this memwork's caller (another version's protocol): refused, nothing written.
        hand_over.send_frame(caller, {**request, "v": hand_over.VERSION + 1})
        assert hand_over.read_frame(caller) == {
            "refused": "another memwork, or other settings",
            "mismatch": True,
        }
        caller.close()
    finally:
        desk.close()
    assert desk.calls == 1
    assert [n["content"] for n in memory.export()["tables"]["observations"]] == [
        "flushed before it is answered"
    ]
    memory.close()


def test_an_episode_with_an_external_consolidator_is_recorded_by_its_own_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The consolidator runs after the episode's commit, where the episode was recorded:
    # never inside the server's batch, holding up every other caller.
    assert "record_episode" in hand_over.HandOver(tmp_path).names
    monkeypatch.setenv("MEMWORK_CONSOLIDATE_CMD", "true")
    names = hand_over.HandOver(tmp_path).names
    assert "record_episode" not in names and "record_failure" not in names
    assert "observe" in names


@pytest.mark.slow
@pytest.mark.usefixtures("never_alone")
def test_an_mcp_servers_agent_writes_go_to_the_desk_too(served: tuple[Path, Served]) -> None:
    import asyncio

    from memwork.core.doors.mcp.server import build_server

    db, _ = served
    memory = Memory(db, agent="coder", actor="mcp")
    server = build_server(memory)

    async def calls() -> list[Any]:
        noted = await server.call_tool("observe", {"session": "ses_a", "text": "via mcp"})
        found = await server.call_tool("search", {"query": "via mcp"})
        refused = await server.call_tool("end_session", {"session": "ses_nobody_started"})
        return [noted, found, refused]

    noted, found, refused = asyncio.run(calls())
    assert noted.structured_content["content"] == "via mcp"
    assert found.structured_content["result"][0]["title"].endswith("via mcp")
    # The refused write ran here and failed as a tool error, as it always does.
    assert refused.is_error and "not found" in refused.content[0].text
    assert _handed(memory) == 1
    memory.close()
    assert [(n["content"], n["seq"]) for n in _notes(db)] == [("via mcp", 1)]


STEADY_WRITER = textwrap.dedent(
    """
    import json, sys
    from memwork import Memory
    db, me, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Memory(db, agent=f"writer-{me}") as memory:
        memory.observe(f"ses_{me}", f"writer {me} ready")
        print("ready", flush=True)
        for n in range(count):
            memory.observe(f"ses_{me}", f"writer {me} step {n}")
        way = memory._hand_over
        print(json.dumps(way.handed if way else 0), flush=True)
    """
)


@pytest.mark.slow
def test_a_server_stopped_under_its_writers_leaves_none_unsure(tmp_path: Path) -> None:
    db = tmp_path / "db"
    server = Served(db, python_env())
    server.wait_for(DESK)
    count = 450  # each writer's notes in a session of its own, under its 500
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", STEADY_WRITER, str(db), str(me), str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=python_env(),
        )
        for me in range(3)
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    time.sleep(0.1)  # all three handing their calls to the desk, without a pause
    code, rest = server.stop()  # SIGTERM, as a service manager stops it
    assert code == 0, rest
    outs = [w.communicate(timeout=120) for w in writers]
    # No writer heard of an unknown outcome: each call was answered, or refused and
    # then written by its caller.
    assert [w.returncode for w in writers] == [0, 0, 0], [err for _, err in outs]
    assert sum(json.loads(out) for out, _ in outs) > 0  # the desk took some of them
    notes = _notes(db)
    for me in range(3):
        mine = sorted(n["seq"] for n in notes if n["session_id"] == f"ses_{me}")
        assert mine == list(range(1, count + 2))
