"""`E` edits the selected lesson or slot in $EDITOR and saves it back through the same
checks as the CLI; a refused edit says why, saves nothing and keeps the typed text."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

import pytest

from memwork.core.domain import lessons, slots
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import (
    SIZE,
    capture_toasts,
    open_pane,
    run,
    settle,
    wait_until,
)

EDITOR = """
import os, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
mode, words = os.environ["EDIT_MODE"], os.environ.get("EDIT_WORDS", "")
new = {"replace": words + "\\n", "append": text.rstrip("\\n") + words + "\\n", "empty": ""}[mode]
open(path, "w", encoding="utf-8").write(new)
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A scripted $EDITOR: ``editor(mode, words)`` says what it does to the file next."""
    script = tmp_path / "editor.py"
    script.write_text(EDITOR)
    # The text of a refused edit is kept on purpose: here, not in the machine's /tmp.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")

    def set_to(mode: str, words: str = "") -> None:
        monkeypatch.setenv("EDIT_MODE", mode)
        monkeypatch.setenv("EDIT_WORDS", words)

    return set_to


def _kept_file(toasts: list[str]) -> Path:
    found = re.search(r"kept in (\S+)", " ".join(toasts))
    assert found, toasts
    return Path(found.group(1))


@pytest.mark.slow
def test_E_edits_the_selected_lesson_and_an_empty_text_is_refused(
    demo_app, demo_path: Path, editor
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            toasts = capture_toasts(app)
            await open_pane(pilot, "lessons")
            chosen = app.query_one("#lessons", VirtualTable).cursor_key
            before = lessons.get_lesson(Store(demo_path), chosen, app.service.now)

            editor("empty")
            await pilot.press("E")
            await settle(pilot)
            assert any("content" in t and "must not be empty" in t for t in toasts), toasts
            assert _kept_file(toasts).exists()
            same = lessons.get_lesson(Store(demo_path), chosen, app.service.now)
            assert same["content"] == before["content"]

            editor("replace", "Watch the canary for 20 minutes before promoting")
            await pilot.press("E")
            await wait_until(
                pilot,
                lambda: (
                    lessons.get_lesson(Store(demo_path), chosen, app.service.now)["content"]
                    != before["content"]
                ),
            )
            after = lessons.get_lesson(Store(demo_path), chosen, app.service.now)
            assert after["content"] == "Watch the canary for 20 minutes before promoting"
            assert before["content"] in after["wordings"]  # the old text is kept
            await settle(pilot)
            assert "Lesson saved" in toasts

    run(scenario)


@pytest.mark.slow
def test_E_edits_a_slot_within_its_limit(demo_app, demo_path: Path, editor) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            toasts = capture_toasts(app)
            await open_pane(pilot, "slots")
            label = app.screen.focused.cursor_key
            store_slot = next(s for s in slots.list_slots(Store(demo_path)) if s["id"] == label)
            label = store_slot["label"]
            room = int(store_slot["limit"]) - len(store_slot["content"])

            editor("append", " and more" * (room // 9 + 50))  # over the limit
            await pilot.press("E")
            await settle(pilot)
            assert any("limit" in t for t in toasts), toasts
            assert _kept_file(toasts).read_text().startswith(store_slot["content"])
            assert slots.get_slot(Store(demo_path), label)["content"] == store_slot["content"]

            editor("append", "\nChecked by hand.")
            await pilot.press("E")
            await wait_until(
                pilot,
                lambda: slots.get_slot(Store(demo_path), label)["content"].endswith(
                    "Checked by hand."
                ),
            )
            await settle(pilot)
            assert any(t.startswith(f"Saved {label}") for t in toasts), toasts

    run(scenario)
