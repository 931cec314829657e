"""A copy of a store with every stored instant moved: only instants move, the copy is
a whole readable store, and its checkpoints restore the moved state."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from memwork.core.base.clock import parse_instant
from memwork.core.domain import lessons
from memwork.core.services import checkpoints
from memwork.core.storage.rebase import copy_shifted, offset_to, shifted
from memwork.core.storage.store import Store

T0 = parse_instant("2026-11-01T12:00:00Z")
WEEK = timedelta(days=7)


def test_only_stored_instants_move() -> None:
    doc = {
        "created_at": "2026-11-01T12:00:00.000000Z",
        "notes": [
            {"ts": "2026-10-31T23:30:00.000000Z", "text": "seen 2026-11-01T12:00:00.000000Z"}
        ],
        "letta_created_at": "2026-11-01T09:00:00Z",  # another format: the file's own date
        "id": "les_01M3250V00WA1TEPXJB3ZH4H3R",
        "score": 0.5,
        "closed_at": None,
    }
    moved = shifted(doc, WEEK)
    assert moved["created_at"] == "2026-11-08T12:00:00.000000Z"
    assert moved["notes"][0]["ts"] == "2026-11-07T23:30:00.000000Z"
    assert moved["notes"][0]["text"] == doc["notes"][0]["text"]
    assert {k: moved[k] for k in ("letta_created_at", "id", "score", "closed_at")} == {
        k: doc[k] for k in ("letta_created_at", "id", "score", "closed_at")
    }


def test_offset_is_whole_minutes_and_never_past_now() -> None:
    now = T0 + timedelta(days=3, seconds=89)
    assert offset_to("2026-11-01T12:00:00.000000Z", now) == timedelta(days=3, minutes=1)


def test_the_moved_copy_is_a_whole_store_whose_checkpoint_restores(tmp_path: Path) -> None:
    source = Store(tmp_path / "src")
    lessons.add_lesson(source, "Run the canary first", now=T0, actor="test")
    with source.reading():
        (first,) = lessons.all_lessons(source)
    point = checkpoints.create(source, "before", now=T0, actor="test")
    lessons.add_lesson(source, "Pin the image digest", now=T0 + timedelta(hours=1), actor="test")
    source.close()

    copy_shifted(tmp_path / "src", tmp_path / "dst", WEEK)
    copy = Store(tmp_path / "dst", create=False)
    with copy.reading():
        found = {x["content"]: x for x in lessons.all_lessons(copy)}
    assert parse_instant(found["Pin the image digest"]["created_at"]) == T0 + WEEK + timedelta(
        hours=1
    )
    checkpoints.restore(copy, point["id"], now=T0 + WEEK + timedelta(hours=2), actor="test")
    with copy.reading():
        back = lessons.all_lessons(copy)
    assert [x["id"] for x in back] == [first["id"]]
    assert parse_instant(back[0]["created_at"]) == T0 + WEEK
