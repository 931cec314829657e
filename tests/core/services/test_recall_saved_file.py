"""The recall index's file: read in place (a query decodes only the words it asks for),
changed on top of what it read, saved again whole, and refused when damaged."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from memwork.core.domain import lessons, sessions
from memwork.core.services.recall import saved_file, search, snapshot
from memwork.core.services.recall.follow import IndexFile, Recall
from memwork.core.services.recall.mapped import (
    FileReader,
    SavedNumbers,
    TermBytes,
    TermTable,
    TextRows,
    encode,
)
from memwork.core.storage.store import Store
from tests.conftest import NOW
from tests.core.services.test_recall_index import fill


@pytest.fixture(autouse=True, params=[False, True], ids=["long-lived", "one-call"])
def one_call(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Every test twice: as a long-lived process reads the file (through its mapping),
    and as a one-call process does (rows, offsets and numbers by ``pread``)."""
    if request.param:
        init, load = Recall.__init__, IndexFile.load

        def one_call_init(self: Recall, **kwargs: object) -> None:
            init(self, **{"one_call": True, **kwargs})  # type: ignore[arg-type]

        monkeypatch.setattr(Recall, "__init__", one_call_init)
        monkeypatch.setattr(IndexFile, "load", lambda self, one_call=True: load(self, one_call))
    return bool(request.param)


def _saved(tmp_path: Path) -> tuple[Store, Path]:
    store = Store(tmp_path / "s")
    for n in range(3):
        fill(store, n)
    built = Recall()
    search.search(store, "heron", now=NOW, recall=built)
    built.settle(store)  # a process that built the index saves it as it ends
    path = tmp_path / "s" / "cache" / "recall" / "index.bin"
    assert path.exists()
    return store, path


def _one_note_behind(tmp_path: Path, note: str) -> tuple[Store, Path, str]:
    """A saved index, then ``note`` written in a new session (the file lacks it)."""
    store, path = _saved(tmp_path)
    sid = sessions.start_session(store, title="dusk", now=NOW, actor="t")["id"]
    sessions.observe(store, sid, note, now=NOW, actor="t")
    return store, path, sid


def _rebuilt(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict:
    with monkeypatch.context() as m:
        m.setenv("MEMWORK_SEARCH_CACHE", "0")
        return Recall().refresh(store).state()


def _replace(path: Path, data: bytes) -> None:
    """Put ``data`` where ``path`` is, as memwork does: beside it, then a rename."""
    tmp = path.with_name("replacing")
    tmp.write_bytes(data)
    tmp.replace(path)


def test_a_query_on_a_loaded_index_decodes_only_its_own_words(
    tmp_path: Path, one_call: bool
) -> None:
    store, path = _saved(tmp_path)
    built = Recall().refresh(store)  # the same index, read from the file
    loaded = IndexFile(tmp_path / "s").load()
    assert loaded is not None
    # A one-call process reads rows by pread, not through the mapping's pages.
    assert isinstance(loaded.titles.base.buf, FileReader) == one_call
    assert loaded.post.live == {}  # nothing decoded by reading the file

    hits = loaded.search("heron pier", 5)
    assert [h.ref for h in hits] == [h.ref for h in built.search("heron pier", 5)]
    assert set(loaded.post.live) <= {"heron", "pier"}
    assert len(loaded.post) == len(built.post)  # every other word still in its bytes
    # The words it read are views of the file's pages, not copies: a save (or its
    # packing step) hands them back to the file rather than keeping their bytes.
    assert all(loaded.post.saved_view(found) for found in loaded.post.live.values())
    assert snapshot.pack_some(loaded, 1.0)
    assert loaded.post.live == {} and loaded.post.raw.extra == {} and not loaded.post.raw.gone
    assert loaded.state() == built.state()


def test_a_one_call_query_reads_sessions_and_neighbours_in_place(
    tmp_path: Path, one_call: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The best records' sessions and neighbours are read slot by slot from the file in
    a one-call process (a block of a few numbers at a time here), never copied whole,
    and score as the index built in memory does, neighbour shares and session field
    included."""
    from memwork.core.services.recall.mapped import SavedNumbers

    monkeypatch.setattr(SavedNumbers, "BLOCK", 4)
    store, _ = _saved(tmp_path)
    built = Recall().refresh(store)
    loaded = IndexFile(tmp_path / "s").load()
    assert loaded is not None
    for query in ("heron pier", "number 3", "pier 2 heron", "watch dawn", "missed heron count"):
        got = [(h.ref, h.score, h.session, h.title) for h in loaded.search(query, 20)]
        assert got == [(h.ref, h.score, h.session, h.title) for h in built.search(query, 20)]
        assert any(h.session for h in loaded.search(query, 20)) or query == "watch dawn"
    # Never copied whole in a one-call process: unread, or read in place slot by slot.
    held = {name: loaded.__dict__.get(name) for name in ("sessions", "prev", "next")}
    assert [isinstance(found, array) for found in held.values()] == [not one_call] * 3


@pytest.mark.parametrize("plain", [False, True])
def test_a_query_one_note_behind_reads_new_postings_beside_the_saved_ones(
    tmp_path: Path, plain: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process one note behind its index file appends the note's postings beside the
    saved ones; a plain-Python query sums both parts without joining them (the join
    copies the saved postings), numpy's joins them, and both rank as a rebuilt index
    does."""
    from memwork.core.services.recall import engine

    store, _, _ = _one_note_behind(tmp_path, "a heron on the pier at dusk")
    index = Recall().refresh(store)  # the file, then the note
    assert "heron" in index.post.added  # kept apart, not joined yet
    monkeypatch.setattr(engine, "plain_python", lambda postings, small=0: plain)
    rebuilt = _rebuilt_index(store, monkeypatch)
    for query in ("heron pier", "dusk heron", "pier 1"):
        got = [(h.ref, h.score) for h in index.search(query, 20)]
        assert got == [(h.ref, h.score) for h in rebuilt.search(query, 20)]
    # Summed in parts, the saved postings stay views of the file and the new ones apart.
    assert ("heron" in index.post.added) == plain
    if plain:
        assert index.post.saved_view(index.post.live["heron"])


def test_catching_up_with_a_note_reads_no_column_whole(
    tmp_path: Path, one_call: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process one note behind its index file appends the note's slot beside the
    saved columns (a one-call process) and its session field beside the saved words'
    (any), then answers as a rebuilt index does; only the lengths, which every posting
    a query sums reads, are read whole."""
    store, _, _ = _one_note_behind(tmp_path, "a heron on the pier at dusk")
    index = Recall().refresh(store)
    # The note's saved words: its session's tenths kept apart, not decoded to add them.
    assert {"heron", "pier"} <= index.sess_post.added.keys()
    rebuilt = _rebuilt_index(store, monkeypatch)
    for query in ("heron pier", "dusk heron", "pier 1 number"):
        got = [(h.ref, h.score, h.session) for h in index.search(query, 20)]
        assert got == [(h.ref, h.score, h.session) for h in rebuilt.search(query, 20)]
    assert index.state() == rebuilt.state()
    held = {n: type(index.__dict__.get(n)) for n in ("kinds", "tables", "fps", "prev")}
    assert held == {n: SavedNumbers if one_call else array for n in held}


def test_a_one_call_process_keeps_no_documents_for_a_next_catch_up(
    tmp_path: Path, one_call: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived process keeps each table's documents with their units once read, so
    its next catch-up reads only the documents a commit changed; a one-call process has
    no next catch-up to spare (~1 MB at 1,000 sessions) and reads the table again if
    one comes after all."""
    store, _, sid = _one_note_behind(tmp_path, "a heron on the pier at dusk")
    recall = Recall()
    recall.refresh(store)
    assert bool(recall._docs) != one_call
    sessions.observe(store, sid, "an egret beside the heron", now=NOW, actor="t")
    index = recall.refresh(store)
    assert index.state() == _rebuilt_index(store, monkeypatch).state()
    assert any("egret" in h.title for h in index.search("egret", 5))


def test_a_catch_up_reads_only_the_documents_the_log_says_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process whose index file is a few commits behind takes the sessions and lessons
    that changed from the store's log, never reading those tables whole, and holds what
    an index rebuilt from the whole store holds: a new session, notes that rewrite their
    sessions' documents, a lesson added. (A commit that takes text out of a record
    removes the file: the next process builds the index.)"""
    store, _, sid = _one_note_behind(tmp_path, "a heron on the pier at dusk")
    first = next(iter(store.docs("sessions")))
    sessions.observe(store, first, "a kingfisher on the pier", now=NOW, actor="t")
    added = lessons.add_lesson(store, "Egrets follow the plough", now=NOW, actor="t")
    process = Store(tmp_path / "s")  # another process: nothing read yet
    read: list[str] = []
    whole = process.docs
    monkeypatch.setattr(process, "docs", lambda name: read.append(name) or whole(name))
    index = Recall().refresh(process)
    assert "sessions" not in read and "lessons" not in read
    assert f"observations.{sid}" in read  # a session's notes keep an order: read whole
    monkeypatch.undo()
    assert index.state() == _rebuilt_index(process, monkeypatch).state()
    assert [h.ref for h in index.search("plough", 5)] == [added.lesson["id"]]
    assert [h.session for h in index.search("kingfisher", 1)] == [first]
    assert any(h.ref == sid for h in index.search("dusk", 5))  # the new session's record


def _rebuilt_index(store: Store, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202
    with monkeypatch.context() as m:
        m.setenv("MEMWORK_SEARCH_CACHE", "0")
        return Recall().refresh(store)


def test_changes_after_a_load_are_saved_with_what_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, path = _saved(tmp_path)
    process = Recall()
    process.refresh(store)  # reads the file
    sid = sessions.start_session(store, title="dusk", now=NOW, actor="t")["id"]
    sessions.observe(store, sid, "an egret beside the heron", now=NOW, actor="t")
    lesson = lessons.add_lesson(store, "Egrets follow the plough", now=NOW, actor="t")
    process.refresh(store)
    lessons.forget(store, lesson.lesson["id"], now=NOW, actor="t")  # removes the file
    assert not path.exists()
    assert [h.title for h in search.search(store, "plough", now=NOW, recall=process)] == []
    process.flush(store)

    again = IndexFile(tmp_path / "s").load()
    assert again is not None
    assert again.state() == _rebuilt(store, monkeypatch)
    assert "egret" in again.post and "plough" not in again.post


def test_words_beyond_ascii_are_found_in_the_saved_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    sid = sessions.start_session(store, title="trip", now=NOW, actor="t")["id"]
    for text in ("a café in Zürich", "東京 station at noon", "naïve façade 🦩 flamingo"):
        sessions.observe(store, sid, text, now=NOW, actor="t")
    first = Recall()
    search.search(store, "station", now=NOW, recall=first)
    first.settle(store)
    for word, expected in (("zürich", "café"), ("東京", "station"), ("façade", "flamingo")):
        hits = search.search(store, word, now=NOW, recall=Recall())
        assert hits and expected in hits[0].title, word


@pytest.mark.parametrize(
    "damage",
    ["empty", "cut in the sections", "cut in the trailer", "magic", "head", "garbage"],
)
def test_a_damaged_file_is_not_read_and_search_rebuilds(tmp_path: Path, damage: str) -> None:
    store, path = _saved(tmp_path)
    data = path.read_bytes()
    expected = search.search(store, "heron pier", now=NOW, recall=Recall())
    broken = {
        "empty": b"",
        "cut in the sections": data[: len(data) // 2],
        "cut in the trailer": data[:-5],
        "magic": b"XXXXXXXX" + data[8:],
        "head": data[:-40] + b"\xff" * 16 + data[-24:],
        "garbage": os.urandom(len(data)),
    }[damage]
    _replace(path, broken)
    assert IndexFile(tmp_path / "s").load() is None
    assert search.search(store, "heron pier", now=NOW, recall=Recall()) == expected


def test_an_index_file_of_another_format_is_not_read(tmp_path: Path) -> None:
    import marshal

    _, path = _saved(tmp_path)
    _replace(path, marshal.dumps({"format": 3, "post": {}}))  # what earlier versions wrote
    assert IndexFile(tmp_path / "s").load() is None


def _table(words: dict[str, bytes]) -> TermTable:
    """A saved word table holding ``words``."""
    ordered = sorted((encode(w) + b"\n", data) for w, data in words.items())
    blobs = [b"".join(w for w, _ in ordered), b"".join(d for _, d in ordered)]
    rows = []
    for part, blob in zip((0, 1), blobs, strict=True):
        offsets = array("q", [0])
        for item in ordered:
            offsets.append(offsets[-1] + len(item[part]))
        rows.append(TextRows(blob, 0, memoryview(offsets)))
    return TermTable(rows[0], rows[1])


def test_term_bytes_read_saved_words_and_keep_changes_beside_them() -> None:
    saved = TermBytes(_table({"pier": b"P", "heron": b"H", "égret": b"E", "zebra": b"Z"}))
    assert len(saved) == 4 and "égret" in saved and "gull" not in saved
    copy = saved.copy()
    saved["gull"] = b"G"  # new
    saved["pier"] = b"P2"  # a saved word set again
    assert saved.pop("heron") == b"H"
    assert saved.pop("heron") is None
    assert len(saved) == 4
    assert sorted(saved) == ["gull", "pier", "zebra", "égret"]
    assert list(saved.sorted_items()) == [
        (b"gull\n", b"G"),
        (b"pier\n", b"P2"),
        (b"zebra\n", b"Z"),
        (encode("égret\n"), b"E"),
    ]
    # The copy taken before saw none of it.
    assert list(copy.sorted_items()) == [
        (b"heron\n", b"H"),
        (b"pier\n", b"P"),
        (b"zebra\n", b"Z"),
        (encode("égret\n"), b"E"),
    ]


def _flat(packed: TermBytes) -> list[tuple[bytes, bytes]]:
    """:meth:`TermBytes.sorted_runs` with each run of saved rows spelt out."""
    table = packed.table
    out = []
    for first, last in packed.sorted_runs():
        if isinstance(first, int):
            assert table is not None and isinstance(last, int)
            out += [
                (bytes(table.words.span(r, r + 1)), bytes(table.postings(r)))
                for r in range(first, last)
            ]
        else:
            out.append((first, bytes(last)))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"set": {"gull": b"G"}},  # before every saved word
        {"set": {"zz": b"ZZ", "aardvark": b"A"}},  # between, at the start
        {"set": {"pier": b"P2"}},  # a saved word set again
        {"pop": ["heron"]},  # the first saved word taken out
        {"pop": ["égret"]},  # the last
        {"pop": ["pier", "zebra"], "set": {"pigeon": b"PG", "zebra": b"Z2", "ûber": b"U"}},
    ],
)
def test_a_save_copies_runs_of_unchanged_saved_words_in_the_order_word_by_word_gives(
    changes: dict,
) -> None:
    packed = TermBytes(_table({"pier": b"P", "heron": b"H", "égret": b"E", "zebra": b"Z"}))
    for word in changes.get("pop", []):
        packed.pop(word)
    for word, data in changes.get("set", {}).items():
        packed[word] = data
    expected = [(w, bytes(d)) for w, d in packed.sorted_items()]
    assert _flat(packed) == expected
    runs = [r for r in packed.sorted_runs() if isinstance(r[0], int)]
    unchanged = len(expected) - len(changes.get("set", {}))
    assert sum(last - first for first, last in runs) == unchanged  # type: ignore[operator]


def test_a_file_saved_from_runs_is_the_file_saved_word_by_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = _saved(tmp_path)
    sid = fill(store, 7)
    follower = Recall()
    index = follower.refresh(store)  # read from the file, then one session behind
    sessions.observe(store, sid, "a grey heron at dusk on pier 7", now=NOW, actor="t")
    lessons.add_lesson(store, "Herons nest in colonies", now=NOW, actor="t")
    saved = next(t for t in store.table_names() if t.startswith("observations.") and sid not in t)
    with store.transaction():  # a saved note out of the middle: its neighbours change
        store.delete(saved, [sorted(store.docs(saved))[3]])
    index = follower.refresh(store)
    packed = index.post.pack()
    assert packed.table is not None and packed.extra and packed.gone  # every kind
    assert index.titles.base is not None and index.titles.over  # saved rows changed
    by_runs = saved_file.to_bytes(index)
    monkeypatch.setattr(TextRows, "in_place", lambda self: None)
    assert saved_file.to_bytes(index) == by_runs


def test_a_saved_words_row_is_remembered_and_stays_right(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows a table gives for the terms asked are remembered (the kinds' members
    are asked on every query naming a kind): asked again, in any order, after the
    memory filled and started again, and with words taken out and put back, every
    answer is the binary search's."""
    from memwork.core.services.recall import mapped

    words = {"pier": b"P", "heron": b"H", "égret": b"E", "zebra": b"Z", "auk": b"A"}
    table = _table(words)
    asked = [*words, "gull", "", "zebr", "zebras", "Heron", "égre"]
    expected = {term: table.find(encode(term)) for term in asked}
    assert sorted(r for r in expected.values() if r >= 0) == list(range(len(words)))
    monkeypatch.setattr(mapped, "_ROWS_KEPT", 3)  # fills, and starts again, many times
    for term in asked * 3 + asked[::-1]:
        assert table.row_of(term) == expected[term], term
        assert len(table._rows) <= 3
    saved = TermBytes(table)
    assert saved.pop("heron") == b"H" and "heron" not in saved  # taken out: not asked
    saved.restore("heron")
    assert "heron" in saved and saved.pop("heron") == b"H"
    assert "gull" not in saved and "auk" in saved


def test_a_catch_up_reads_the_references_of_the_tables_it_syncs_only(tmp_path: Path) -> None:
    store, _, sid = _one_note_behind(tmp_path, "an egret beside the heron")
    process = Recall()
    hits = search.search(store, "egret", now=NOW, recall=process)  # one session behind
    assert hits[0].title.endswith("an egret beside the heron")
    index = process.index
    assert index is not None and index._slots_of is not None
    names = {index.table_names[code] for code in index._slots_of}
    assert names == {f"observations.{sid}", "sessions"}  # not the other tables' refs


@pytest.mark.parametrize("seed", range(20))
def test_positions_in_an_int32_array_ignore_matches_across_two_elements(seed: int) -> None:
    import random

    from memwork.core.services.recall.mapped import positions as _positions

    rng = random.Random(seed)
    values = [0, 1, 256, 257, 65536, 16777216, 0x01010101, -1, -256]
    items = array("i", [rng.choice(values) for _ in range(rng.randint(0, 80))])
    for value in values:
        assert _positions(items, value) == [i for i, v in enumerate(items) if v == value]


def test_notes_added_to_saved_words_are_kept_apart_until_a_query_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _, _ = _one_note_behind(tmp_path, "an egret beside the heron on the pier")
    process = Recall()
    # Catches up (a new note); one hit asked for, so no fill reads the note's other words.
    search.search(store, "egret", now=NOW, limit=1, recall=process)
    index = process.index
    assert index is not None
    # "heron" and "pier" were saved: the new note's postings wait beside them, and the
    # saved ones stay where they are (nothing copied to append one slot).
    assert {"heron", "pier"} <= set(index.post.added)
    assert "heron" not in index.post.live
    hits = search.search(store, "heron pier", now=NOW, limit=50, recall=process)
    assert any(h.title.endswith("an egret beside the heron on the pier") for h in hits)
    assert "heron" not in index.post.added  # read, so joined
    assert index.state() == _rebuilt(store, monkeypatch)
    process.flush(store)
    again = IndexFile(tmp_path / "s").load()
    assert again is not None and again.state() == _rebuilt(store, monkeypatch)


def test_a_loaded_index_kept_through_every_kind_of_change_equals_one_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memwork.core.domain import forgetting, slots

    store, _ = _saved(tmp_path)
    sid = fill(store, 7)
    follower = Recall()
    follower.refresh(store)  # read from the file, then one session behind

    def step() -> None:
        follower.refresh(store)
        assert follower.index is not None
        assert follower.index.state() == _rebuilt(store, monkeypatch)
        fresh = Recall()  # a new process: the file (if any), caught up
        assert fresh.refresh(store).state() == _rebuilt(store, monkeypatch)
        fresh.flush(store)  # and what it saves reads back the same

    observed = sessions.observe(store, sid, "a grey heron at dusk on pier 7", now=NOW, actor="t")
    step()
    lesson = lessons.add_lesson(store, "Herons nest in colonies", now=NOW, actor="t")
    slots.set_slot(store, "birds", "herons and egrets", now=NOW, actor="t")
    step()
    lessons.forget(store, lesson.lesson["id"], now=NOW, actor="t")
    slots.replace_in_slot(store, "birds", "egrets", "storks", now=NOW, actor="t")
    step()
    with store.transaction():  # an observation taken out of the middle of a session
        store.delete(f"observations.{sid}", [observed["id"]])
    step()
    forgetting.forget_session(store, sid, now=NOW, actor="t")
    step()


def _head(data: bytes) -> dict:
    import marshal
    import struct

    at, length, _ = struct.unpack("<QQ8s", data[-24:])
    return marshal.loads(data[at : at + length])


def _first_posting(data: bytearray, head: dict, word: bytes) -> int:
    """Where ``word``'s first posting (a slot) starts in the file."""
    start, n = head["sections"]["post.words"]
    row = bytes(data[start : start + n]).split(b"\n").index(word)
    at, n = head["sections"]["post.data.at"]
    offsets = array("q", bytes(data[at : at + n]))
    return head["sections"]["post.data"][0] + offsets[row]


def _offsets(data: bytearray, head: dict, name: str) -> tuple[int, array]:
    at, n = head["sections"][name]
    return at, array("q", bytes(data[at : at + n]))


def _bad_title_bytes(data: bytearray, head: dict) -> None:
    start = head["sections"]["titles"][0]
    _, offsets = _offsets(data, head, "titles.at")
    for at in offsets[:-1]:
        data[start + at] = 0xFF  # no title is UTF-8 any more


def _slot_past_the_end(data: bytearray, head: dict) -> None:
    at = _first_posting(data, head, b"heron")
    data[at : at + 4] = (10**6).to_bytes(4, "little")


def _rows_running_backwards(data: bytearray, head: dict) -> None:
    at, offsets = _offsets(data, head, "titles.at")
    end = offsets[-1]
    for i in range(1, len(offsets) - 1):
        offsets[i] = end - i  # each row but the first ends before it starts
    data[at : at + len(offsets) * 8] = offsets.tobytes()


def _table_codes_out_of_range(data: bytearray, head: dict) -> None:
    at, n = head["numeric"][1]  # each record's table
    data[at : at + n] = (999).to_bytes(4, "little") * (n // 4)


@pytest.mark.parametrize(
    "damage",
    [_bad_title_bytes, _slot_past_the_end, _rows_running_backwards, _table_codes_out_of_range],
)
def test_damage_found_only_in_use_drops_the_file_and_search_answers_from_the_store(
    tmp_path: Path, damage: object
) -> None:
    store, path = _saved(tmp_path)
    expected = search.search(store, "heron pier dawn", now=NOW, recall=Recall())
    data = bytearray(path.read_bytes())
    damage(data, _head(bytes(data)))  # type: ignore[operator]
    _replace(path, bytes(data))
    assert IndexFile(tmp_path / "s").load() is not None  # its own checks pass
    process = Recall()
    assert search.search(store, "heron pier dawn", now=NOW, recall=process) == expected
    assert not path.exists() or path.read_bytes() != bytes(data)  # the damaged file went
    assert process.index is not None and not process.index.from_file  # built from the store
    assert search.search(store, "heron pier dawn", now=NOW, recall=Recall()) == expected


def test_an_index_read_into_memory_keeps_nothing_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mmap

    from memwork.core.services.recall import saved_file

    store, path, _ = _one_note_behind(tmp_path, "an egret beside the heron on the pier")
    with path.open("rb") as src:
        data = mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ)
    index = saved_file.read(data)
    assert index is not None
    process = Recall()
    process.index, process._file = index, IndexFile(tmp_path / "s")
    process.location = store.location
    search.search(store, "heron pier", now=NOW, recall=process)  # views, kept-apart words
    before = index.state()
    saved_file.unmap(index)
    data.close()  # BufferError if any view of the file were left
    assert index.state() == before == _rebuilt(store, monkeypatch)
    hits = search.search(store, "egret heron", now=NOW, recall=process)
    assert hits[0].title.endswith("an egret beside the heron on the pier")


def test_a_save_joins_words_kept_apart_a_slice_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _, _ = _one_note_behind(tmp_path, "an egret beside the heron on the pier at dawn")
    process = Recall()
    process.refresh(store)
    index = process.index
    assert index is not None
    kept_apart = len(index.post.added)
    assert kept_apart >= 3
    slices = 1
    while not snapshot.pack_some(index, 0.0):  # no time at all: one word a slice
        slices += 1
    assert slices > kept_apart and index.post.added == {}
    assert index.state() == _rebuilt(store, monkeypatch)


def test_offsets_read_a_block_at_a_time_give_what_the_mapping_gives(tmp_path: Path) -> None:
    """Offsets and rows read through a ``FileReader`` (a block of offsets, a span of
    text at a time) equal what a mapping of the same bytes gives, at every row and
    across the blocks' edges, in any order."""
    import random

    from memwork.core.services.recall.mapped import Offsets

    rng = random.Random(7)
    texts = ["".join(rng.choice("abcé🦩 ") for _ in range(rng.randint(0, 90))) for _ in range(1500)]
    body = b"".join(encode(t) for t in texts)
    ends = [0]
    for t in texts:
        ends.append(ends[-1] + len(encode(t)))
    at_offsets = 8 + len(body)
    data = b"HEADHEAD" + body + array("q", ends).tobytes()
    path = tmp_path / "rows"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    reader = FileReader(fd, len(data))
    offsets = Offsets(reader, at_offsets, 8 * len(ends))
    rows = TextRows(reader, 8, offsets, data)
    mapped = TextRows(data, 8, memoryview(data)[at_offsets:].cast("q"))
    order = list(range(len(texts)))
    for shuffled in (False, True):
        if shuffled:
            rng.shuffle(order)
        assert [rows[i] for i in order] == [mapped[i] for i in order] == [texts[i] for i in order]
    assert [offsets[i] for i in (0, 511, 512, 513, 1024, -1)] == [
        ends[i] for i in (0, 511, 512, 513, 1024, -1)
    ]
    assert rows.span(510, 515) == mapped.span(510, 515)
    reader.close()
