"""`memwork --demo` with an agent watching: the copy names itself, and the workbench
and the agent read one clock (the copy's timestamps are moved to now)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from textual.widgets import TextArea

from memwork.core.base.clock import parse_instant
from memwork.core.domain import lessons
from memwork.core.storage.copy import read_whole
from memwork.core.storage.store import Store
from memwork.tui.app import make_app
from memwork.tui.launch import demo_copy
from tests.tui.conftest import DEMO_NOW, open_pane, run, screen_text, settle, wait_until

#: A week and a bit after the demo was written; an agent's clock reads the same.
LATER = "2026-11-29T08:30:00Z"
MOVED = parse_instant(LATER) - parse_instant(DEMO_NOW)


@pytest.fixture
def copy(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo's temporary copy as `memwork --demo` makes it, opened at LATER."""
    monkeypatch.setenv("MEMWORK_NOW", LATER)
    made = demo_copy()
    yield made
    shutil.rmtree(made.parent, ignore_errors=True)


def _cli(db: Path, *args: str) -> str:
    """Run the memwork CLI as an agent would, pointed at the copy, on the same clock."""
    done = subprocess.run(
        [sys.executable, "-m", "memwork", *args],
        env={"MEMWORK_DB": str(db), "MEMWORK_NOW": LATER, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_copy_reads_as_written_now(copy: Path, demo_path: Path) -> None:
    original, moved = Store(demo_path), Store(copy)
    with original.reading(), moved.reading():
        assert moved.get("meta", "demo")["now"] == "2026-11-29T08:30:00.000000Z"
        before = {x["id"]: x for x in lessons.all_lessons(original)}
        after = {x["id"]: x for x in lessons.all_lessons(moved)}
    assert before.keys() == after.keys()
    for key, lesson in before.items():
        for field in ("created_at", "updated_at"):
            moved_by = parse_instant(after[key][field]) - parse_instant(lesson[field])
            assert moved_by == MOVED, (key, field)
        assert after[key]["content"] == lesson["content"]
    # A checkpoint restores the same ages: its snapshot moved with the tables.
    _tables, snapshots = read_whole(moved)
    assert snapshots
    for snapshot in snapshots.values():
        stamps = [d["created_at"] for d in snapshot["lessons"][1].values()]
        assert stamps and max(parse_instant(s) for s in stamps) <= parse_instant(LATER)
        assert min(parse_instant(s) for s in stamps) > parse_instant(DEMO_NOW) - timedelta(days=400)


@pytest.mark.slow
def test_an_agent_writing_to_the_demo_is_seen_at_its_own_time(
    copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", LATER)
    session = "ses_01M3250V00WA1TEPXJB3ZH4H8V"  # the demo's active session, on top

    async def scenario() -> None:
        app = make_app(copy, title_suffix="demo copy", show_location=True, poll=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await settle(pilot)
            assert "demo copy" in app.sub_title and copy.name in app.sub_title
            await pilot.press("question_mark")
            await settle(pilot)
            assert f"MEMWORK_DB={copy}" in screen_text(app).replace("\n", "")
            await pilot.press("escape")

            _cli(copy, "observe", "--session", session, "checked the canary dashboard")
            app.store_changed()
            await wait_until(pilot, lambda: "checked the canary" in screen_text(app))
            text = screen_text(app)
            assert "in 1w" not in text and "in 8d" not in text

            await open_pane(pilot, "context")
            await pilot.pause(0.3)
            await settle(pilot)
            shown = app.query_one("#context-preview", TextArea).text
            assert shown == _cli(copy, "context").rstrip("\n")

    run(scenario)
