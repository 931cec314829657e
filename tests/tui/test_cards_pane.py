"""The Mistake cards pane, driven by real key presses on the demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from memwork.core.domain import cards
from memwork.core.ledger import audit
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle


def _cards(path: Path) -> list[dict]:
    store = Store(path)
    with store.reading():
        return cards.all_cards(store)


def _table(app) -> VirtualTable:
    return app.query_one("#cards-table", VirtualTable)


@pytest.mark.slow
def test_cards_are_ranked_with_their_detail(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "cards")
            ranked = _cards(demo_path)
            table = _table(app)
            assert [table.row_key_at(i) for i in range(table.row_count)] == [
                c["id"] for c in ranked
            ]
            text = screen_text(app)
            top = ranked[0]
            assert f"{len(ranked)} cards" in text
            assert f"{top['seen_count']}×  {top['mistake_type']}" in text
            assert f"episodes #{top['first_seen_episode']} → #{top['last_seen_episode']}" in text
            assert top["correct_decision"] in text
            assert top["evidence"][:30] in text
            await pilot.press("down")
            await settle(pilot)
            second = ranked[1]
            text = screen_text(app)
            assert f"[{second['mistake_type']}]  seen {second['seen_count']}×" in text
            assert second["correct_decision"] in text

    run(scenario)


@pytest.mark.slow
def test_edit_card_lesson_and_evidence(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "cards")
            await pilot.press("down")
            card_id = _table(app).cursor_key
            original = {c["id"]: c for c in _cards(demo_path)}[card_id]
            await pilot.press("e")
            await settle(pilot)
            assert "Edit mistake card [" in screen_text(app)
            # Empty the lesson: the core refuses and the form says why, staying open.
            await pilot.press("f7", "backspace", "ctrl+s")
            await settle(pilot)
            text = screen_text(app)
            assert "lesson: must not be empty" in text
            assert "Edit mistake card" in text
            before = {c["id"]: c for c in _cards(demo_path)}[card_id]
            assert before == original  # the refused save wrote nothing

            long_lesson = "Switch every consumer before revoking the old key. " * 8
            await pilot.press(*long_lesson.strip())
            await pilot.press("tab", "f7", "backspace", *"nightly export 401 after rotation")
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert "Edit mistake card" not in screen_text(app)
            after = {c["id"]: c for c in _cards(demo_path)}[card_id]
            assert after["lesson"].startswith("Switch every consumer before revoking")
            assert len(after["lesson"]) <= 300  # the core's cut
            assert after["evidence"] == "nightly export 401 after rotation"
            assert _table(app).cursor_key == card_id
            assert "nightly export 401 after rotation" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_merge_marked_card_into_selected_adds_the_counts(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "cards")
            ranked = _cards(demo_path)
            table = _table(app)
            await pilot.press("m")  # nothing marked: a hint, no dialog
            await settle(pilot)
            assert "Merge these mistake cards?" not in screen_text(app)

            await pilot.press("down", "down", "down", "space")
            absorb = ranked[3]
            assert " marked: select the card to keep" in screen_text(app)
            await pilot.press("down")
            keep = ranked[4]
            assert table.cursor_key == keep["id"]
            await pilot.press("m")
            await settle(pilot)
            text = screen_text(app)
            total = keep["seen_count"] + absorb["seen_count"]
            assert "Merge these mistake cards?" in text
            assert f"Keep   [{keep['mistake_type']}]" in text
            assert f"Absorb [{absorb['mistake_type']}]" in text
            # The worker, which often is all that tells two cards apart, is named.
            for card in (keep, absorb):
                assert f"{card['task_id']} · {card.get('worker_id') or 'no worker'} — " in text
            assert f"seen {total}× ({keep['seen_count']} + {absorb['seen_count']})" in text

            await pilot.press("n")  # cancel: nothing changes
            await settle(pilot)
            assert len(_cards(demo_path)) == len(ranked)

            await pilot.press("m")
            await settle(pilot)
            await pilot.press("y")
            await settle(pilot)
            after = {c["id"]: c for c in _cards(demo_path)}
            assert absorb["id"] not in after
            merged = after[keep["id"]]
            assert merged["seen_count"] == total
            assert absorb["id"] in merged["merged_from"]
            assert table.cursor_key == keep["id"]  # the selection follows the kept card
            assert table.row_count == len(ranked) - 1
            assert " marked: select the card to keep" not in screen_text(app)
            store = Store(demo_path)
            with store.reading():
                assert next(audit.entries(store))["action"] == "merge"

    run(scenario)


@pytest.mark.slow
def test_merge_needs_two_different_cards(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "cards")
            await pilot.press("space", "m")
            await settle(pilot)
            assert "Merge these mistake cards?" not in screen_text(app)
            await pilot.press("escape")  # unmark
            assert " marked: select the card to keep" not in screen_text(app)
            assert len(_cards(demo_path)) == app.query_one("#cards-table").row_count

    run(scenario)


@pytest.mark.slow
def test_v_shows_the_cards_latest_episode(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "cards")
            await pilot.press("down", "down")
            card = _cards(demo_path)[2]
            await pilot.press("v")
            await settle(pilot)
            assert app.active_pane == "episodes"
            assert f"Episode #{card['last_seen_episode']} " in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_cards_pane_snapshot(demo_app, snap_compare) -> None:
    async def shown(pilot: Pilot) -> None:
        await settle(pilot)
        # The pane's rows first: keys pressed while a busy machine still loads it
        # would land on an empty table.
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("down", "space", "down")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=shown, terminal_size=SIZE)
