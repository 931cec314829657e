"""What takes long for the workbench is worked out with the store let go: a read holds
the store's lock, and every agent's write waits for it (a 100k store's lint held it
20 s, a checkpoint's diff 10 s, the / box's index 7 s)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from memwork.core.domain import lessons
from memwork.core.services import checkpoints, lint
from memwork.core.services.recall import search_docs
from memwork.core.storage.store import Store
from memwork.tui.service import MemoryService

NOW = datetime(2026, 11, 20, 12, 0, 0).astimezone()


@pytest.fixture
def service(tmp_path: Path) -> MemoryService:
    store = Store(tmp_path / "db")
    for text in ("Always pin the image digest", "Never pin the image digest", "Run the canary"):
        lessons.add_lesson(store, text, on_duplicate="keep-both", now=NOW, actor="test")
    for n in range(3):
        store_observe(store, f"ses_{n}", f"note {n} about the canary")
    return MemoryService(store)


def store_observe(store: Store, session: str, text: str) -> None:
    from memwork import Memory

    memory = Memory(store.path)
    memory.observe(session, text)
    memory.close()


def test_lint_findings_are_worked_out_with_the_store_let_go(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    held: list[bool] = []
    real = lint.findings

    def watched(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        held.append(service.store.cache.lock_held())
        return real(*args, **kwargs)

    monkeypatch.setattr(lint, "findings", watched)
    _, found, _ = service.header_counts()
    view, _ = service.lint_view()
    extras = service.lesson_extras()
    assert found == len(view) == len(extras.findings) > 0
    assert len(held) == 3 and not any(held)
    # The contradicting pair is on both lessons, taken from those findings.
    assert sorted(len(v) for v in extras.contradicts.values()) == [1, 1]


def test_a_checkpoint_is_read_with_the_store_let_go(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = service.store
    point = checkpoints.create(store, "before", now=NOW, actor="test")
    lessons.add_lesson(store, "Drain the queue first", now=NOW, actor="test")
    held: list[bool] = []
    real = store.backend.snapshot_read

    def watched(key: str):  # noqa: ANN202
        held.append(store.cache.lock_held())
        return real(key)

    monkeypatch.setattr(store.backend, "snapshot_read", watched)
    diff = service.checkpoint_diff(point["id"], titles=5)
    assert len(diff["tables"]["lessons"]["added"]) == 1
    assert held == [False]


def test_the_search_box_reads_each_sessions_notes_under_a_lock_of_its_own(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = service.store
    holds: list[str] = []
    real = search_docs.observation_docs

    def watched(store_: Store, name: str, titles: dict[str, str]):  # noqa: ANN202
        holds.append(name)
        return real(store_, name, titles)

    monkeypatch.setattr(search_docs, "observation_docs", watched)
    opened = 0
    real_reading = store.reading

    def counted():  # noqa: ANN202
        nonlocal opened
        opened += 1
        return real_reading()

    monkeypatch.setattr(store, "reading", counted)
    _, index = service.search_index()
    assert len(holds) == 3
    assert opened >= 2 + len(holds)  # the small tables, one per session, the checkpoints
    assert index.search("canary")
