"""A CLI call that owes the next one an index save leaves it to a child it does not
wait for: the call ends with its answer, the file lands after."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memwork.core.services.recall.save_apart import LOCK_NAME
from tests.conftest import memwork_process

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the system cannot fork")

# A caller whose save sleeps, then leaves a mark: what the child did, and when.
_SCRIPT = """
import sys, time
from pathlib import Path
from types import SimpleNamespace
from memwork.core.services.recall.save_apart import save_apart

folder, mark, pause = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])

class Owed:
    index_file = SimpleNamespace(
        folder=folder, make_folders=lambda: folder.mkdir(exist_ok=True) or True
    )

    def settle(self, store):
        time.sleep(pause)
        mark.write_text("saved by %d" % __import__("os").getpid())

print("answered by %d" % __import__("os").getpid(), flush=True)
print("apart" if save_apart(None, Owed()) else "here", flush=True)
"""


def _call(folder: Path, mark: Path, pause: float, **env: str) -> tuple[list[str], float]:
    """Run the caller above; its output lines and how long it took to end."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(folder), str(mark), str(pause)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env={**os.environ, **env},
    )
    return done.stdout.splitlines(), time.monotonic() - started


def _wait_for(path: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.05)
    return path.exists()


def test_the_call_ends_with_its_answer_and_the_child_saves_after(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    lines, took = _call(tmp_path / "index", mark, 3)
    # The caller read the call's output until it closed: the child, still saving,
    # holds none of its streams.
    assert lines[0].startswith("answered by ") and lines[1:] == ["apart"]
    assert took < 2.5 and not mark.exists()
    assert _wait_for(mark, 30)
    caller = lines[0].removeprefix("answered by ")
    assert mark.read_text().startswith("saved by ") and mark.read_text() != f"saved by {caller}"


def test_a_child_that_finds_another_saving_leaves_it_the_work(tmp_path: Path) -> None:
    folder, mark = tmp_path / "index", tmp_path / "mark"
    folder.mkdir()
    held = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)  # another saver at work
    try:
        lines, _ = _call(folder, mark, 0)
        assert lines[1:] == ["apart"]
        time.sleep(1.5)
        assert not mark.exists()
    finally:
        os.close(held)


def test_turned_off_the_call_saves_before_it_ends(tmp_path: Path) -> None:
    lines, _ = _call(tmp_path / "index", tmp_path / "mark", 0, MEMWORK_SAVE_APART="0")
    assert lines[1:] == ["here"]  # the caller saves itself


@pytest.mark.parametrize("apart", ["1", "0"])
def test_a_cli_search_that_built_the_index_saves_it_either_way(tmp_path: Path, apart: str) -> None:
    db = tmp_path / "s"

    def memwork(*args: str) -> str:
        return memwork_process(db, *args, MEMWORK_SAVE_APART=apart)

    sid = memwork("session", "start", "--title", "heron watch").strip()
    memwork("observe", "--session", sid, "a grey heron on pier 7 at dawn")
    found = memwork("search", "heron pier")
    assert "a grey heron on pier 7" in found
    saved = db / "cache" / "recall" / "index.bin"
    if apart == "0":
        assert saved.exists()  # written before the call ended
    assert _wait_for(saved, 60)
    # Only a child saving apart takes the saver's lock.
    assert (saved.parent / LOCK_NAME).exists() == (apart == "1")
    assert "a grey heron on pier 7" in memwork("search", "heron pier")


def test_an_index_folder_that_is_a_link_gets_nothing_from_the_child(tmp_path: Path) -> None:
    """The store's ``cache/recall`` replaced by a link to elsewhere: no save, no saver's
    lock, nothing made through it (memwork follows no link in a store)."""
    db, elsewhere = tmp_path / "s", tmp_path / "elsewhere"
    elsewhere.mkdir()

    def memwork(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memwork", "--db", str(db), *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    sid = memwork("session", "start", "--title", "t").strip()
    memwork("observe", "--session", sid, "a heron")
    (db / "cache").mkdir(exist_ok=True)
    (db / "cache" / "recall").symlink_to(elsewhere, target_is_directory=True)
    assert "a heron" in memwork("search", "heron")
    time.sleep(1.5)  # a child, had one saved, would have landed its file by now
    assert list(elsewhere.iterdir()) == []
