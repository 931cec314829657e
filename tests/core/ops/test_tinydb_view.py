"""``Memory.tinydb()``: the live store as a read-only TinyDB, queried with TinyDB's Query."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tinydb import Query, where

from memwork import Memory
from memwork.core.base.errors import Conflict, ReadOnlyView
from memwork.core.storage import shards
from tests.conftest import folder_digest, python_env

SCORES = [0.1, 0.9, 0.4, 0.6, 0.2, 0.95, 0.45]


@pytest.fixture(params=["folder", "memory", "redis"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    """A Memory on a folder store, the in-memory backend and a real Redis server."""
    if request.param == "folder":
        location: str | Path = tmp_path / "db"
    elif request.param == "memory":
        location = "memory:"
    else:
        location = request.getfixturevalue("redis_url")
    opened = Memory(location)
    yield opened
    opened.close()


@pytest.fixture(autouse=True)
def _small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three episodes a shard, so a handful of episodes spans several stored tables."""
    monkeypatch.setitem(shards.SIZES, "episodes", 3)


def _episodes(memory: Memory, scores: list[float], task: str = "deploy-api") -> list[str]:
    return memory.record_episodes(
        [{"task_id": task, "score": s, "summary": f"attempt scored {s}"} for s in scores]
    )


def _contents(memory: Memory) -> dict[str, Any]:
    """Every stored table's documents, and the commit counter: what a write would change."""
    store = memory.store
    with store.reading():
        tables = {n: copy.deepcopy(store.docs(n)) for n in store.table_names()}
    return {"generation": store.committed_generation(), "tables": tables}


def test_a_query_finds_what_memory_returns_across_every_shard(memory: Memory) -> None:
    ids = _episodes(memory, SCORES)
    assert len(memory.store.table_names("episodes")) == 3  # 7 episodes, 3 a shard
    lesson = memory.add_lesson("Canary every deploy", scope="project:api")["id"]
    memory.add_lesson("Pin the image digest")
    db = memory.tinydb()

    assert {"episodes", "lessons"} <= db.tables()
    assert not any(name.startswith("episodes.") for name in db.tables())
    episodes = db.table("episodes")
    assert len(episodes) == len(SCORES)
    low = episodes.search(Query().score < 0.5)
    expected = [i for i, s in zip(ids, SCORES, strict=True) if s < 0.5]
    assert sorted(d.doc_id for d in low) == sorted(expected)
    for doc in low:
        assert dict(doc) == memory.get_record(doc.doc_id)["record"]
        assert doc["id"] == doc.doc_id
    assert episodes.count(where("task_id") == "deploy-api") == len(SCORES)
    got = episodes.get(doc_id=ids[-1])
    assert got is not None and dict(got) == memory.get_record(ids[-1])["record"]

    found = db.table("lessons").search(Query().content.search("(?i)canary"))
    assert [d.doc_id for d in found] == [lesson]
    # get_record adds what it computes (effective confidence, state...) to the stored fields.
    shown = memory.get_record(lesson)["record"]
    assert dict(found[0]) == {k: shown[k] for k in found[0]}
    with memory.store.reading():
        assert dict(found[0]) == memory.store.get("lessons", lesson)
    listed = {les["id"] for les in memory.list_lessons()}
    assert {d.doc_id for d in db.table("lessons").all()} == listed

    # One stored table by its own name holds that shard alone.
    first = memory.store.table_names("episodes")[0]
    assert {d.doc_id for d in db.table(first).all()} == set(ids[:3])
    assert db.table("no_such_table").all() == []


def test_per_session_tables_merge_and_keys_they_share_name_their_table(memory: Memory) -> None:
    db = memory.tinydb()
    sessions: list[str] = []
    for agent in ("a1", "a2"):
        sid = memory.start_session(agent=agent)["id"]
        sessions.append(sid)
        memory.observe(sid, f"ran the tests in {sid}", kind="tool")
        memory.wm_set(sid, "branch", "main")
        # Named by its table from the first session on, not only once two collide.
        assert f"working_memory.{sid}/state" in {d.doc_id for d in db.table("working_memory")}
    observed = db.table("observations").all()
    assert sorted(d["session_id"] for d in observed) == sorted(sessions)
    assert all(d.doc_id == d["id"] for d in observed)
    # Working memory keeps one "state" document per session: its ids name the table.
    states = {d.doc_id: d for d in db.table("working_memory").all()}
    assert set(states) == {f"working_memory.{sid}/state" for sid in sessions}
    assert all(d["kv"]["branch"]["value"] == "main" for d in states.values())


def test_rules_of_every_scope_are_one_table(memory: Memory) -> None:
    memory.add_rule("Always canary")
    memory.add_rule("Pin the digest", scope="task:deploy-api")
    rules = memory.tinydb().table("rules")
    assert len(memory.store.table_names("rules")) == 2
    assert sorted(r["text"] for r in rules.search(Query().active == True)) == [  # noqa: E712
        "Always canary",
        "Pin the digest",
    ]


def test_each_query_reads_the_store_as_it_is_then(memory: Memory) -> None:
    _episodes(memory, [0.2, 0.8])
    db = memory.tinydb()
    low = db.table("episodes")
    assert len(low.search(Query().score < 0.5)) == 1
    later = _episodes(memory, [0.3, 0.1, 0.05])  # a new shard among them
    assert len(low.search(Query().score < 0.5)) == 4
    assert low.get(doc_id=later[-1]) is not None
    memory.add_lesson("Canary every deploy")
    assert "lessons" in db.tables()
    assert len(db.table("lessons")) == 1


def test_another_processs_commit_is_seen_by_the_next_query(memory: Memory) -> None:
    if memory.store.scheme == "memory":
        pytest.skip("a memory: store is this process's alone")
    db = memory.tinydb()
    assert db.table("episodes").all() == []
    other = Memory(memory.path)
    try:
        (eid,) = _episodes(other, [0.25])
    finally:
        other.close()
    assert [d.doc_id for d in db.table("episodes").search(Query().score < 0.5)] == [eid]


def test_every_write_is_refused_and_the_store_is_unchanged(memory: Memory) -> None:
    ids = _episodes(memory, SCORES)
    memory.add_lesson("Canary every deploy")
    db = memory.tinydb()
    before = _contents(memory)
    files = folder_digest(memory.path) if memory.store.scheme == "file" else None
    episodes = db.table("episodes")
    writes = {
        "insert": lambda: episodes.insert({"id": "ep_x", "score": 0.1}),
        "insert_multiple": lambda: episodes.insert_multiple([{"score": 0.1}]),
        "update": lambda: episodes.update({"score": 1.0}, Query().score < 0.5),
        "update by id": lambda: episodes.update({"score": 1.0}, doc_ids=[ids[0]]),
        "update_multiple": lambda: episodes.update_multiple([({"score": 1.0}, Query().score < 1)]),
        "upsert": lambda: episodes.upsert({"id": ids[0], "score": 1.0}, Query().id == ids[0]),
        "remove": lambda: episodes.remove(Query().score < 0.5),
        "remove by id": lambda: episodes.remove(doc_ids=[ids[0]]),
        "truncate": episodes.truncate,
        "default table insert": lambda: db.insert({"score": 0.1}),
        "drop_table": lambda: db.drop_table("episodes"),
        "drop_tables": db.drop_tables,
        "storage write": lambda: db.storage.write({}),
        "lessons truncate": db.table("lessons").truncate,
    }
    for what, write in writes.items():
        with pytest.raises(ReadOnlyView) as refused:
            write()
        message = str(refused.value)
        assert message.startswith("memwork: "), what
        assert "read-only" in message and "Memory's methods" in message, what
        assert "memwork CLI" in message, what
        assert isinstance(refused.value, Conflict)  # a user error: exit code 2 at a door
    # A document handed out is a copy: changing it changes nothing.
    doc = episodes.get(doc_id=ids[0])
    assert doc is not None
    doc["score"] = 1.0
    assert isinstance(doc["mistakes"], list)
    doc["mistakes"].append("edited")  # nested: a shallow copy would share this list
    assert _contents(memory) == before
    assert episodes.get(doc_id=ids[0]) == memory.get_record(ids[0])["record"]
    assert len(episodes) == len(SCORES)
    if files is not None:
        assert folder_digest(memory.path) == files


@pytest.mark.folder_only
def test_what_only_the_folder_log_holds_is_seen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMWORK_LOG_RECORDS", "1000")  # no fold by count
    monkeypatch.setenv("MEMWORK_LOG_SECONDS", "100000")  # nor by age
    folder = tmp_path / "db"
    memory = Memory(folder)
    try:
        memory.store.fold_log()
        (eid,) = _episodes(memory, [0.2])
        shard = memory.store.table_names("episodes")[0]
        table_file = memory.store.table_path(shard)
        log = folder / "store.log"
        assert log.stat().st_size > 0
        assert eid.encode() in log.read_bytes()
        assert not table_file.exists() or eid.encode() not in table_file.read_bytes()
        found = memory.tinydb().table("episodes").search(Query().score < 0.5)
        assert [d.doc_id for d in found] == [eid]
    finally:
        memory.close()
    # A fresh process's view replays the log over the table files too.
    reopened = Memory(folder)
    try:
        assert eid.encode() in log.read_bytes()  # still unfolded
        found = reopened.tinydb().table("episodes").search(Query().score < 0.5)
        assert [d.doc_id for d in found] == [eid]
    finally:
        reopened.close()


def test_the_view_is_refused_while_agents_are_isolated(tmp_path: Path) -> None:
    from memwork.core.ledger import config

    memory = Memory(tmp_path / "db", agent="coder")
    try:
        db = memory.tinydb()
        config.set_value(memory.store, "isolation", "agent", now=memory.now(), actor="tui")
        with pytest.raises(Conflict, match="tinydb: isolation is agent"):
            db.table("episodes").all()
        with pytest.raises(Conflict, match="tinydb: isolation is agent"):
            memory.tinydb()
    finally:
        memory.close()


def test_tinydb_is_imported_only_when_the_view_is_asked_for(tmp_path: Path) -> None:
    probe = (
        "import sys; from memwork import Memory; "
        f"m = Memory({str(tmp_path / 's')!r}); m.context('t'); "
        "m.record_episode({'task_id': 't', 'score': 0.5}); "
        "print('tinydb' in sys.modules); m.tinydb(); print('tinydb' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]
