"""Building the recall index reads every table once and keeps only the index: the
documents it read are not held in memory afterwards, and every search still answers
as before (new notes, forgotten ones, other processes' writes)."""

from __future__ import annotations

from datetime import timedelta

from memwork.core.domain import sessions
from memwork.core.services.recall import search
from memwork.core.services.recall.follow import Recall
from memwork.core.storage.store import Store
from tests.conftest import NOW


def _fill(store: Store) -> list[str]:
    sids = []
    with store.transaction():
        for s in range(3):
            sid = sessions.start_session(store, title=f"run {s}", now=NOW, actor="t")["id"]
            sids.append(sid)
            for n in range(4):
                text = f"rotated the staging keys {s}-{n}" if n == 2 else f"lunch talk {s}-{n}"
                sessions.observe(store, sid, text, now=NOW + timedelta(seconds=n), actor="t")
    return sids


def _refs(store: Store, recall: Recall, query: str) -> list[str]:
    """The hits that hold the words (a neighbour of one is found too, after it)."""
    hits = search.search(store, query, now=NOW, limit=20, recall=recall)
    return [h.id for h in hits if "staging keys" in h.title]


def test_a_build_leaves_the_tables_it_read_out_of_memory(tmp_path) -> None:
    store = Store(tmp_path / "db")
    sids = _fill(store)
    store.close()
    store = Store(tmp_path / "db")
    recall = Recall()
    found = _refs(store, recall, "staging keys")
    assert len(found) == 3
    tables = [sessions.observations_table(sid) for sid in sids]
    assert not any(store.is_loaded(t) for t in tables)
    # The next search reads nothing again and answers the same.
    assert _refs(store, recall, "staging keys") == found
    assert not any(store.is_loaded(t) for t in tables)


def test_writes_after_a_build_reach_the_next_search(tmp_path) -> None:
    store = Store(tmp_path / "db")
    sids = _fill(store)
    recall = Recall()
    assert len(_refs(store, recall, "staging keys")) == 3
    with store.transaction():
        note = sessions.observe(store, sids[0], "staging keys in the vault", now=NOW, actor="t")
    found = _refs(store, recall, "staging keys")
    assert f"{sids[0]}/{note['id']}" in found
    # Another process's write (another store object on the same folder).
    other = Store(tmp_path / "db")
    with other.transaction():
        sessions.observe(other, sids[1], "the staging keys expire friday", now=NOW, actor="t")
    other.close()
    assert len(_refs(store, recall, "staging keys")) == 5


def test_a_search_inside_a_transaction_keeps_its_changes(tmp_path) -> None:
    store = Store(tmp_path / "db")
    sids = _fill(store)
    store.close()
    store = Store(tmp_path / "db")
    recall = Recall()
    with store.transaction():
        sessions.observe(store, sids[2], "staging keys rotated again", now=NOW, actor="t")
        # The index is built while the transaction holds a change: nothing is let go.
        assert len(_refs(store, recall, "staging keys")) >= 3
    assert len(_refs(store, recall, "staging keys")) == 4
