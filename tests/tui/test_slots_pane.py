"""The Slots pane, driven by real key presses on the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static, TextArea

from memwork.core.base.clock import parse_instant
from memwork.core.domain import slots
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import DEMO_NOW, SIZE, capture_toasts, open_pane, run, screen_text, settle

NOW = parse_instant(DEMO_NOW)


def _stored(path: Path) -> dict[str, dict]:
    store = Store(path)
    return {s["label"]: s for s in slots.list_slots(store)}


async def _select(pilot, label: str) -> None:
    """Move the list cursor to ``label`` with the arrow keys."""
    app = pilot.app
    table = app.query_one("#slots", VirtualTable)
    pane = app.pane("slots")
    await pilot.press("home")
    for _ in range(table.row_count):
        if pane.slots[table.cursor_key]["label"] == label:
            return
        await pilot.press("down")
    raise AssertionError(f"no slot {label}")


def _counter(app) -> str:
    return str(app.query_one("#slot-counter", Static).render())


@pytest.mark.slow
def test_slots_list_flags_over_limit_and_read_only(demo_app, demo_path) -> None:  # noqa: ANN001
    from memwork.core.domain import slots as core_slots
    from memwork.core.storage.store import Store

    store = Store(demo_path)
    with store.reading():
        first = core_slots.list_slots(store)[0]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            text = screen_text(app)
            assert "6 slots · 1 over limit · 1 read-only" in text
            assert "corrections/support-mistakes" in text and "594/500" in text
            assert "over limit" in text and "read-only" in text
            assert "Who the agent is" in text  # descriptions
            # The first slot is in the editor, with its live count against its limit.
            assert f"{len(first['content'])} / {first['limit']}" in text
            assert "You are Atlas" in text

    run(scenario)


@pytest.mark.slow
def test_live_counter_turns_to_error_and_an_over_limit_save_writes_nothing(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select(pilot, "project/checkout")  # 134 / 400
            before = _stored(demo_path)["project/checkout"]
            await pilot.press("enter")  # into the editor
            assert app.focused is app.query_one("#slot-editor", TextArea)
            await pilot.press("end", *" On-call")
            assert "142 / 400" in screen_text(app)  # live, while typing
            counter = app.query_one("#slot-counter", Static)
            assert not counter.has_class("over")
            await pilot.press(*"xy")
            assert _counter(app).startswith("144 / 400")
            app.copy_to_clipboard("x" * 257)
            await pilot.press("ctrl+v")  # paste a block: 401 characters
            assert _counter(app).startswith("401 / 400")
            assert counter.has_class("over")  # the error colour
            assert "(1 over)" in screen_text(app)
            editor = app.query_one("#slot-editor", TextArea)
            typed = editor.text
            assert " On-callxy" + "x" * 257 in typed
            await pilot.press("ctrl+s")
            await settle(pilot)
            text = screen_text(app)
            assert "Not saved: content: would be 401 characters, over the slot's limit of 400" in (
                text
            )
            assert _stored(demo_path)["project/checkout"] == before  # nothing written
            assert editor.text == typed  # the user's text is kept
            await pilot.press("backspace", "ctrl+s")  # back to 400: it fits
            await settle(pilot)
            saved = _stored(demo_path)["project/checkout"]
            assert saved["content"] == editor.text and saved["chars"] == 400
            assert not counter.has_class("over")
            assert "Not saved" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_imported_over_limit_slot_may_shrink_but_not_grow(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select(pilot, "corrections/support-mistakes")
            assert "Imported over its limit" in screen_text(app)
            assert app.query_one("#slot-counter", Static).has_class("over")
            await pilot.press("e", "end", "!", "ctrl+s")
            await settle(pilot)
            assert "Not saved" in screen_text(app)
            assert _stored(demo_path)["corrections/support-mistakes"]["chars"] == 594
            await pilot.press("backspace", "backspace", "ctrl+s")  # shorter than before
            await settle(pilot)
            assert _stored(demo_path)["corrections/support-mistakes"]["chars"] == 593

    run(scenario)


@pytest.mark.slow
def test_create_edit_reorder_and_delete_a_slot(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await pilot.press("n")
            await settle(pilot)
            assert "New slot" in screen_text(app)
            await pilot.press(*"persona", "tab", "ctrl+a", "ctrl+k", *"300", "tab")
            await pilot.press(*"Open items", "ctrl+s")
            await settle(pilot)
            assert "slot persona already exists" in screen_text(app)  # never overwritten
            await pilot.press("shift+tab", "shift+tab", "ctrl+a", "ctrl+k", *"notes/todo")
            await pilot.press("ctrl+s")
            await settle(pilot)
            await pilot.pause(0.2)
            stored = _stored(demo_path)
            assert stored["notes/todo"]["limit"] == 300
            assert stored["notes/todo"]["description"] == "Open items"
            assert stored["notes/todo"]["position"] == 6
            assert "You are Atlas" in stored["persona"]["content"]
            # The new slot is selected and its editor focused: type, save.
            assert app.focused is app.query_one("#slot-editor", TextArea)
            await pilot.press(*"rotate the staging keys", "ctrl+s")
            await settle(pilot)
            assert _stored(demo_path)["notes/todo"]["content"] == "rotate the staging keys"
            assert "23 / 300" in screen_text(app)
            await pilot.press("escape")  # back to the list
            await pilot.press("shift+up")
            await settle(pilot)
            assert _stored(demo_path)["notes/todo"]["position"] == 5
            assert _stored(demo_path)["policies/escalation"]["position"] == 6
            await pilot.press("K")  # the other key for "move up"
            await settle(pilot)
            assert _stored(demo_path)["notes/todo"]["position"] == 4
            await pilot.press("shift+down")
            await settle(pilot)
            assert _stored(demo_path)["notes/todo"]["position"] == 5
            await pilot.press("d")
            await settle(pilot)
            assert "Delete slot notes/todo?" in screen_text(app)
            await pilot.press("n")  # cancel
            await settle(pilot)
            assert "notes/todo" in _stored(demo_path)
            await pilot.press("d", "y")
            await settle(pilot)
            stored = _stored(demo_path)
            assert "notes/todo" not in stored
            assert sorted(s["position"] for s in stored.values()) == list(range(6))
            assert "notes/todo" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_read_only_slot_refuses_edits_and_delete(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select(pilot, "policies/escalation")
            before = _stored(demo_path)["policies/escalation"]
            assert "Read-only" in screen_text(app)
            editor = app.query_one("#slot-editor", TextArea)
            assert editor.read_only
            await pilot.press("e", *"zzz", "ctrl+s")
            await settle(pilot)
            assert "zzz" not in editor.text
            await pilot.press("escape", "d")
            await settle(pilot)
            assert "read-only" in screen_text(app)
            assert "Delete slot" not in screen_text(app)  # refused before asking
            await pilot.press("i")  # limit and description: the core refuses
            await settle(pilot)
            await pilot.press("tab", "ctrl+a", "ctrl+k", *"changed", "ctrl+s")
            await settle(pilot)
            assert "slot policies/escalation is read-only" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            assert _stored(demo_path)["policies/escalation"] == before
            await pilot.press("l")  # unlock asks first
            await settle(pilot)
            assert "Unlock slot policies/escalation?" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            assert not _stored(demo_path)["policies/escalation"]["read_only"]
            assert not editor.read_only
            await pilot.press("l")  # locking does not ask
            await settle(pilot)
            assert _stored(demo_path)["policies/escalation"]["read_only"]

    run(scenario)


@pytest.mark.slow
def test_limit_and_description_form(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select(pilot, "human")  # 47 characters
            await pilot.press("i")
            await settle(pilot)
            await pilot.press("ctrl+a", "ctrl+k", *"10", "ctrl+s")
            await settle(pilot)
            assert "limit: 10 is below the slot's current 47 characters" in screen_text(app)
            await pilot.press("ctrl+a", "ctrl+k", *"500", "tab", "ctrl+a", "ctrl+k")
            await pilot.press(*"The person we help", "ctrl+s")
            await settle(pilot)
            human = _stored(demo_path)["human"]
            assert human["limit"] == 500 and human["description"] == "The person we help"
            assert "47 / 500" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_leaving_the_editor_keeps_a_draft(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            before = _stored(demo_path)["persona"]["content"]
            await pilot.press("enter", "end", *" Draft!")
            drafted = app.query_one("#slot-editor", TextArea).text
            assert " Draft!" in drafted
            await pilot.press("escape")
            await settle(pilot)
            assert "Kept as a draft: ctrl+s saves, x discards" in toasts
            await pilot.press("down")  # another slot
            await settle(pilot)
            text = screen_text(app)
            assert "✎ draft" in text and "1 unsaved draft" in text
            assert "Draft!" not in app.query_one("#slot-editor", TextArea).text
            await pilot.press("up")  # back: the draft is restored
            await settle(pilot)
            assert app.query_one("#slot-editor", TextArea).text == drafted
            assert _stored(demo_path)["persona"]["content"] == before  # not saved
            await pilot.press("x")  # discard asks first
            await settle(pilot)
            assert "Discard your unsaved changes to persona?" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            assert app.query_one("#slot-editor", TextArea).text == before
            assert "draft" not in screen_text(app).split("\n")[3]  # the status line

    run(scenario)


@pytest.mark.slow
def test_unsaved_text_of_a_slot_deleted_elsewhere_goes_to_the_clipboard(
    demo_app, demo_path: Path, monkeypatch
) -> None:
    async def scenario() -> None:
        app = demo_app()
        copied: list[str] = []
        monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
        toasts = capture_toasts(app)
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select(pilot, "human")
            await pilot.press("e", *"Mine: ")
            typed = app.query_one("#slot-editor", TextArea).text
            slots.delete_slot(Store(demo_path), "human", now=NOW, actor="agent")
            await pilot.press("ctrl+r")  # the app polls in real use
            await settle(pilot)
            assert copied == [typed]
            assert any("human was deleted elsewhere" in t and "clipboard" in t for t in toasts)

    run(scenario)


@pytest.mark.slow
def test_jump_to_selects_the_slot(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        target = _stored(demo_path)["human"]["id"]
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            app.pane("slots").jump_to(target)
            await settle(pilot)
            assert app.query_one("#slots", VirtualTable).cursor_key == target
            assert "47 / 2000" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_slots_pane_snapshot(demo_app, snap_compare) -> None:
    async def run_before(pilot) -> None:
        await open_pane(pilot, "slots")
        await pilot.press("down", "down", "down")  # the imported, over-limit slot
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=run_before, terminal_size=SIZE)


@pytest.mark.slow
def test_a_slot_from_a_letta_agent_shows_the_agent_and_its_system_prompt(
    demo_app, demo_path: Path
) -> None:
    from memwork.core.ledger.curator import ensure_key_file
    from memwork.core.services.interop import importer

    letta = Path(__file__).resolve().parents[1] / "data" / "letta" / "v1_support_agent.af"
    store = Store(demo_path)
    curator, _ = ensure_key_file()  # the person's key: review is on in the demo
    importer.run_import(
        store, letta, fmt="letta", on_conflict="skip", now=NOW, actor="cli", curator=curator
    )
    store.close()

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "slots")
            await _select(pilot, "tickets")
            await settle(pilot)
            assert "Letta agent juniper-support (a)" in screen_text(app)
            await pilot.press("a")
            await settle(pilot)
            text = screen_text(app)
            assert "Letta agent juniper-support" in text and "System prompt" in text
            assert "You are Juniper, a support agent with self-editing memory." in text
            await pilot.press("escape")
            await settle(pilot)
            assert "System prompt" not in screen_text(app)

    run(scenario)
