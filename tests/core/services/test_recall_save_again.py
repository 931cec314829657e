"""A CLI write that takes text out of the store removes the recall index file with it;
a child saves it again from the removed file, caught up, so the next search reads a
file (without the text) instead of building the index again. A search that finds no
file while such a child saves waits for it."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.recall.follow import IndexFile
from memwork.core.services.recall.save_apart import LOCK_NAME, wait_for_saver
from memwork.core.services.recall.search import kept_recall
from tests.conftest import NOW, memwork_process

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the system cannot fork")

SECRET = "zanzibarquokka"  # a word no other note holds


def _cli(db: Path, *args: str, **env: str) -> str:
    return memwork_process(db, *args, **env)


def _saved(db: Path) -> Path:
    return db / "cache" / "recall" / IndexFile.NAME


def _inode(path: Path, seconds: float = 60.0) -> int | None:
    """The file's inode once it is there (None: not within ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            return path.stat().st_ino
        except FileNotFoundError:
            time.sleep(0.02)
    return None


def _without_secret(path: Path) -> bool:
    """Whether the index file is there and holds no trace of the secret word."""
    try:
        return SECRET.encode() not in path.read_bytes()
    except FileNotFoundError:
        return False


def _saver_done(db: Path) -> None:
    """Wait until no child holds the index folder's saver lock."""
    wait_for_saver(IndexFile(db), most=60.0)


def _store(db: Path) -> str:
    """Three notes, one holding the secret word, and their index saved; the secret's id."""
    sid = _cli(db, "session", "start", "--title", "river walk").strip()
    _cli(db, "observe", "--session", sid, "a heron stood on the weir at dawn")
    _cli(db, "observe", "--session", sid, f"the {SECRET} nests under the alder roots")
    _cli(db, "observe", "--session", sid, "kingfisher seen twice by the mill race")
    found = _cli(db, "--json", "search", SECRET)
    assert SECRET in found
    assert _inode(_saved(db)) is not None
    _saver_done(db)
    import json

    return next(h["id"] for h in json.loads(found) if SECRET in h["title"])


def test_a_forget_saves_the_index_again_without_the_forgotten_words(tmp_path: Path) -> None:
    db = tmp_path / "s"
    secret = _store(db)
    before = _inode(_saved(db))
    assert SECRET.encode() in _saved(db).read_bytes()
    _cli(db, "forget", "observation", secret)
    after = _inode(_saved(db))
    assert after is not None and after != before  # a new file, landed by the child
    _saver_done(db)
    assert SECRET.encode() not in _saved(db).read_bytes()
    assert b"kingfisher" in _saved(db).read_bytes()
    # The next search reads that file: it neither builds the index nor saves one.
    assert "kingfisher" in _cli(db, "search", "kingfisher mill")
    assert SECRET not in _cli(db, "search", SECRET)
    _saver_done(db)
    assert _inode(_saved(db)) == after


def test_an_import_that_replaces_a_note_saves_the_index_again(tmp_path: Path) -> None:
    import json

    db = tmp_path / "s"
    _store(db)
    exported = tmp_path / "export.json"
    _cli(db, "export", str(exported))
    data = json.loads(exported.read_text())
    for note in data["tables"]["observations"]:
        note["content"] = note["content"].replace(SECRET, "wombatfern")
    exported.write_text(json.dumps(data))
    before = _inode(_saved(db))
    _cli(db, "import", str(exported), "--on-conflict", "replace")
    after = _inode(_saved(db))
    assert after is not None and after != before  # landed by the import's child
    _saver_done(db)
    saved = _saved(db).read_bytes()
    assert SECRET.encode() not in saved and b"wombatfern" in saved
    assert "wombatfern" in _cli(db, "search", "wombatfern")
    _saver_done(db)
    assert _inode(_saved(db)) == after  # the search read it: nothing built, nothing saved


def test_two_forgets_in_a_row_leave_a_file_without_either(tmp_path: Path) -> None:
    db = tmp_path / "s"
    secret = _store(db)
    sid = secret.split("/")[0]
    other = _cli(db, "--json", "observe", "--session", sid, "the second wombatfern note")
    import json

    second = f"{sid}/{json.loads(other)['id']}"
    assert "wombatfern" in _cli(db, "search", "wombatfern")
    _saver_done(db)
    # The second forget's commit lands while the first one's child may still be saving.
    _cli(db, "forget", "observation", secret)
    _cli(db, "forget", "observation", second)
    assert _inode(_saved(db)) is not None
    _saver_done(db)
    assert _inode(_saved(db)) is not None
    data = _saved(db).read_bytes()
    assert SECRET.encode() not in data and b"wombatfern" not in data
    assert b"kingfisher" in data


def test_turned_off_the_forget_leaves_the_next_search_to_build(tmp_path: Path) -> None:
    db = tmp_path / "s"
    secret = _store(db)
    _cli(db, "forget", "observation", secret, MEMWORK_SAVE_APART="0")
    time.sleep(0.5)
    assert not _saved(db).exists()
    assert "kingfisher" in _cli(db, "search", "kingfisher mill")  # builds, then saves


def test_a_write_that_removes_nothing_keeps_the_file(tmp_path: Path) -> None:
    db = tmp_path / "s"
    _store(db)
    before = _inode(_saved(db))
    sid = _cli(db, "session", "start", "--title", "later").strip()
    _cli(db, "observe", "--session", sid, "a dipper bobbing on the stones")
    _saver_done(db)
    assert _inode(_saved(db)) == before


def test_a_search_that_finds_a_child_saving_waits_for_its_file(tmp_path: Path) -> None:
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="river walk")["id"]
    memory.observe(sid, "a heron stood on the weir at dawn")
    memory.search("heron")
    memory.close()
    saved = _saved(db)
    aside = tmp_path / "index.bin"
    shutil.copy2(saved, aside)
    saved.unlink()
    # The test plays the child: it holds the saver's lock while the file is missing.
    fd = os.open(saved.parent / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    memory = Memory(db, clock=lambda: NOW)
    hits: list[object] = []
    searching = threading.Thread(target=lambda: hits.extend(memory.search("heron")))
    searching.start()
    try:
        time.sleep(0.5)
        assert searching.is_alive()  # waiting for the "child", not building
        os.replace(aside, saved)  # the child lands its file ...
        landed = saved.stat().st_ino
        fcntl.flock(fd, fcntl.LOCK_UN)  # ... and ends
        searching.join(60)
        assert not searching.is_alive()
        assert hits and "heron" in str(hits[0])
        index = kept_recall(memory.store)[1].index
        assert index is not None and index.source is not None
        assert index.source[1] == landed  # read from the landed file, not built
    finally:
        os.close(fd)
        memory.close()


def test_waiting_for_a_saver_ends_when_its_lock_is_let_go_or_the_time_is_up(
    tmp_path: Path,
) -> None:
    (tmp_path / "s").mkdir()
    file = IndexFile(tmp_path / "s")
    assert wait_for_saver(file, most=1.0) is False  # no saver has ever run
    assert file.make_folders()
    fd = os.open(file.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        assert wait_for_saver(file, most=1.0) is False  # nobody holds it
        fcntl.flock(fd, fcntl.LOCK_EX)
        started = time.monotonic()
        assert wait_for_saver(file, most=0.3) is True
        assert 0.3 <= time.monotonic() - started < 5
        threading.Timer(0.3, lambda: fcntl.flock(fd, fcntl.LOCK_UN)).start()
        started = time.monotonic()
        assert wait_for_saver(file, most=30) is True
        assert time.monotonic() - started < 10
    finally:
        os.close(fd)


def test_a_long_lived_process_that_forgets_saves_its_index_again_without_a_search(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    try:
        sid = memory.start_session(title="river walk")["id"]
        memory.observe(sid, "a heron stood on the weir at dawn")
        secret = memory.observe(sid, f"the {SECRET} nests under the alder roots")["id"]
        memory.observe(sid, "kingfisher seen twice by the mill race")
        memory.search("heron")  # builds the index: the background thread saves it
        first = _inode(_saved(db))
        assert first is not None
        assert SECRET.encode() in _saved(db).read_bytes()
        memory.forget("observation", f"{sid}/{secret}")
        # No search since: the commit told the kept index, whose thread saves it again.
        # (By what it holds: the file system may give the new file the old one's inode.)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not _without_secret(_saved(db)):
            time.sleep(0.02)
        assert _without_secret(_saved(db))
        assert b"kingfisher" in _saved(db).read_bytes()
    finally:
        memory.close()
