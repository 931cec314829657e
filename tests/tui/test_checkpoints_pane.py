"""The Checkpoints pane, driven by real key presses on the demo store."""

from __future__ import annotations

from pathlib import Path

from core import checkpoints, lessons
from core.clock import parse_instant
from core.storage.store import Store
from tests.tui.conftest import DEMO_NOW, SIZE, run, screen_text, settle
from tui.widgets.virtual_table import VirtualTable

NOW = parse_instant(DEMO_NOW)


def _checkpoints(path: Path) -> list[dict]:
    return checkpoints.list_checkpoints(Store(path))


def _lesson_contents(path: Path) -> set[str]:
    store = Store(path)
    with store.reading():
        return {x["content"] for x in lessons.all_lessons(store)}


def capture_toasts(app) -> list[str]:
    """Record every toast's message (toasts are not drawn under run_test by default)."""
    messages: list[str] = []
    notify = app.notify

    def recording(message: str, **kwargs) -> None:
        messages.append(message)
        notify(message, **kwargs)

    app.notify = recording
    return messages


async def open_checkpoints(pilot) -> None:
    """Switch to the Checkpoints pane once the app has settled (an early digit can be lost)."""
    await settle(pilot)
    await pilot.press("6")
    await settle(pilot)
    assert pilot.app.active_pane == "checkpoints"


def test_checkpoints_list_and_diff_against_now(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_checkpoints(pilot)
            text = screen_text(app)
            assert "2 checkpoints" in text
            assert "before curating lessons" in text
            assert "after the first six weeks of episodes" in text
            assert "269" in text and "200" in text  # record counts
            assert "No changes since this checkpoint" in text  # the newest one
            await pilot.press("down")  # the older one: lessons were added since
            await settle(pilot)
            text = screen_text(app)
            assert "Changes since this checkpoint" in text
            assert "+25 added" in text
            assert "… and 19 more added" in text  # big diffs are summarised
            assert "rules" in text and "~1 changed" in text
            assert "fields:" in text

    run(scenario)


def test_create_diff_restore_and_undo(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_checkpoints(pilot)
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
            assert any(auto[0]["id"] in t and "To undo" in t for t in toasts)
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


def test_delete_asks_first(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_checkpoints(pilot)
            await pilot.press("down", "d")
            await settle(pilot)
            assert "Delete checkpoint 752d1ac0?" in screen_text(app)
            await pilot.press("n")
            await settle(pilot)
            assert len(_checkpoints(demo_path)) == 2
            await pilot.press("d", "y")
            await settle(pilot)
            remaining = _checkpoints(demo_path)
            assert [c["description"] for c in remaining] == ["before curating lessons"]
            assert "after the first six weeks" not in screen_text(app)

    run(scenario)


def test_jump_to_selects_the_checkpoint(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        target = _checkpoints(demo_path)[0]["id"]  # the oldest: second in the list
        async with app.run_test(size=SIZE) as pilot:
            await open_checkpoints(pilot)
            app.pane("checkpoints").jump_to(target)
            await settle(pilot)
            assert app.query_one("#checkpoints", VirtualTable).cursor_key == target
            assert target in screen_text(app)

    run(scenario)


def test_checkpoints_pane_snapshot(demo_app, snap_compare) -> None:
    async def run_before(pilot) -> None:
        await open_checkpoints(pilot)
        await pilot.press("down")  # the older checkpoint, with a diff against now
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=run_before, terminal_size=SIZE)
