"""A server readies its saved recall index as it starts, so its first search costs what
later ones do; with no saved index it builds nothing, and a stop waits for nothing long."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.recall import engine, warm
from memwork.core.services.recall import search as recall_search
from memwork.core.services.recall.follow import IndexFile
from memwork.core.services.recall.search import kept_recall, saver_of
from tests.conftest import NOW, python_env

NOTES = (
    "a heron stood on the weir at dawn",
    "the otter holt is under the alder roots",
    "kingfisher seen twice by the mill race",
)


def _store_with_saved_index(db: Path) -> list[dict[str, object]]:
    """A store of a few notes whose recall index file is saved; the hits for "heron"."""
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="river walk")["id"]
    for note in NOTES:
        memory.observe(sid, note)
    hits = memory.search("heron")
    memory.close()  # saves the index
    assert (db / "cache" / "recall" / IndexFile.NAME).exists()
    return hits


@pytest.fixture
def readied(tmp_path: Path) -> Iterator[Memory]:
    """A Memory on a store whose index is saved, readied as a server readies it."""
    _store_with_saved_index(tmp_path / "s")
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    assert warm.warm(memory.store) is True
    yield memory
    memory.close()


def test_a_readied_index_answers_the_first_search_without_opening_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s"
    expected = _store_with_saved_index(db)
    memory = Memory(db, clock=lambda: NOW)
    try:
        assert warm.warm(memory.store) is True
        assert kept_recall(memory.store)[1].index is not None

        def opened_again(*args: object) -> None:
            raise AssertionError("the first search read the index file itself")

        monkeypatch.setattr(recall_search, "first_catch_up", opened_again)
        assert memory.search("heron") == expected
    finally:
        memory.close()


def test_a_note_written_after_the_head_start_is_found_by_the_first_search(
    readied: Memory, tmp_path: Path
) -> None:
    other = Memory(tmp_path / "s", clock=lambda: NOW)  # another process's write, in effect
    sid = other.start_session(title="later")["id"]
    other.observe(sid, "a dipper bobbing on the stones")
    other.close()
    hits = readied.search("dipper")
    assert hits[0]["title"] == "note · later: a dipper bobbing on the stones"


def test_with_no_saved_index_nothing_is_built(tmp_path: Path) -> None:
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="river walk")["id"]
    memory.observe(sid, NOTES[0])
    try:
        assert warm.warm(memory.store) is False
        assert kept_recall(memory.store)[1].index is None
    finally:
        memory.close()
    assert not (db / "cache" / "recall" / IndexFile.NAME).exists()


def test_the_environment_turns_the_head_start_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s"
    _store_with_saved_index(db)
    monkeypatch.setenv(warm.ENV, "0")
    memory = Memory(db, clock=lambda: NOW)
    try:
        memory.warm_recall()
        assert memory._warming is None
        assert kept_recall(memory.store)[1].index is None
    finally:
        memory.close()


def test_closing_at_once_waits_for_the_head_start_and_leaves_nothing_running(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s"
    _store_with_saved_index(db)
    for _ in range(3):
        memory = Memory(db, clock=lambda: NOW)
        memory.warm_recall()
        thread = memory._warming
        assert thread is not None
        memory.close()
        assert not thread.is_alive()
        assert saver_of(memory.store) is None  # no saver begun after the store closed
    # The index file still reads as the store's.
    memory = Memory(db, clock=lambda: NOW)
    try:
        best = memory.search("otter")[0]
        assert best["title"] == "note · river walk: the otter holt is under the alder roots"
    finally:
        memory.close()


def test_ready_works_out_the_length_terms_where_the_sums_will_want_numpy(
    readied: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = kept_recall(readied.store)[1].index
    assert index is not None
    assert "by length" not in index._derived  # three records: plain Python's sums
    monkeypatch.setattr(engine, "SMALL", 4)  # as if a few words read more than that
    index.ready()
    assert "by length" in index._derived or "norms" in index._derived
    assert "numpy" in sys.modules


def _maps_index(pid: int, db: Path, timeout: float = 20.0) -> bool:
    """Whether process ``pid`` maps ``db``'s recall index file within ``timeout``."""
    wanted = str((db / "cache" / "recall" / IndexFile.NAME).resolve())
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if wanted in Path(f"/proc/{pid}/maps").read_text():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc")
def test_memwork_serve_opens_the_saved_index_before_anyone_searches(tmp_path: Path) -> None:
    from tests.http_server import Served

    db = tmp_path / "s"
    _store_with_saved_index(db)
    server = Served(db, python_env(MEMWORK_NOW=NOW.isoformat(), MEMWORK_FSYNC="0"))
    try:
        assert _maps_index(server.process.pid, db)
    finally:
        code, rest = server.stop()
    assert code == 0, rest
