"""The History pane (audit log), driven by real key presses on the demo store."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest

from memwork.core.base.clock import parse_instant
from memwork.core.domain import forgetting, lessons, sessions
from memwork.core.ledger import audit
from memwork.core.storage.store import Store
from memwork.tui.app import make_app
from memwork.tui.panes.history import HistoryPane
from memwork.tui.widgets.audit_rows import AuditRows
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, capture_toasts, run, screen_text, settle

NOW = parse_instant("2026-11-20T12:00:00Z")


def _log(path: Path) -> list[dict]:
    """The entries the pane lists by default: all but "injected into context" ones,
    which it shows only when asked (i; tests/tui/test_curation_panes.py)."""
    store = Store(path)
    with store.reading():
        return [e for e in audit.entries(store, newest_first=True) if e["action"] != "inject"]


def _shown(app) -> list[dict]:
    table = app.query_one("#history", VirtualTable)
    rows = table.source
    assert isinstance(rows, AuditRows)
    return [rows.entry(i) for i in range(table.row_count)]


async def _filter(pilot, text: str) -> None:
    """Focus the filter line with f, replace its text, and wait for the filter worker."""
    await pilot.press("f", "ctrl+a", "ctrl+k", *text)
    await settle(pilot)


async def _select(pilot, entry_id: str) -> VirtualTable:
    table = pilot.app.query_one("#history", VirtualTable)
    table.move_cursor(table.source.index_of(entry_id))
    table.focus()
    await settle(pilot)
    return table


@pytest.mark.slow
def test_history_lists_the_audit_log_newest_first(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            text = screen_text(app)
            assert f"{len(log)} entries" in text
            assert [e["id"] for e in _shown(app)] == [e["id"] for e in log]
            newest = log[0]
            assert app.query_one("#history", VirtualTable).cursor_key == newest["id"]
            assert newest["summary"] in text  # the detail line shows it in full
            assert f"#{newest['seq']}" in text and f"by {newest['actor']}" in text
            pane = {
                "checkpoints": "Checkpoints",
                "slots": "Slots",
                "lessons": "Rules & lessons",
                "working_memory": "Sessions",
            }
            assert f"Enter opens it in {pane[newest['table']]}" in text
            assert "f Filter" in text and "t Table" in text

    run(scenario)


@pytest.mark.slow
def test_filter_narrows_the_list(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            await _filter(pilot, "lock_owner")
            shown = _shown(app)
            assert 0 < len(shown) < len(log)
            assert all("lock_owner" in e["summary"] for e in shown)
            assert f"{len(shown)} of {len(log)} entries" in screen_text(app)
            # Several words must all match; field:value narrows one field.
            await _filter(pilot, "actor:tui pin")
            shown = _shown(app)
            expected = [
                e for e in log if e["actor"] == "tui" and "pin" in (e["action"] + e["summary"])
            ]
            assert [e["id"] for e in shown] == [e["id"] for e in expected] and shown
            await _filter(pilot, "zzz")
            assert "Nothing matches the filter (x clears it)" in screen_text(app)
            await pilot.press("escape", "x")  # back to the list, clear
            await settle(pilot)
            assert len(_shown(app)) == len(log)
            assert f"{len(log)} entries" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_t_cycles_a_table_filter(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)
    tables = sorted({e["table"] for e in log})

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            await pilot.press("t")
            await settle(pilot)
            assert {e["table"] for e in _shown(app)} == {tables[0]}
            assert f"table {tables[0]} (t)" in screen_text(app)
            await pilot.press("t")
            await settle(pilot)
            assert {e["table"] for e in _shown(app)} == {tables[1]}
            await pilot.press("T")  # back
            await settle(pilot)
            assert {e["table"] for e in _shown(app)} == {tables[0]}
            # The table filter and the words combine.
            record_id = next(e["record_id"] for e in log if e["table"] == tables[0])
            await _filter(pilot, record_id)
            assert [e["record_id"] for e in _shown(app)] == [
                e["record_id"]
                for e in log
                if e["table"] == tables[0] and e["record_id"] == record_id
            ]
            await pilot.press("escape", "x")
            await settle(pilot)
            assert len(_shown(app)) == len(log)

    run(scenario)


@pytest.mark.slow
def test_enter_jumps_to_the_session_of_an_observation(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)
    entry = next(e for e in log if e["table"] == "observations")
    store = Store(demo_path)
    with store.reading():
        session_id = next(
            s["id"]
            for s in sessions.list_sessions(store)
            if any(o["id"] == entry["record_id"] for o in sessions.observations(store, s["id"]))
        )

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            await _select(pilot, entry["id"])
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "sessions"
            assert app.query_one("#sessions", VirtualTable).cursor_key == session_id
            assert app.query_one("#timeline", VirtualTable).cursor_key == entry["record_id"]

    run(scenario)


@pytest.mark.slow
def test_enter_jumps_to_sessions_and_lessons(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)
    ended = next(e for e in log if e["table"] == "sessions" and e["action"] == "end")
    pinned = next(e for e in log if e["table"] == "lessons" and e["action"] == "pin")

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            await _filter(pilot, "end s")
            await pilot.press("enter")  # leaves the filter line for the list
            await _select(pilot, ended["id"])
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "sessions"
            assert app.query_one("#sessions", VirtualTable).cursor_key == ended["record_id"]
            await pilot.press("8")
            await settle(pilot)
            await pilot.press("x")
            await settle(pilot)
            await _select(pilot, pinned["id"])
            await pilot.press("o")  # the footer's key for the same thing
            await settle(pilot)
            assert app.active_pane == "lessons"
            assert app.query_one("#lessons", VirtualTable).cursor_key == pinned["record_id"]

    run(scenario)


@pytest.mark.slow
def test_enter_on_a_record_that_is_gone_or_has_no_pane_says_so(demo_app, demo_path: Path) -> None:
    store = Store(demo_path)
    doomed = sessions.start_session(store, title="short-lived", now=NOW, actor="cli")
    forgetting.forget_session(store, doomed["id"], now=NOW, actor="cli")
    log = _log(demo_path)
    started = next(e for e in log if e["action"] == "start" and e["record_id"] == doomed["id"])
    imported = next(e for e in log if e["table"] == "imports")

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            toasts = capture_toasts(app)
            await pilot.press("8")
            await settle(pilot)
            await _select(pilot, started["id"])
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "history"
            # Named by its kind, not by a raw id.
            assert "The session this entry names no longer exists (it was deleted since)" in toasts
            await _select(pilot, imported["id"])
            assert "no pane shows imports records" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "history"
            assert toasts[-1] == "No pane shows imports records"

    run(scenario)


@pytest.mark.slow
def test_new_entries_appear_on_top_and_the_selection_stays(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            table = await _select(pilot, log[3]["id"])
            store = Store(demo_path)
            with store.reading():
                lesson = next(x for x in lessons.all_lessons(store) if not x["deleted"])
            lessons.reinforce(store, lesson["id"], now=NOW, actor="cli:other")
            app.store_changed()
            await settle(pilot)
            shown = _shown(app)
            assert len(shown) == len(log) + 1
            assert shown[0]["actor"] == "cli:other" and shown[0]["action"] == "reinforce"
            assert table.cursor_key == log[3]["id"]
            assert "cli:other" in screen_text(app)  # the top of the list is in view

    run(scenario)


@pytest.mark.slow
def test_a_big_log_loads_in_pages_and_filters(tmp_path: Path, demo_path: Path) -> None:
    """3,500 entries over four shards: the first page comes early, the rest follows."""
    path = tmp_path / "big"
    shutil.copytree(demo_path, path)
    store = Store(path)
    base = len(_log(path))
    with store.reading():  # what the pane loads: the hidden "inject" entries too
        loaded = sum(1 for _ in audit.entries(store))
    with store.transaction():
        for k in range(3500):
            audit.record(
                store,
                actor=f"cli:agent{k % 3}",
                action="observe",
                table="observations",
                record_id=f"obs_{k:06d}",
                summary=f"synthetic {k} topic{k % 50}",
                now=NOW + timedelta(seconds=k),
            )
    pages: list[tuple[int, bool]] = []
    original = HistoryPane._show_log

    def spy(self, log) -> None:
        pages.append((len(log.entries), log.complete))
        original(self, log)

    async def scenario() -> None:
        app = make_app(path, poll=False, prepare=False)  # the pane reads its log when shown
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            total = loaded + 3500
            assert pages[0] == (total % 1000 or 1000, False)  # the newest shard first
            assert pages[-1] == (total, True)
            assert f"{base + 3500:,} entries" in screen_text(app)
            assert _shown(app)[0]["summary"] == "synthetic 3499 topic49"
            await _filter(pilot, "topic7 agent1")
            shown = _shown(app)
            assert shown and all(
                e["summary"].endswith("topic7") and e["actor"] == "cli:agent1" for e in shown
            )
            await pilot.press("escape", "end")
            await settle(pilot)
            assert app.query_one("#history", VirtualTable).cursor_row == len(shown) - 1

    HistoryPane._show_log = spy
    try:
        run(scenario)
    finally:
        HistoryPane._show_log = original


@pytest.mark.slow
def test_jump_to_an_audit_entry(demo_app, demo_path: Path) -> None:
    log = _log(demo_path)
    target = log[40]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("8")
            await settle(pilot)
            await _filter(pilot, "zzz")
            app.pane("history").jump_to(target["id"])  # hidden by the filter: it clears
            await settle(pilot)
            table = app.query_one("#history", VirtualTable)
            assert table.cursor_key == target["id"] and table.has_focus
            assert target["summary"] in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_history_pane_snapshot(demo_app, snap_compare) -> None:
    async def ready(pilot) -> None:
        await pilot.press("8")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=ready, press=["down"], terminal_size=SIZE)


@pytest.mark.slow
def test_history_filtered_snapshot(demo_app, snap_compare) -> None:
    async def ready(pilot) -> None:
        await pilot.press("8")
        await settle(pilot)
        await pilot.press("f", *"wm-set")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=ready, terminal_size=SIZE)
