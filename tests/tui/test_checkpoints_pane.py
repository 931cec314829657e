"""The Checkpoints pane, driven by real key presses on the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from memwork.core.base.clock import parse_instant
from memwork.core.domain import lessons
from memwork.core.services import checkpoints
from memwork.core.storage.store import Store
from memwork.tui.panes.checkpoints import FIRST_N, field_words
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import DEMO_NOW, SIZE, capture_toasts, open_pane, run, screen_text, settle

NOW = parse_instant(DEMO_NOW)


def _checkpoints(path: Path) -> list[dict]:
    return checkpoints.list_checkpoints(Store(path))


def _lesson_contents(path: Path) -> set[str]:
    store = Store(path)
    with store.reading():
        return {x["content"] for x in lessons.all_lessons(store)}


def _newest_first(path: Path) -> list[dict]:
    """The checkpoints in the pane's order: newest first."""
    return _checkpoints(path)[::-1]


def _diff_now(path: Path, checkpoint_id: str) -> dict[str, dict]:
    """Per table, what changed from the checkpoint to now (``memwork checkpoint diff``)."""
    return checkpoints.diff(Store(path), checkpoint_id)["tables"]


def assert_diff_shown(text: str, changes: dict[str, dict]) -> None:
    """The detail says what the core's diff says: nothing, or each table's counts."""
    changed_tables = [t for t, c in changes.items() if c["added"] or c["removed"] or c["changed"]]
    if not changed_tables:
        assert "No changes since this checkpoint" in text
        return
    assert "Changes since this checkpoint" in text
    for table in changed_tables:
        change = changes[table]
        assert table in text
        for sign, kind in (("+", "added"), ("−", "removed"), ("~", "changed")):
            if change[kind]:
                assert f"{sign}{len(change[kind])} {kind}" in text
        for kind in ("added", "removed"):
            if len(change[kind]) > FIRST_N:  # big diffs are summarised
                assert f"… and {len(change[kind]) - FIRST_N} more {kind}" in text
        if change["changed"]:
            assert "changed: " in text


def _detail(app) -> str:
    """The whole diff text, also the part below the fold of its scroll view."""
    return str(app.query_one("#checkpoint-detail", Static).render())


@pytest.mark.slow
def test_checkpoints_list_and_diff_against_now(demo_app, demo_path: Path) -> None:
    listed = _newest_first(demo_path)
    assert len(listed) >= 2  # the demo has an older checkpoint to compare with

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "checkpoints")
            text = screen_text(app)
            assert f"{len(listed)} checkpoints" in text
            for checkpoint in listed:
                assert checkpoint["description"] in text
                assert str(sum(checkpoint["counts"].values())) in text  # record counts
            newest, older = listed[0], listed[1]
            assert newest["id"] in text  # the newest is selected, its diff below
            assert_diff_shown(_detail(app), _diff_now(demo_path, newest["id"]))
            await pilot.press("down")  # the older one: more has changed since
            await settle(pilot)
            text = screen_text(app)
            assert older["id"] in text
            changes = _diff_now(demo_path, older["id"])
            assert any(c["added"] for c in changes.values())  # something to show
            assert_diff_shown(_detail(app), changes)
            assert "Changes since this checkpoint" in text  # on screen, not only below

    run(scenario)


@pytest.mark.slow
def test_create_diff_restore_and_undo(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "checkpoints")
            await pilot.press("c")
            await settle(pilot)
            assert "Create a checkpoint" in screen_text(app)
            await pilot.press(*"before the experiment", "ctrl+s")
            await settle(pilot)
            made = [
                c for c in _checkpoints(demo_path) if c["description"] == "before the experiment"
            ]
            assert len(made) == 1
            created = made[0]
            table = app.query_one("#checkpoints", VirtualTable)
            assert table.cursor_key == created["id"]  # the new checkpoint is selected
            assert "No changes since this checkpoint" in screen_text(app)

            # An agent adds a lesson; the diff against now shows it.
            store = Store(demo_path)
            added = lessons.add_lesson(
                store, "Feature flags beat long-lived branches", now=NOW, actor="test"
            )
            lesson_id = added.lesson["id"]
            await pilot.press("ctrl+r")  # reload (the app polls in real use)
            await settle(pilot)
            text = screen_text(app)
            assert "lessons" in text and "+1 added" in text
            assert lesson_id in text
            assert "Feature flags beat long-lived branches" in text

            # Restore asks first and names the automatic checkpoint.
            await pilot.press("r")
            await settle(pilot)
            text = screen_text(app)
            short = created["id"][:8]
            assert f"Restore checkpoint {short}?" in text
            assert f"before restoring {short}" in text
            assert "lessons +1" in text
            await pilot.press("n")  # cancel: nothing happens
            await settle(pilot)
            assert "Feature flags beat long-lived branches" in _lesson_contents(demo_path)
            await pilot.press("r", "y")
            await settle(pilot)
            assert "Feature flags beat long-lived branches" not in _lesson_contents(demo_path)
            auto = [c for c in _checkpoints(demo_path) if c.get("automatic")]
            assert len(auto) == 1 and auto[0]["description"] == f"before restoring {short}"
            assert any(f"“{auto[0]['description']}”" in t and "To undo" in t for t in toasts)
            # The automatic checkpoint is selected; its diff shows what the restore did.
            assert table.cursor_key == auto[0]["id"]
            text = screen_text(app)
            assert "automatic" in text and "−1 removed" in text

            # Restoring the automatic checkpoint undoes the restore.
            await pilot.press("r")
            await settle(pilot)
            assert f"before restoring {auto[0]['id'][:8]}" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            assert "Feature flags beat long-lived branches" in _lesson_contents(demo_path)

    run(scenario)


@pytest.mark.slow
def test_delete_asks_first(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "checkpoints")
            listed = _newest_first(demo_path)
            doomed = listed[1]
            await pilot.press("down", "d")
            await settle(pilot)
            assert f"Delete checkpoint {doomed['id'][:8]}?" in screen_text(app)
            await pilot.press("n")
            await settle(pilot)
            assert _newest_first(demo_path) == listed
            await pilot.press("d", "y")
            await settle(pilot)
            remaining = _newest_first(demo_path)
            assert remaining == [c for c in listed if c["id"] != doomed["id"]]
            assert doomed["description"] not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_jump_to_selects_the_checkpoint(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        target = _checkpoints(demo_path)[0]["id"]  # the oldest: second in the list
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "checkpoints")
            app.pane("checkpoints").jump_to(target)
            await settle(pilot)
            assert app.query_one("#checkpoints", VirtualTable).cursor_key == target
            assert target in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_checkpoints_pane_snapshot(demo_app, snap_compare) -> None:
    async def run_before(pilot) -> None:
        await open_pane(pilot, "checkpoints")
        await pilot.press("down")  # the older checkpoint, with a diff against now
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=run_before, terminal_size=SIZE)


def test_changed_fields_read_in_the_panes_words() -> None:
    # A rule switched off and on again moved to the newest place: "seq" meant nothing.
    assert field_words("rules", ["seq"]) == "order (switched back on: now the newest of its scope)"
    assert field_words("lessons", ["deleted", "last_reinforced_at"]) == (
        "forgotten, last reinforced"
    )
    assert field_words("mistake_cards", ["seen_count"]) == "seen count"
