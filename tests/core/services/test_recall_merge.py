"""Two parts of a recall build join into the index one build makes, slot for slot."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.recall import build_apart, extract, merge, saved_file
from memwork.core.services.recall.follow import Recall
from memwork.core.storage.store import Store
from tests.conftest import NOW


def _store(tmp_path: Path) -> Path:
    """Sessions of notes (one table each), an episode of one of them, lessons and a
    working-memory key that expires: what a part can hold, and a session two parts name."""
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    for s in range(4):
        sid = memory.start_session(title=f"run {s}")["id"]
        for n in range(6):
            memory.observe(sid, f"run {s} step {n}: the canary for billing-api went green")
            memory.observe(sid, f"rolled back billing-api on db-{n} after the pager fired")
        if s == 2:
            memory.record_episode(
                {
                    "task_id": "deploy-billing-api",
                    "score": 0.4,
                    "summary": "the canary failed twice",
                    "session_id": sid,
                }
            )
            memory.wm_set(sid, "focus", "canary on db-3", ttl=3600)
    memory.add_lesson("Roll back billing-api before paging the owner")
    memory.add_lesson("The db-3 canary lies about latency")
    memory.store.fold_log()  # the documents into their table files
    memory.close()
    return db


def _indexed(db: Path) -> tuple[list[str], dict[str, int]]:
    """The tables recall reads, in name order, and what each table file holds."""
    store = Store(db, create=False)
    try:
        with store.reading():
            names = sorted(n for n in store.cache.head.tables if extract.indexed(n))
            sizes = store.backend.table_sizes(names) or []
    finally:
        store.close()
    return names, dict(zip(names, sizes, strict=True))


def _build(db: Path, only: object = None) -> object:
    store = Store(db, create=False)
    try:
        return Recall(only=only).refresh(store)  # type: ignore[arg-type]
    finally:
        store.close()


def test_two_parts_join_into_the_index_one_build_makes_at_every_split(tmp_path: Path) -> None:
    db = _store(tmp_path)
    whole = _build(db)
    names = _indexed(db)[0]
    assert len(names) >= 4
    for cut in range(1, len(names)):
        first = set(names[:cut])
        part = _build(db, lambda n, first=first: n in first)
        rest = _build(db, lambda n, first=first: n not in first)
        # The second part comes to the join as the child wrote it: read in place.
        rest = saved_file.read(saved_file.to_bytes(rest))  # type: ignore[arg-type]
        joined = merge.join(part, rest)  # type: ignore[arg-type]
        assert joined.state() == whole.state(), f"split after {names[cut - 1]}"  # type: ignore[attr-defined]
        for query in ("canary billing", "rolled back db-3", "focus", "pager owner"):
            assert joined.search(query, 10) == whole.search(query, 10)  # type: ignore[attr-defined]


def test_parts_that_share_a_table_are_refused(tmp_path: Path) -> None:
    db = _store(tmp_path)
    with pytest.raises(ValueError, match="disjoint"):
        merge.join(_build(db), _build(db))  # type: ignore[arg-type]


def test_the_first_part_holds_about_half_the_bytes_and_never_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _store(tmp_path)
    spec = {"folder": str(db)}
    monkeypatch.delenv(build_apart.ENV, raising=False)
    assert build_apart._first_part(spec) is None  # a few kilobytes: one process builds
    monkeypatch.setenv(build_apart.ENV, "1")
    first = build_apart._first_part(spec)
    names, sizes = _indexed(db)
    assert sum(sizes.values()) > 0  # folded into table files: the split goes by them
    assert first and len(first) < len(names)
    assert first == set(names[: len(first)])  # a prefix of the tables in name order
    total = sum(sizes.values())
    assert sum(sizes[n] for n in first) >= total / 2 or len(first) == len(names) - 1
