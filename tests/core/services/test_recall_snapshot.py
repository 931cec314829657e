"""A background save's copy of the recall index: taken in slices, written in pieces, read
back as the index it copied, and untouched by changes made after it was taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core.domain import episodes, lessons, sessions
from memwork.core.services.recall import saved_file, search, snapshot
from memwork.core.services.recall.follow import Recall
from memwork.core.storage.store import Store
from tests.conftest import NOW


def _filled(tmp_path: Path) -> tuple[Store, Recall, str]:
    store = Store(tmp_path / "s")
    sid = sessions.start_session(store, title="pier", now=NOW, actor="t")["id"]
    for i in range(30):
        text = f"heron number {i} stood on pier {i % 4} while the tide turned " * 3
        sessions.observe(store, sid, text, now=NOW, actor="t")
    episodes.record_episodes(
        store,
        [{"task_id": "count", "score": 0.5, "summary": "counted the herons at dawn"}],
        now=NOW,
        actor="t",
    )
    lessons.add_lesson(store, "Herons leave the pier at high tide", now=NOW, actor="t")
    recall = Recall()
    search.search(store, "heron tide", now=NOW, recall=recall)  # decodes some postings
    return store, recall, sid


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces small enough that a test index is split everywhere it can be."""
    monkeypatch.setattr(saved_file, "_PIECE", 64)
    monkeypatch.setattr(saved_file, "_ROWS", 4)


def test_the_pieces_join_into_what_the_index_saves(tmp_path: Path, small_pieces: None) -> None:
    store, recall, _ = _filled(tmp_path)
    index = recall.index
    assert index is not None and snapshot.live_terms(index) > 0
    while not snapshot.pack_some(index, 0.0):  # one word a slice
        pass
    assert snapshot.live_terms(index) == 0
    frozen = snapshot.copy_of(index)
    pieces = list(saved_file.pieces(frozen))
    assert len(pieces) > 50
    assert max(len(p) for p in pieces) < 1024
    loaded = saved_file.read(b"".join(pieces))
    assert loaded is not None and loaded.state() == index.state()
    # Encoded postings answer as decoded ones did.
    assert [s.ref for s in loaded.search("heron tide", 10)] == [
        s.ref for s in index.search("heron tide", 10)
    ]


def test_the_copy_keeps_the_index_as_it_was_when_taken(tmp_path: Path) -> None:
    store, recall, sid = _filled(tmp_path)
    index = recall.index
    assert index is not None
    snapshot.pack_some(index, 1.0)
    frozen = snapshot.copy_of(index)
    before = index.state()
    sessions.observe(store, sid, "a kingfisher on pier 9", now=NOW, actor="t")
    search.search(store, "kingfisher heron", now=NOW, recall=recall)  # changes the index
    assert index.state() != before
    saved = saved_file.read(saved_file.to_bytes(frozen))
    assert saved is not None and saved.state() == before
