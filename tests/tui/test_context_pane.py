"""The Context pane, driven by real key presses on the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from memwork.core.base.clock import parse_instant
from memwork.core.domain import aggregates
from memwork.core.services.context.build import build_context
from memwork.core.storage.store import Store
from tests.tui.conftest import DEMO_NOW, SIZE, capture_toasts, open_pane, run, screen_text, settle

NOW = parse_instant(DEMO_NOW)


def _expected(path: Path, **kwargs) -> str:
    """What ``memwork context`` gives for the same settings."""
    return build_context(Store(path), now=NOW, **kwargs).text


async def rebuilt(pilot) -> None:
    """Wait out the debounce (~150 ms) and the build worker."""
    await pilot.pause(0.3)
    await settle(pilot)


def _preview(app) -> str:
    return app.query_one("#context-preview", TextArea).text


def _side(app) -> str:
    return str(app.query_one("#context-sections", Static).render())


def _tasks(path: Path) -> list[dict]:
    """The task aggregates, in the order the task list shows them."""
    store = Store(path)
    with store.reading():
        return aggregates.all_tasks(store)


@pytest.mark.slow
def test_preview_follows_task_budget_and_style(demo_app, demo_path: Path) -> None:
    first_task = _tasks(demo_path)[0]
    task_id = first_task["task_id"]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            assert _preview(app) == _expected(demo_path)  # no task, 2000, default
            side = _side(app)
            first = build_context(Store(demo_path), now=NOW)
            assert f"~{first.tokens:,} / 2,000 tokens" in side
            assert "Pinned memory" in side and "tokens (estimate)" in side
            assert "Nothing dropped" in side
            assert "## Pinned memory" in screen_text(app)

            await pilot.press("t", *task_id[:3])  # a known task is offered: → takes it
            await settle(pilot)
            assert task_id in screen_text(app)
            await pilot.press("right", "enter")
            await rebuilt(pilot)
            assert _preview(app) == _expected(demo_path, task_id=task_id)
            # The demo's task has lessons of its own: they are listed under it.
            assert f"## Rules and lessons for {task_id}" in _preview(app)
            side = _side(app)
            assert f"Rules and lessons for {task_id}" in side
            with_task = build_context(Store(demo_path), now=NOW, task_id=task_id)
            assert with_task.tokens != first.tokens
            assert f"~{with_task.tokens:,} / 2,000 tokens" in side
            rules = next(s for s in with_task.to_json()["sections"] if s["name"] == "task_rules")
            assert f"~{rules['estimated_tokens']:,} tokens (estimate)" in side

            await pilot.press("b", *"300", "enter")  # a small budget
            await rebuilt(pilot)
            expected = build_context(Store(demo_path), now=NOW, task_id=task_id, budget_tokens=300)
            assert _preview(app) == expected.text
            side = _side(app)
            dropped = expected.to_json()["dropped"]
            assert dropped  # 300 tokens cannot hold it all
            assert f"Dropped by the budget ({len(dropped)} lines)" in side
            episodes = [d["line"] for d in dropped if d["section"] == "episodes"]
            assert episodes  # the lowest priority goes first
            assert f"Recent episodes  −{len(episodes)}" in side
            assert f"~{expected.tokens:,} / 300 tokens" in side and expected.tokens <= 300
            first_words = " ".join(episodes[0].lstrip("- ").split()[:4])
            assert first_words in side  # a dropped line, by section

            await pilot.press("e")  # style: episodic
            await rebuilt(pilot)
            assert _preview(app).startswith("## MEMORY FROM PAST EPISODES")
            assert _preview(app) == _expected(
                demo_path, task_id=task_id, budget_tokens=300, style="episodic"
            )

    run(scenario)


@pytest.mark.slow
def test_budget_is_validated_inline(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            before = _preview(app)
            await pilot.press("b", *"abc")
            await rebuilt(pilot)
            text = screen_text(app)
            assert "budget: must be a whole number >= 0 (got 'abc')" in text
            assert _preview(app) == before  # the last valid budget stays
            await pilot.press("ctrl+a", "ctrl+k", "-", "5")
            await rebuilt(pilot)
            assert "budget: must be 0 or more (got -5)" in screen_text(app)
            await pilot.press("ctrl+a", "ctrl+k")
            await rebuilt(pilot)
            assert "budget: enter a whole number of tokens" in screen_text(app)
            await pilot.press("0")
            await rebuilt(pilot)
            assert "budget:" not in screen_text(app)
            # A zero budget drops every line, but a store with memory never reads as empty.
            assert _preview(app) == "…"
            assert "Not one whole line fits" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_copy_says_what_was_sent_and_uses_a_local_clipboard_tool(
    demo_app, monkeypatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    received = tmp_path / "clipboard.txt"
    monkeypatch.setenv("PATH", str(bin_dir))
    for name in ("WAYLAND_DISPLAY", "DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TMUX", "/tmp/tmux-0/default,1,0")

    async def scenario() -> None:
        app = demo_app()
        copied: list[str] = []
        monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            await pilot.press("c")
            await settle(pilot)
            preview = _preview(app)
            assert copied == [preview] and preview
            # OSC 52 alone cannot confirm: no "Copied", and how to enable it in tmux.
            assert "sent to the terminal's clipboard (OSC 52)" in toasts[-1]
            assert "set -g set-clipboard on" in toasts[-1] and "copied" not in toasts[-1]
            # A local clipboard tool on PATH gets the text too, and the toast names it.
            tool = bin_dir / "wl-copy"
            tool.write_text(f"#!/bin/sh\nexec /bin/cat > {received}\n")
            tool.chmod(0o755)
            monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
            await pilot.press("c")
            await settle(pilot)
            assert received.read_text(encoding="utf-8") == preview
            assert toasts[-1] == (
                f"The context ({len(preview):,} characters) copied with wl-copy "
                "(and sent to the terminal's clipboard, OSC 52)"
            )

    run(scenario)


@pytest.mark.slow
def test_save_to_file(demo_app, demo_path: Path, tmp_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        target = tmp_path / "out" / "context.md"
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            await pilot.press("s")
            await settle(pilot)
            assert "Save the context to a file" in screen_text(app)
            await pilot.press("ctrl+a", "ctrl+k", *str(target), "ctrl+s")
            await settle(pilot)
            # In the form (read from its error line: a long temporary path wraps on screen).
            error = str(app.screen.query_one("#error").render())
            assert f"folder {target.parent} does not exist" in error
            target.parent.mkdir()
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert "Save the context to a file" not in screen_text(app)
            assert target.read_text(encoding="utf-8") == _preview(app) == _expected(demo_path)
            # Saving again over the file asks first (it used to replace it silently).
            target.write_text("my notes", encoding="utf-8")
            await pilot.press("s")
            await settle(pilot)
            await pilot.press("ctrl+s")
            await settle(pilot)
            error = str(app.screen.query_one("#error").render())
            assert error == f"path: {target} already exists: ctrl+s again replaces it"
            assert target.read_text(encoding="utf-8") == "my notes"
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert target.read_text(encoding="utf-8") == _preview(app)

    run(scenario)


@pytest.mark.slow
def test_preview_follows_the_store(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        from memwork.core.domain import slots

        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "context")
            slots.set_slot(Store(demo_path), "scratch", "Remember the milk", now=NOW, actor="test")
            await pilot.press("ctrl+r")
            await rebuilt(pilot)
            assert "Remember the milk" in _preview(app)

    run(scenario)


@pytest.mark.slow
def test_context_pane_snapshot(demo_app, snap_compare) -> None:
    async def run_before(pilot) -> None:
        await open_pane(pilot, "context")
        await pilot.press("t", *"deploy-api", "enter", "b", *"300", "enter")
        await rebuilt(pilot)

    assert snap_compare(demo_app(), run_before=run_before, terminal_size=SIZE)


@pytest.mark.slow
def test_a_task_with_no_episodes_and_a_project_can_be_previewed(tmp_path: Path) -> None:
    """On a new store an approved lesson for a task nothing was recorded for still
    reaches the agent: the pane previews it for any typed task and project."""
    from memwork.core.domain import lessons
    from memwork.tui.app import make_app

    db = tmp_path / "fresh"
    store = Store(db)
    lessons.add_lesson(store, "Canary every deploy", scope="task:deploy-api", now=NOW, actor="tui")
    lessons.add_lesson(
        store, "Money is Decimal, never float", scope="project:billing", now=NOW, actor="tui"
    )

    async def scenario() -> None:
        app = make_app(db, poll=False, prepare=False)  # as demo_app builds it
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "context")
            await pilot.press("t", *"deploy-api", "enter")
            await rebuilt(pilot)
            expected = _expected(db, task_id="deploy-api")
            assert "Canary every deploy" in expected
            assert _preview(app) == expected
            # Known (a lesson names it), with nothing recorded for it yet.
            assert "no episodes yet" in screen_text(app)
            await pilot.press("p", *"billing", "enter")
            await rebuilt(pilot)
            both = _expected(db, task_id="deploy-api", project="billing")
            assert "Money is Decimal" in both
            assert _preview(app) == both
            # The budget field shows its number whole while it is being edited.
            await pilot.press("b")
            await settle(pilot)
            assert "Budget 2000" in screen_text(app)

    run(scenario)
