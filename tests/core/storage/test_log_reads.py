"""What a reader of a folder store's log decodes: a table that later records wrote
whole is read from the log alone (its file is not parsed), a table only partly
written again still reads its file, and both give exactly what a folded store gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.storage import codec
from memwork.core.storage.store import Store


def _write(folder: Path, docs: dict[str, dict]) -> None:
    store = Store(folder)
    with store.transaction():
        for doc_id, doc in docs.items():
            store.put("meta", doc_id, doc)
    store.close()


def _folded_copy(folder: Path, tmp_path: Path) -> dict:
    import shutil

    copy = tmp_path / "folded"
    shutil.copytree(folder, copy)
    store = Store(copy)
    store.fold_log()
    with store.reading():
        return dict(store.docs("meta"))


def test_a_table_every_record_rewrites_is_read_from_the_log_alone(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    _write(folder, {"counters": {"id": "counters", "n": 0}, "episodes": {"id": "episodes"}})
    Store(folder).fold_log()  # both documents now in meta.json
    for n in range(1, 4):
        _write(
            folder, {"counters": {"id": "counters", "n": n}, "episodes": {"id": "episodes", "n": n}}
        )
    expected = _folded_copy(folder, tmp_path)
    # Spoil a value inside the file, keeping its layout: a reader that parsed the file
    # would refuse the store; one that knows both documents come from the log never looks.
    table = folder / "meta.json"
    table.write_bytes(table.read_bytes().replace(b'"n": 0', b'"n": @'))
    store = Store(folder)
    with store.reading():
        assert store.docs("meta") == expected
        assert list(store.docs("meta")) == ["counters", "episodes"]  # id order, as a file


def test_a_table_partly_written_again_still_reads_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    _write(folder, {"a": {"id": "a", "v": 0}, "b": {"id": "b", "v": 0}, "c": {"id": "c"}})
    Store(folder).fold_log()
    _write(folder, {"b": {"id": "b", "v": 1}, "d": {"id": "d"}})
    store = Store(folder)
    with store.transaction():
        store.delete("meta", ["c"])
    expected = _folded_copy(folder, tmp_path)
    with Store(folder).reading() as reader:
        assert (
            reader.docs("meta")
            == expected
            == {
                "a": {"id": "a", "v": 0},
                "b": {"id": "b", "v": 1},
                "d": {"id": "d"},
            }
        )
        assert list(reader.docs("meta")) == ["a", "b", "d"]


@pytest.mark.parametrize("odd_id", ['say "hi"', "back\\slash", "naïve", "tab\there"])
def test_ids_the_layout_cannot_name_are_left_to_the_decoder(tmp_path: Path, odd_id: str) -> None:
    folder = tmp_path / "s"
    _write(folder, {odd_id: {"id": odd_id, "v": 0}, "z": {"id": "z", "v": 0}})
    Store(folder).fold_log()
    _write(folder, {odd_id: {"id": odd_id, "v": 1}})
    with Store(folder).reading() as reader:
        assert reader.docs("meta") == {odd_id: {"id": odd_id, "v": 1}, "z": {"id": "z", "v": 0}}


def test_listed_ids_reads_a_table_file_s_ids_from_its_layout() -> None:
    docs = {"a": {"x": [1, {"y": '\n    "fake": 1'}]}, "b": {}, "naïve": {"s": 'q"uote'}}
    raw = codec.table_bytes("t", docs, 7)
    assert codec.listed_ids("t", 7, raw, 10) == ["a", "b", "naïve"]
    assert codec.listed_ids("t", 7, raw, 3) == ["a", "b", "naïve"]
    assert codec.listed_ids("t", 7, raw, 2) is None  # holds more than it may
    assert codec.listed_ids("t", 8, raw, 10) is None  # another version of the table
    assert codec.listed_ids("u", 7, raw, 10) is None  # another table's file
    assert codec.listed_ids("t", 7, codec.table_bytes("t", {}, 7), 10) is None
    escaped = codec.table_bytes("t", {'q"': {}}, 7)
    assert codec.listed_ids("t", 7, escaped, 10) is None
    assert json.loads(raw)["documents"].keys() == {"a", "b", "naïve"}


def test_documents_the_log_adds_read_in_id_order_wherever_they_fall(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    _write(folder, {"b": {"id": "b"}, "d": {"id": "d"}})
    Store(folder).fold_log()
    _write(folder, {"e": {"id": "e"}})  # after every id the file holds
    with Store(folder).reading() as reader:
        assert list(reader.docs("meta")) == ["b", "d", "e"]
    _write(folder, {"a": {"id": "a"}, "c": {"id": "c"}})  # before and among them
    with Store(folder).reading() as reader:
        assert list(reader.docs("meta")) == ["a", "b", "c", "d", "e"]


def test_the_log_says_which_documents_changed_since_a_version(tmp_path: Path) -> None:
    """What a follower one commit behind asks instead of reading a whole table: the
    documents put or deleted since a version, each as the last commit left it."""
    store = Store(tmp_path / "s")
    with store.transaction():
        for n in range(50):
            store.put("notes", f"n{n}", {"id": f"n{n}", "text": f"note {n}"})
    version = store.table_version("notes")
    assert version is not None
    with store.transaction():
        store.put("notes", "n1", {"id": "n1", "text": "first edit"})
    with store.transaction():
        store.put("other", "x", {"id": "x"})  # another table: not listed
    with store.transaction():
        store.put("notes", "n1", {"id": "n1", "text": "second edit"})
        store.put("notes", "n50", {"id": "n50", "text": "new"})
        store.delete("notes", ["n2"])
    reader = Store(tmp_path / "s")  # another process: nothing of the table read yet
    with reader.reading():
        changed = reader.changed_since("notes", version)
        assert changed == {
            "n1": {"id": "n1", "text": "second edit"},
            "n50": {"id": "n50", "text": "new"},
            "n2": None,
        }
        assert reader.changed_since("notes", reader.table_version("notes") or 0) == {}
        assert not reader.is_loaded("notes")
    # Folded since: the log no longer holds those commits, so it cannot tell.
    store.fold_log()
    with reader.reading():
        assert reader.changed_since("notes", version) is None
    # A commit that replaced the table whole cannot be told by document either.
    later = store.table_version("notes") or 0
    with store.transaction():
        store.drop("notes")
        store.put("notes", "n0", {"id": "n0", "text": "again"})
    with reader.reading():
        assert reader.changed_since("notes", later) is None
    store.close()
    reader.close()
