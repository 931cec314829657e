"""A long-lived process with no saved index lets a child build a big store's index.

The child writes the index in its saved form into a memory file this process reads
in place, so the build's millions of small objects never live here (see
core/services/recall/build_apart.py). These tests force it on small stores
(``MEMWORK_SEARCH_BUILD_APART=1``) and compare with a build in the process.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path
from typing import Any, TypeVar

import pytest

from memwork import Memory
from memwork.core.services.recall import build_apart
from memwork.core.services.recall import extract as recall_records
from memwork.core.services.recall.follow import Recall
from memwork.core.services.recall.search import kept_recall, saver_of
from tests.conftest import NOW
from tests.redis_server import RedisServer

At = TypeVar("At", Path, str)
QUESTIONS = ("heron weir dawn", "otter sluice", "kingfisher number 7", "plovers shingle")


def _fill(memory: Memory) -> None:
    sid = memory.start_session(title="weir")["id"]
    for n in range(30):
        memory.observe(sid, f"heron number {n} fishing below the weir at dawn")
        memory.observe(sid, f"kingfisher number {n} on the sluice gate")
    memory.observe(sid, "an otter slipped under the sluice")
    memory.add_lesson("Plovers nest on shingle above the tide line")


def _filled(where: At) -> At:
    """A store at ``where`` holding what :func:`_fill` writes, closed again."""
    filler = Memory(where, clock=lambda: NOW)
    _fill(filler)
    filler.close()
    return where


def _cache_off_build_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMWORK_SEARCH_CACHE", "0")  # no index file: the child's or none
    monkeypatch.setenv(build_apart.ENV, "1")


def _answers(memory: Memory) -> list[list[tuple[str, float]]]:
    return [[(h["id"], h["score"]) for h in memory.search(q, limit=10)] for q in QUESTIONS]


def _memory_files() -> set[str]:
    """The memory files (each a child's built index) this process maps, by inode."""
    gc.collect()  # an index let go of in a cycle: its mapping goes with it
    maps = Path("/proc/self/maps")
    lines = maps.read_text().splitlines() if maps.exists() else []
    return {line.split()[4] for line in lines if "memwork-recall-index" in line}


def _threads_that_built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the threads that ran a catch-up of a recall index, in order."""
    seen: list[str] = []
    refresh = Recall.refresh

    def noted(self: Recall, store: Any) -> Any:
        seen.append(threading.current_thread().name)
        return refresh(self, store)

    monkeypatch.setattr(Recall, "refresh", noted)
    return seen


pytestmark = pytest.mark.skipif(
    not hasattr(os, "memfd_create"), reason="no anonymous memory files on this system"
)


def test_a_child_builds_the_index_and_this_process_reads_it_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _filled(tmp_path / "s")
    monkeypatch.setenv("MEMWORK_SEARCH_CACHE", "0")  # no index file: the child's or none

    monkeypatch.setenv(build_apart.ENV, "0")
    here = Memory(db, clock=lambda: NOW)
    expected = _answers(here)
    here.close()

    monkeypatch.setenv(build_apart.ENV, "1")
    threads = _threads_that_built(monkeypatch)
    mapped = _memory_files()
    memory = Memory(db, clock=lambda: NOW)
    assert _answers(memory) == expected
    assert "memwork-recall-build" not in threads  # no build in this process
    lock, recall = kept_recall(memory.store)
    with lock:
        assert recall.index is not None and recall.index.titles.base is not None  # in place
    assert _memory_files() - mapped
    # Writes go on beside the child's bytes, and the cache stays off.
    sid = memory.start_session(title="later")["id"]
    memory.observe(sid, "a grebe diving off the jetty")
    assert memory.search("grebe jetty")[0]["title"].endswith("a grebe diving off the jetty")
    memory.close()
    assert not (db / "cache" / "recall" / "index.bin").exists()


def test_what_is_committed_while_the_child_builds_is_caught_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _filled(tmp_path / "s")
    _cache_off_build_apart(monkeypatch)
    built = build_apart.build

    def then_a_commit(store: Any) -> Any:
        index = built(store)
        other = Memory(db, clock=lambda: NOW)  # another writer, after the child's read
        other.add_lesson("Avocets sweep the mud with their bills")
        other.close()
        return index

    monkeypatch.setattr(build_apart, "build", then_a_commit)
    mapped = _memory_files()
    reader = Memory(db, clock=lambda: NOW)
    hits = reader.search("avocets mud")
    assert hits[0]["title"].endswith("Avocets sweep the mud with their bills")
    assert _memory_files() - mapped
    reader.close()


def test_with_the_cache_on_the_childs_index_gives_way_to_the_file_saved_from_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _filled(tmp_path / "s")
    index_file = db / "cache" / "recall" / "index.bin"
    assert not index_file.exists()  # nothing searched yet: no index file
    monkeypatch.setenv(build_apart.ENV, "1")
    mapped = _memory_files()
    child: set[str] = set()
    built = build_apart.build

    def noted(store: Any) -> Any:
        index = built(store)
        child.update(_memory_files() - mapped)  # before the saver can replace it
        return index

    monkeypatch.setattr(build_apart, "build", noted)
    memory = Memory(db, clock=lambda: NOW)
    before = _answers(memory)
    assert child  # the child's index was read in place
    saver = saver_of(memory.store)
    assert saver is not None
    deadline = time.monotonic() + 20
    while saver.adopted < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert saver.adopted == 1 and index_file.exists()
    assert not child & _memory_files()  # the memory file was let go for the saved one
    assert _answers(memory) == before
    memory.close()


def test_a_child_that_fails_leaves_the_build_to_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _filled(tmp_path / "s")
    _cache_off_build_apart(monkeypatch)
    # The child is told of a store that is not there: it ends with an error.
    monkeypatch.setattr(build_apart, "_spec", lambda store: {"folder": str(tmp_path / "gone")})
    threads = _threads_that_built(monkeypatch)
    mapped = _memory_files()
    reader = Memory(db, clock=lambda: NOW)
    assert reader.search("otter sluice")[0]["title"].endswith("an otter slipped under the sluice")
    assert threads[0] == "memwork-recall-build"  # built here, in its thread, as before
    assert not _memory_files() - mapped
    reader.close()


def test_only_a_big_store_is_built_apart_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    _fill(memory)
    monkeypatch.delenv(build_apart.ENV, raising=False)
    assert not build_apart.worth_it(memory.store)  # a few kilobytes
    monkeypatch.setattr(build_apart, "MIN_BYTES", 1000)
    assert build_apart.worth_it(memory.store)
    monkeypatch.setenv(build_apart.ENV, "0")
    assert not build_apart.worth_it(memory.store)
    assert not build_apart.worth_it(Memory("memory:").store)  # a child cannot open it
    memory.close()


def test_a_store_of_chinese_text_is_built_apart_from_a_quarter_of_the_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chinese gives about four times the terms per byte that English does: a child
    builds its index from a quarter of the size an English store needs."""
    monkeypatch.delenv(build_apart.ENV, raising=False)
    sizes = {}
    for name, note in [
        ("zh", "我昨天去了北京看我的奶奶，还买了一些点心 {}"),
        ("en", "Met the Berlin team about the budget for {}"),
    ]:
        memory = Memory(tmp_path / name, clock=lambda: NOW)
        session = memory.start_session(agent="b")["id"]
        for n in range(40):
            memory.observe(session, note.format(n))
        memory.close()
        memory = Memory(tmp_path / name, clock=lambda: NOW)
        with memory.store.reading():
            names = [t for t in memory.store.cache.head.tables if recall_records.indexed(t)]
            sizes[name] = memory.store.backend.size_hint(names)
        memory.close()
    monkeypatch.setattr(build_apart, "MIN_BYTES", 2 * max(sizes.values()))
    for name, expected in [("zh", True), ("en", False)]:
        memory = Memory(tmp_path / name, clock=lambda: NOW)
        assert build_apart.worth_it(memory.store) is expected, name
        memory.close()


def test_a_redis_stores_child_gets_the_password_on_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", fsync="no", password="s3cret-heron")
    server.start()
    try:
        url = server.url + "/0"
        _filled(url)
        monkeypatch.setenv(build_apart.ENV, "0")
        here = Memory(url, clock=lambda: NOW)
        expected = _answers(here)
        here.close()
        # By size, as a folder store: Redis says what its tables take (asked of a
        # process that has read nothing yet, as a first search finds it).
        monkeypatch.delenv(build_apart.ENV)
        fresh = Memory(url, clock=lambda: NOW)
        assert not build_apart.worth_it(fresh.store)
        with monkeypatch.context() as small:
            small.setattr(build_apart, "MIN_BYTES", 1000)
            assert build_apart.worth_it(fresh.store)
        fresh.close()

        monkeypatch.setenv(build_apart.ENV, "1")
        commands: list[list[str]] = []
        run = build_apart.subprocess.run

        def noted(args: list[str], **kw: Any) -> Any:
            commands.append(args)
            return run(args, **kw)

        monkeypatch.setattr(build_apart.subprocess, "run", noted)
        mapped = _memory_files()
        memory = Memory(url, clock=lambda: NOW)
        assert _answers(memory) == expected
        assert _memory_files() - mapped
        assert commands and not any("s3cret" in part for part in commands[0])
        memory.close()
    finally:
        server.stop()
