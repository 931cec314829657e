"""Recall after a checkpoint restore: the index follows the restored store, in the
process that restored, in another that kept its index, and in the next CLI call, and
answers as an index built afresh from the restored store does."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memwork import Memory
from memwork.core.services.recall.follow import IndexFile
from memwork.core.services.recall.save_apart import wait_for_saver
from tests.conftest import memwork_process

EARLY = ("heron weir dawn", "alder roots otter", "mill race kingfisher")
QUESTIONS = ("heron", "otter roots", "kingfisher mill", "lamplighter", "heron lamplighter")


def _fill(memory: Memory) -> str:
    """Three early sessions, a checkpoint, then thirty later sessions; the checkpoint."""
    for n, words in enumerate(EARLY):
        sid = memory.start_session(title=f"early {n}")["id"]
        for k in range(4):
            memory.observe(sid, f"{words} seen on walk {k}")
    point = memory.create_checkpoint(description="three sessions")["id"]
    for n in range(30):
        sid = memory.start_session(title=f"later {n}")["id"]
        for k in range(3):
            memory.observe(sid, f"lamplighter {n} lit lamp {k} near the heron pond")
    return str(point)


def _answers(memory: Memory) -> dict[str, list[str]]:
    return {q: [h["title"] for h in memory.search(q, limit=20)] for q in QUESTIONS}


def _only_early(answers: dict[str, list[str]]) -> bool:
    """Every answer is an early note, and "heron" finds the four that hold it first."""
    titles = [t for found in answers.values() for t in found]
    return (
        bool(titles)
        and not any("lamplighter" in t for t in titles)
        and all(EARLY[0] in t for t in answers["heron"][:4])
    )


def _built_afresh(db: Path, tmp_path: Path) -> dict[str, list[str]]:
    """What an index built from the store as it is now answers."""
    copy = tmp_path / "afresh"
    shutil.copytree(db, copy, ignore=shutil.ignore_patterns(".lock", "cache"))
    fresh = Memory(str(copy))
    try:
        return _answers(fresh)
    finally:
        fresh.close()


def test_the_restoring_process_and_another_answer_as_a_fresh_build(tmp_path: Path) -> None:
    db = tmp_path / "s"
    restoring, other = Memory(str(db)), Memory(str(db))
    try:
        point = _fill(restoring)
        assert len(restoring.search("lamplighter", limit=50)) == 50  # both indexes live
        assert len(other.search("lamplighter", limit=50)) == 50
        restoring.restore_checkpoint(point)
        expected = _built_afresh(db, tmp_path)
        assert _only_early(expected)
        assert _answers(restoring) == expected  # heard its own commit
        assert _answers(other) == expected  # found the tables' versions changed
    finally:
        restoring.close()
        other.close()


def test_a_cli_search_after_a_cli_restore_reads_the_restored_store(tmp_path: Path) -> None:
    db = tmp_path / "s"
    memory = Memory(str(db))
    try:
        point = _fill(memory)
    finally:
        memory.close()
    assert "lamplighter" in memwork_process(db, "search", "lamplighter")  # an index file saved
    wait_for_saver(IndexFile(db), most=60.0)
    memwork_process(db, "checkpoint", "restore", point)
    wait_for_saver(IndexFile(db), most=60.0)
    found = {
        q: [
            h["title"]
            for h in json.loads(memwork_process(db, "--json", "search", q, "--limit", "20"))
        ]
        for q in QUESTIONS
    }
    assert found == _built_afresh(db, tmp_path)
    assert _only_early(found)
