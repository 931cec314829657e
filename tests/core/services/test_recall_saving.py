"""When the recall index file is written: never inside a search; by a background thread
or at close in a long-lived process; after the answer in the CLI; and a process killed
before its save loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.recall import snapshot
from memwork.core.services.recall.follow import IndexFile
from memwork.core.services.recall.search import kept_recall, saver_of
from tests.conftest import NOW

ROOT = Path(__file__).resolve().parents[3]


def _index(db: Path) -> Path:
    return db / "cache" / "recall" / IndexFile.NAME


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except FileNotFoundError:
        return None
    return found.st_ino, found.st_mtime_ns


def _changes(path: Path, since: tuple[int, int] | None, timeout: float = 20.0) -> bool:
    """Wait until ``path`` is another file than ``since`` (a save landed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _stat(path) not in (None, since):
            return True
        time.sleep(0.01)
    return False


def _saved_titles(db: Path) -> list[str]:
    index = IndexFile(db).load()
    assert index is not None
    return [index.titles[s] for s in range(len(index.titles)) if index.kinds[s] >= 0]


def test_a_search_in_a_long_lived_memory_never_writes_the_index_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from memwork.core.services.recall.follow import Reservation

    # Who writes the file: a save the background thread began before a search may land
    # while it runs (it writes outside the lock), so the file's stat cannot tell; the
    # thread that writes it can.
    writers: list[str] = []
    real_land = Reservation.land

    def land(self: Reservation, *args: object, **kwargs: object) -> bool:
        writers.append(threading.current_thread().name)
        return real_land(self, *args, **kwargs)

    monkeypatch.setattr(Reservation, "land", land)
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="weir")["id"]
    memory.observe(sid, "a heron on the weir")
    recall = kept_recall(memory.store)[1]
    recall.save_after = 0.05  # a save is due almost at once after each write
    memory.search("heron")  # builds the index: the background thread saves it
    assert _changes(_index(db), None)
    me = threading.current_thread().name
    for n in range(5):
        memory.observe(sid, f"kingfisher number {n} by the sluice")
        time.sleep(0.06)  # the save is due by the next search
        before = _stat(_index(db))
        hits = memory.search(f"kingfisher number {n}")
        assert me not in writers  # the search answered without saving
        assert hits[0]["title"].endswith(f"kingfisher number {n} by the sluice")
        assert _changes(_index(db), before)  # the background thread saved it after
        assert any(f"kingfisher number {n}" in t for t in _saved_titles(db))
    assert writers  # and it did save, from its own thread
    memory.close()


def _settled(saver: object, count: str, at_least: int) -> None:
    deadline = time.monotonic() + 20
    while getattr(saver, count) < at_least and time.monotonic() < deadline:
        time.sleep(0.01)
    assert getattr(saver, count) >= at_least


def test_an_index_built_in_a_long_lived_memory_gives_way_to_the_file_it_saved(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="weir")["id"]
    for n in range(40):
        memory.observe(sid, f"heron number {n} fishing below the weir at dawn")
    lock, recall = kept_recall(memory.store)
    before = memory.search("heron weir dawn", limit=20)
    assert recall.index is not None and recall.index.titles.base is None  # built here
    saver = saver_of(memory.store)
    assert saver is not None
    _settled(saver, "landed", 1)
    with lock:
        index = recall.index
    # The saved file took the index's place: its texts are read from the file.
    assert saver.adopted == 1 and index.titles.base is not None
    assert memory.search("heron weir dawn", limit=20) == before
    # Writes go on as before, beside the file's bytes.
    memory.observe(sid, "an otter under the weir")
    assert memory.search("otter")[0]["title"].endswith("an otter under the weir")
    memory.close()
    assert any("otter" in t for t in _saved_titles(db))


def test_an_index_changed_while_it_was_saved_keeps_its_place(tmp_path: Path) -> None:
    from memwork.core.services.recall import saved_file

    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="weir")["id"]
    memory.observe(sid, "a heron on the weir")
    lock, recall = kept_recall(memory.store)
    memory.search("heron")
    saver = saver_of(memory.store)
    assert saver is not None
    _settled(saver, "landed", 1)
    with lock:
        index = recall.index
        copy = snapshot.copy_of(index)
        data = saved_file.to_bytes(copy)
    memory.observe(sid, "an otter under the bridge")
    memory.search("otter")  # the index caught up: no longer what the copy held
    with lock:
        assert recall.index is index
        assert not recall.adopt(copy, data)  # type: ignore[arg-type]
        assert recall.index is index
    memory.close()


def test_close_saves_what_the_background_thread_had_not(tmp_path: Path) -> None:
    db = tmp_path / "s"
    memory = Memory(db, clock=lambda: NOW)
    sid = memory.start_session(title="weir")["id"]
    memory.observe(sid, "a heron on the weir")
    memory.search("heron")
    assert _changes(_index(db), None)  # built: saved soon, in the background
    saved = _stat(_index(db))
    memory.observe(sid, "an otter under the bridge")
    assert memory.search("otter")
    time.sleep(0.2)
    assert _stat(_index(db)) == saved  # one write: not due for 30 s
    memory.close()
    assert _stat(_index(db)) != saved
    assert any("otter" in t for t in _saved_titles(db))


def test_the_cli_saves_an_index_it_built_after_the_answer(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("observe", "--session", "s1", "a heron on the weir").code == 0
    found = cli("search", "heron", "--json")
    assert found.code == 0 and found.json()[0]["title"].endswith("a heron on the weir")
    assert any("a heron on the weir" in t for t in _saved_titles(db))
    saved = _stat(_index(db))
    assert cli("observe", "--session", "s1", "an otter under the bridge").code == 0
    assert cli("search", "otter", "--json").json()[0]["title"].endswith("under the bridge")
    assert _stat(_index(db)) == saved  # one commit behind: left to the next process


def test_a_script_that_never_closes_its_memory_saves_the_index_it_built(
    tmp_path: Path,
) -> None:
    db = tmp_path / "s"
    with Memory(db, clock=lambda: NOW) as memory:
        sid = memory.start_session(title="weir")["id"]
        memory.observe(sid, "a heron on the weir")
    script = "import sys; from memwork import Memory; print(Memory(sys.argv[1]).search('heron'))"
    done = subprocess.run(
        [sys.executable, "-c", script, str(db)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "a heron on the weir" in done.stdout
    assert any("a heron on the weir" in t for t in _saved_titles(db))  # saved at exit
    assert not [p for p in _index(db).parent.iterdir() if p.suffix == ".tmp"]


_CHILD = textwrap.dedent(
    """
    import sys, time
    from memwork import Memory
    from memwork.core.services.recall.search import kept_recall

    memory = Memory(sys.argv[1])
    kept_recall(memory.store)[1].save_after = float(sys.argv[3])
    sid = sys.argv[2]
    memory.search("heron")
    n = int(sys.argv[5])
    while True:
        memory.observe(sid, f"kingfisher number {n} by the sluice")
        assert memory.search(f"kingfisher number {n}")
        print(n, flush=True)
        n += 1
        if n >= int(sys.argv[4]):
            time.sleep(60)
    """
)


def _killed_after(
    db: Path, sid: str, save_after: float, writes: int, seconds: float, start: int = 0
) -> int:
    """Run a long-lived process that writes notes ``start``, ``start + 1``... and
    searches after each; SIGKILL it after ``seconds`` (or once the note before
    ``writes`` is written); returns the next note's number."""
    args = [str(db), sid, str(save_after), str(writes), str(start)]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    done = start - 1
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline and done < writes - 1:
            line = child.stdout.readline()
            if not line:
                break
            done = int(line)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    return done + 1


def _prepared(tmp_path: Path) -> tuple[Path, str]:
    db = tmp_path / "s"
    with Memory(db, clock=lambda: NOW) as memory:
        sid = memory.start_session(title="weir")["id"]
        memory.observe(sid, "a heron on the weir")
        memory.search("heron")  # built and saved (on close at the latest)
    return db, sid


def test_a_process_killed_before_its_save_loses_nothing(tmp_path: Path) -> None:
    db, sid = _prepared(tmp_path)
    saved = _index(db).read_bytes()
    written = _killed_after(db, sid, save_after=3600.0, writes=5, seconds=60.0)
    assert written == 5
    assert _index(db).read_bytes() == saved  # it caught up in memory, never saved
    with Memory(db, clock=lambda: NOW) as memory:
        hits = memory.search("kingfisher sluice", limit=20)
        assert sum("kingfisher number" in h["title"] for h in hits) == 5
        assert kept_recall(memory.store)[1].changes > 0  # found the file behind, caught up


@pytest.mark.slow
def test_a_process_killed_while_saving_in_the_background_loses_nothing(tmp_path: Path) -> None:
    db, sid = _prepared(tmp_path)
    written = 0
    for seconds in (0.4, 0.8, 1.2):  # a save is due after every write: killed mid-save
        begun = written
        # At most 60 notes a run: a session keeps its last 100.
        written = _killed_after(db, sid, 0.001, begun + 60, seconds, start=begun)
        assert IndexFile(db).load() is not None  # the file is whole (the old or a new one)
        with Memory(db, clock=lambda: NOW) as memory:
            hits = memory.search("kingfisher sluice", limit=1000, session=sid)
            found = {h["title"].rsplit(": ", 1)[-1] for h in hits}
            assert found >= {f"kingfisher number {n} by the sluice" for n in range(begun, written)}
            sid = memory.start_session(title="weir again")["id"]
    assert written > 0


def test_a_long_lived_process_builds_its_first_index_in_a_thread_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So the build's objects never come from the caller's heap (see first_catch_up);
    a caller holding the store's lock builds in place, and a failure reaches it."""
    import threading

    from memwork.core.services.recall import search as search_mod
    from memwork.core.services.recall.follow import Recall

    threads: list[str] = []
    refresh = Recall.refresh

    def noted(self: Recall, store: object) -> object:
        threads.append(threading.current_thread().name)
        return refresh(self, store)  # type: ignore[arg-type]

    monkeypatch.setattr(Recall, "refresh", noted)
    memory = Memory(tmp_path / "s", clock=lambda: NOW)
    sid = memory.start_session(title="weir")["id"]
    memory.observe(sid, "a heron on the weir")
    assert memory.search("heron")[0]["title"].endswith("a heron on the weir")
    assert threads[0] == "memwork-recall-build"
    assert set(threads[1:]) == {threading.current_thread().name}

    lock, recall = kept_recall(memory.store)
    threads.clear()
    recall.index = None  # as if never built: built again, in place under the lock
    with memory.store.reading():
        search_mod.first_catch_up(memory.store, recall)
    assert threads == [threading.current_thread().name]

    def broken(self: Recall, store: object) -> object:
        raise OSError("the disk went away")

    monkeypatch.setattr(Recall, "refresh", broken)
    recall.index = None
    with pytest.raises(OSError, match="the disk went away"):
        search_mod.first_catch_up(memory.store, recall)
    memory.close()


def _mapped_removed_files(db: Path) -> list[str]:
    """Files of ``db``'s index folder this process still maps after their removal."""
    maps = Path("/proc/self/maps")
    if not maps.exists():
        return []
    folder = str(db / "cache" / "recall")
    lines = maps.read_text().splitlines()
    return [line for line in lines if folder in line and "(deleted)" in line]


def test_a_forget_leaves_no_copy_of_the_text_in_a_file_this_process_maps(tmp_path: Path) -> None:
    db = tmp_path / "s"
    first = Memory(db, clock=lambda: NOW)
    first.add_lesson("Plovers nest on shingle")
    first.add_lesson("Herons fish at dawn")
    first.search("plover")
    first.close()  # saves the index file
    assert _index(db).exists()

    memory = Memory(db, clock=lambda: NOW)  # a long-lived process: reads the file in place
    assert memory.search("plover")[0]["title"].endswith("Plovers nest on shingle")
    lock, recall = kept_recall(memory.store)
    with lock:
        assert recall.index is not None and recall.index.titles.base is not None
    plover = memory.search("plover")[0]["id"]
    memory.forget_lesson(plover)  # takes text out of the store: the file is removed
    assert not _index(db).exists()
    assert memory.search("plover") == []
    # What the process still needs was read into memory; the removed file is let go. (A
    # background save may since have written a new file and mapped that one in its place.)
    assert _mapped_removed_files(db) == []
    assert memory.search("heron")[0]["title"].endswith("Herons fish at dawn")
    memory.close()
    assert not any("Plovers" in t for t in _saved_titles(db))
