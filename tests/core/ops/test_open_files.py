"""A program that opens stores again and again (a server per request, a script over
many stores, the CLI run in-process) keeps no file of each open: a closed ``Memory``
and a finished command let go of their store's files, the recall index's mapping
included, whether the store was healthy or not."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.base.errors import MemworkError
from tests.cli_in_process import run

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="Linux's /proc")


def _open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def _before() -> int:
    """The count to compare with, once what earlier tests left is collected (the loops
    after it are never collected: a file kept per open must show as growth)."""
    gc.collect()
    return _open_files()


#: Other threads of the test process may open or close a file meanwhile: a leak of one
#: file per open, over the loops below, is far past this.
SLACK = 4


def _store(db: Path) -> None:
    memory = Memory(db)
    session = memory.start_session(title="t")["id"]
    for n in range(20):
        memory.observe(session, f"note {n} about the canary")
    memory.search("canary")
    memory.close()  # the recall index saved: later opens map it
    assert (db / "cache" / "recall" / "index.bin").exists()


def test_a_closed_memory_keeps_no_file_of_its_store_open(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _store(db)
    before = _before()
    for _ in range(30):
        memory = Memory(db)
        assert memory.search("canary")
        memory.close()
    assert _open_files() - before <= SLACK


def test_a_memory_whose_store_broke_meanwhile_still_lets_its_files_go(tmp_path: Path) -> None:
    import shutil

    base = tmp_path / "base"
    _store(base)
    before = _before()
    for n in range(10):
        db = shutil.copytree(base, tmp_path / f"db-{n}")
        memory = Memory(db)
        memory.search("canary")
        memory.observe(memory.list_sessions()[0]["id"], "one more")
        (db / "store.log").write_bytes(b"")  # cut under it: its close fails
        with pytest.raises(MemworkError):
            memory.close()
    assert _open_files() - before <= SLACK


def test_commands_run_in_one_process_keep_no_file_open(tmp_path: Path) -> None:
    db = tmp_path / "db"
    _store(db)
    before = _before()
    for _ in range(30):
        assert run(db, "search", "canary").returncode == 0
        assert run(db, "context").returncode == 0
    (db / "lessons.json").write_text("{")  # and a refused call, on a damaged store
    for _ in range(10):
        run(db, "search", "canary")
    assert _open_files() - before <= SLACK
