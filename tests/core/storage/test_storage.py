"""The store's contract: transactions, isolation, reloads, refusals, migrations."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core.base.errors import StoreTooNew, StoreUnreadable
from memwork.core.storage import journal, schema
from memwork.core.storage.store import Store
from tests.conftest import folder_digest


def test_put_get_all_delete(store: Store) -> None:
    with store.transaction():
        store.put("lessons", "b", {"id": "b", "n": 2})
        store.put_many("lessons", {"a": {"id": "a", "n": 1}, "c": {"id": "c", "n": 3}})
    with store.reading():
        assert [d["id"] for d in store.all("lessons")] == ["a", "b", "c"]
        assert store.get("lessons", "b") == {"id": "b", "n": 2}
        assert store.get("lessons", "zz") is None
    with store.transaction():
        store.delete("lessons", ["a", "missing"])
        store.put("lessons", "b", {"id": "b"})  # a whole replacement drops old fields
    with store.reading():
        assert store.all("lessons") == [{"id": "b"}, {"id": "c", "n": 3}]


def test_tinydb_queries_work_on_string_ids(store: Store) -> None:
    from tinydb import Query

    with store.transaction():
        store.insert_document("rules", "r1", {"id": "r1", "scope": "global"})
        store.insert_document("rules", "r2", {"id": "r2", "scope": "task:x"})
    with store.reading():
        found = store.table("rules").search(Query().scope == "task:x")
    assert [d.doc_id for d in found] == ["r2"]


def test_failed_transaction_writes_nothing(store: Store) -> None:
    with store.transaction():
        store.put("lessons", "a", {"id": "a", "v": 1})
    with pytest.raises(RuntimeError), store.transaction():
        store.put("lessons", "a", {"id": "a", "v": 2})
        store.put("slots", "s", {"id": "s"})
        raise RuntimeError("boom")
    with store.reading():
        assert store.all("lessons") == [{"id": "a", "v": 1}]
        assert store.all("slots") == []


def test_writes_outside_a_transaction_are_refused(store: Store) -> None:
    with pytest.raises(RuntimeError, match="transaction"), store.reading():
        store.put("lessons", "a", {"id": "a"})


def test_second_process_writes_are_seen_without_reopening(tmp_path: Path) -> None:
    a = Store(tmp_path / "s")
    b = Store(tmp_path / "s")
    with a.transaction():
        a.put("lessons", "x", {"id": "x", "v": 1})
    with b.reading():
        assert b.get("lessons", "x") == {"id": "x", "v": 1}
    with a.transaction():
        a.put("lessons", "x", {"id": "x", "v": 2})
    with b.transaction():  # b's cached copy is stale; the write must build on a's
        doc = b.get("lessons", "x")
        b.put("lessons", "x", {**doc, "seen_by_b": True})
    with a.reading():
        assert a.get("lessons", "x") == {"id": "x", "v": 2, "seen_by_b": True}


def test_only_changed_tables_are_rewritten(tmp_path: Path) -> None:
    """A fold writes the table files its log's commits changed, and no other."""
    s = Store(tmp_path / "s")
    with s.transaction():
        s.put("lessons", "a", {"id": "a"})
        s.put("slots", "b", {"id": "b"})
    s.fold_log()
    before = (tmp_path / "s" / "slots.json").stat().st_ino
    with s.transaction():
        s.put("lessons", "c", {"id": "c"})
    s.fold_log()
    assert (tmp_path / "s" / "slots.json").stat().st_ino == before
    assert '"c"' in (tmp_path / "s" / "lessons.json").read_text()


def test_table_files_are_stable_sorted_json(tmp_path: Path) -> None:
    s = Store(tmp_path / "s")
    with s.transaction():
        s.put("lessons", "b", {"z": 1, "id": "b", "a": 2})
        s.put("lessons", "a", {"id": "a"})
    s.fold_log()
    text = (tmp_path / "s" / "lessons.json").read_text()
    assert text.index('"a"') < text.index('"b"')
    assert text.index('"a": 2') < text.index('"id": "b"') < text.index('"z": 1')
    assert text.endswith("\n") and "\n  " in text


def test_corrupt_table_is_refused_and_left_byte_identical(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    s = Store(folder)
    with s.transaction():
        s.put("lessons", "a", {"id": "a"})
    s.fold_log()
    (folder / "lessons.json").write_text('{"documents": {"a": ')
    before = folder_digest(folder)
    fresh = Store(folder)
    with pytest.raises(StoreUnreadable, match="lessons.json"), fresh.transaction():
        fresh.put("lessons", "b", {"id": "b"})
    assert folder_digest(folder) == before


def test_corrupt_manifest_is_refused_and_left_byte_identical(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    Store(folder)
    (folder / "store.json").write_bytes(b"\x00garbage")
    before = folder_digest(folder)
    with pytest.raises(StoreUnreadable, match="store.json"):
        Store(folder)
    assert folder_digest(folder) == before


def test_newer_schema_is_refused_and_left_byte_identical(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    s = Store(folder)
    with s.transaction():
        s.put("lessons", "a", {"id": "a"})
    manifest = (folder / "store.json").read_text()
    (folder / "store.json").write_text(
        manifest.replace(f'"schema_version": {schema.SCHEMA_VERSION}', '"schema_version": 99')
    )
    before = folder_digest(folder)
    with pytest.raises(StoreTooNew, match="99"):
        Store(folder)
    assert folder_digest(folder) == before


def test_folder_with_foreign_files_is_not_taken_over(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("mine")
    with pytest.raises(StoreUnreadable, match="not empty"):
        Store(folder)
    assert [p.name for p in folder.iterdir()] == ["todo.txt"]


def test_a_file_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    path.write_text("{}")
    with pytest.raises(StoreUnreadable, match="is a file"):
        Store(path)
    assert path.read_text() == "{}"


def test_interrupted_commit_is_completed_on_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit that goes to the table files at once (no log) is journaled."""
    monkeypatch.setenv("MEMWORK_LOG_BYTES", "0")
    folder = tmp_path / "s"
    s = Store(folder)

    def crash(*args: object) -> None:
        raise KeyboardInterrupt  # as if killed after the journal, before the renames

    monkeypatch.setattr(journal, "_apply", crash)
    with pytest.raises(KeyboardInterrupt), s.transaction():
        s.put("lessons", "a", {"id": "a"})
    monkeypatch.undo()
    assert (folder / journal.JOURNAL_NAME).exists()
    reopened = Store(folder)
    with reopened.reading():
        assert reopened.get("lessons", "a") == {"id": "a"}
    assert not (folder / journal.JOURNAL_NAME).exists()


def test_stray_temp_files_are_removed_on_open(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    Store(folder)
    for n in range(3):
        (folder / f"lessons.json.tmp-123-{n}").write_text("half")
    Store(folder)
    assert not [p for p in folder.iterdir() if ".tmp-" in p.name]


def test_older_schema_is_migrated_after_a_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "s"
    s = Store(folder)
    with s.transaction():
        s.put("lessons", "a", {"id": "a", "text": "old name"})

    def rename_text_to_content(store: Store) -> None:
        docs = store.docs("lessons")
        store.put_many("lessons", {k: {"id": k, "content": v["text"]} for k, v in docs.items()})

    current = schema.SCHEMA_VERSION
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current + 1)
    monkeypatch.setitem(schema.MIGRATIONS, current, rename_text_to_content)
    migrated = Store(folder)
    with migrated.reading():
        assert migrated.get("lessons", "a") == {"id": "a", "content": "old name"}
    assert f'"schema_version": {current + 1}' in (folder / "store.json").read_text()
    backups = list(tmp_path.glob(f"s.backup-v{current}-*"))
    assert len(backups) == 1
    monkeypatch.setattr(schema, "SCHEMA_VERSION", current)  # the backup is the old store
    with Store(backups[0]).reading() as backup:
        assert backup.get("lessons", "a") == {"id": "a", "text": "old name"}


def test_lookup_takes_a_unique_start_or_end_of_an_id() -> None:
    from memwork.core.base import lookup
    from memwork.core.base.errors import InvalidInput, NotFound

    docs = {
        "les_01AAAA0000XYZ1": {"id": "les_01AAAA0000XYZ1"},
        "les_01AAAA0000QRS2": {"id": "les_01AAAA0000QRS2"},
    }
    assert lookup.resolve(docs, "XYZ1", "lesson")["id"] == "les_01AAAA0000XYZ1"
    assert lookup.resolve(docs, " les_01AAAA0000QRS2 ", "lesson")["id"] == "les_01AAAA0000QRS2"
    with pytest.raises(InvalidInput, match="matches 2 lessons"):
        lookup.resolve(docs, "les_01AA", "lesson")
    with pytest.raises(NotFound):
        lookup.resolve(docs, "abc", "lesson")  # too short to guess
