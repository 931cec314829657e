"""The Sessions pane, driven by real key presses on the demo store."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from memwork.core.base.clock import parse_instant
from memwork.core.base.errors import NotFound
from memwork.core.domain import sessions
from memwork.core.domain.working_memory import keys as wm_keys
from memwork.core.domain.working_memory import overview as wm_overview
from memwork.core.domain.working_memory import scopes as wm_scopes
from memwork.core.domain.working_memory import scratchpad as wm_scratchpad
from memwork.core.domain.working_memory import state as wm_state
from memwork.core.storage.store import Store
from memwork.tui.widgets.bars import duration
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.conftest import python_env
from tests.tui.conftest import SIZE, capture_toasts, run, screen_text, settle, wait_until

NOW = parse_instant("2026-11-20T12:00:00Z")


def _active(path: Path) -> dict:
    store = Store(path)
    return next(s for s in sessions.list_sessions(store) if s["status"] == "active")


def _session(path: Path, session_id: str) -> dict:
    return sessions.get_session(Store(path), session_id)


def _wm(path: Path, session_id: str) -> dict:
    return wm_overview.overview(Store(path), session_id, now=NOW)


def _keys(app) -> list[str]:
    table = app.query_one("#wm-keys", VirtualTable)
    return [table.row_key_at(i) for i in range(table.row_count)]


async def _focus(pilot, table_id: str) -> VirtualTable:
    """Tab until the table ``table_id`` has the focus (as a user would)."""
    table = pilot.app.query_one(f"#{table_id}", VirtualTable)
    for _ in range(8):
        if table.has_focus:
            return table
        await pilot.press("tab")
    raise AssertionError(f"tab never reached #{table_id}")


def _listed(path: Path) -> list[dict]:
    return sessions.list_sessions(Store(path))


def _viewed(path: Path, session_id: str) -> dict:
    """A session with its computed fields (duration, total observed) at the demo instant."""
    return sessions.get_session(Store(path), session_id, NOW)


@pytest.mark.slow
def test_sessions_pane_shows_sessions_timeline_and_working_memory(
    demo_app, demo_path: Path
) -> None:
    listed = _listed(demo_path)
    active = _viewed(demo_path, _active(demo_path)["id"])
    observed = sessions.observations(Store(demo_path), active["id"])
    wm = _wm(demo_path, active["id"])

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            text = screen_text(app)
            live = sum(s["status"] == "active" for s in listed)
            assert f"{len(listed)} sessions · {live} active" in text
            table = app.query_one("#sessions", VirtualTable)
            assert table.cursor_key == active["id"]  # newest first, selected
            assert active["title"] in text
            assert "● active" in text
            assert f"running for {duration(active['duration_seconds'])}" in text
            assert f"Observations ({len(observed)})" in text
            for observation in observed[-5:]:  # the timeline ends on the newest
                assert observation["content"][:25] in text
            assert observed[-1]["content"] in text  # selected, shown in full
            assert wm["keys"]
            for entry in wm["keys"]:  # every live key with its TTL
                assert entry["key"] in text
                ttl = entry["ttl_remaining"]
                assert (duration(ttl) if ttl is not None else "no TTL") in text
            task = wm["task"]
            assert task["status"] in text
            assert f"step {task['current_step']}/{task['total_steps']}" in text
            assert f"{round(task['progress_percent'])}%" in text
            assert wm["scratchpad"][-1]["text"][:12] in text  # e.g. "step 5: psql"
            checkpoint = wm["checkpoints"][0]
            assert checkpoint["description"] in text
            assert f"{checkpoint['keys']} keys, {checkpoint['scratch_entries']} notes" in text
            # The footer lists the pane's keys.
            assert "o Observe" in text and "s Set key" in text and "e End" in text
            # An ended session shows its summary and no live keys.
            rows = [table.row_key_at(i) for i in range(table.row_count)]
            by_id = {s["id"]: s for s in listed}
            position = next(i for i, key in enumerate(rows) if by_id[key]["status"] == "ended")
            ended = by_id[rows[position]]
            await pilot.press(*["down"] * position)
            await settle(pilot)
            assert table.cursor_key == ended["id"]
            text = screen_text(app)
            assert ended["summary"]
            assert "○ ended" in text and ended["summary"] in text
            ended_keys = {e["key"] for e in _wm(demo_path, ended["id"])["keys"]}
            assert ended_keys  # its own keys, not the active session's
            for key in ended_keys:
                assert key in text
            for entry in wm["keys"]:
                if entry["ttl_remaining"] is not None and entry["key"] not in ended_keys:
                    assert entry["key"] not in text

    run(scenario)


@pytest.mark.slow
@pytest.mark.parametrize("size", [(140, 45), (200, 50)])
def test_a_wide_terminal_gives_its_room_to_the_observations(
    demo_app, demo_path: Path, size: tuple[int, int]
) -> None:
    # At 140 columns the observations' text was cut at ~35 characters while the list's
    # titles took the room; the selected session's title is shown whole above anyway.
    observed = sessions.observations(Store(demo_path), _active(demo_path)["id"])
    texts = {o["content"].split(" #")[0] for o in observed}
    fitting = sorted(t for t in texts if len(t) <= 44)
    assert len(fitting) >= 3, "the demo's active session has short and long notes"

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            lines = screen_text(app).splitlines()
            for text in fitting:  # whole, on the row of its time and kind
                assert any(text in line and "…" not in line.split(text)[1][:1] for line in lines)
            timeline = app.query_one("#sessions-left").region.width
            assert timeline <= size[0] // 2  # the list takes at most half

    run(scenario)


@pytest.mark.slow
def test_ttl_counts_down_and_expired_keys_vanish(demo_app, monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "8m 00s" in screen_text(app)
            # The clock moves between two ticks of the one-second timer.
            monkeypatch.setenv("MEMWORK_NOW", "2026-11-20T12:05:30Z")
            await wait_until(pilot, lambda: "2m 30s" in screen_text(app))
            text = screen_text(app)
            assert "2m 30s" in text and "8m 00s" not in text
            assert "49m 30s" in text  # lock_owner
            assert "running for 55m 30s" in text
            monkeypatch.setenv("MEMWORK_NOW", "2026-11-20T12:08:01Z")
            await wait_until(pilot, lambda: "retry_after" not in _keys(app))  # without a reload
            assert "retry_after" not in screen_text(app)
            assert _keys(app) == ["branch", "lock_owner", "pr"]

    run(scenario)


@pytest.mark.slow
def test_an_agent_observation_shows_up_without_moving_the_selection(
    demo_app, demo_path: Path
) -> None:
    active = _active(demo_path)
    before = len(sessions.observations(Store(demo_path), active["id"]))

    async def scenario() -> None:
        app = demo_app(poll=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            sessions_table = app.query_one("#sessions", VirtualTable)
            assert sessions_table.cursor_key == active["id"]
            timeline = await _focus(pilot, "timeline")
            await pilot.press("up", "up", "up")
            chosen = timeline.cursor_key
            command = [sys.executable, "-m", "memwork", "--db", str(demo_path)]
            command += ["observe", "--session", active["id"], "hello from the agent"]
            done = await asyncio.to_thread(
                subprocess.run, command, env=python_env(), capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
            for _ in range(30):
                await pilot.pause(0.1)
                if "hello from the agent" in screen_text(app):
                    break
            text = screen_text(app)
            assert "hello from the agent" in text
            assert f"Observations ({before + 1})" in text
            assert sessions_table.cursor_key == active["id"]
            assert timeline.cursor_key == chosen
            assert timeline.has_focus

    run(scenario)


@pytest.mark.slow
def test_the_timeline_follows_new_observations_at_its_end(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            timeline = app.query_one("#timeline", VirtualTable)
            assert timeline.cursor_row == timeline.row_count - 1  # newest last, selected
            store = Store(demo_path)
            sessions.observe(store, active["id"], "tail me", now=NOW, actor="cli")
            app.store_changed()
            await settle(pilot)
            assert timeline.row_count == 15
            assert timeline.cursor_row == 14
            assert "tail me" in screen_text(app)

    run(scenario)


def test_a_session_an_agent_named_shows_its_id_as_implicit(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            store = Store(demo_path)
            wm_keys.set_key(store, "run-42", "plan", "retry", now=NOW, actor="cli")
            app.store_changed()
            await settle(pilot)
            table = app.query_one("#sessions", VirtualTable)
            assert table.row_key_at(0) == "run-42"  # the newest
            assert "run-42" in screen_text(app)
            table.focus()
            await pilot.press("home")
            await settle(pilot)
            assert table.cursor_key == "run-42"
            assert "run-42 (implicit: created by its first use)" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_add_an_observation_from_a_form(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("o")
            await settle(pilot)
            assert "Observe in “Migrate orders.status to an enum”" in screen_text(app)
            await pilot.press("ctrl+s")  # empty: the form says why and stays open
            await settle(pilot)
            assert "content: must not be empty" in screen_text(app)
            await pilot.press(*"5k batches")
            await pilot.press("tab", "ctrl+a", "ctrl+k", *"decision", "tab", *"backfill")
            await pilot.press("ctrl+s")
            await settle(pilot)
            text = screen_text(app)
            assert "Observe in" not in text
            assert "5k batches" in text  # selected, shown in full
            assert "#15 decision  2026-11-20 12:00:00  #backfill" in text
            stored = sessions.observations(Store(demo_path), active["id"])[-1]
            assert stored["content"] == "5k batches"
            assert stored["kind"] == "decision" and stored["tags"] == ["backfill"]
            assert stored["id"] == app.query_one("#timeline", VirtualTable).cursor_key

    run(scenario)


@pytest.mark.slow
def test_end_a_session_with_a_summary(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("e")
            await settle(pilot)
            assert "End “Migrate orders.status to an enum”?" in screen_text(app)
            await pilot.press("escape")  # cancelled: nothing changes
            await settle(pilot)
            assert _session(demo_path, active["id"])["status"] == "active"
            await pilot.press("e")
            await settle(pilot)
            await pilot.press(*"Enum in")
            await pilot.press("ctrl+s")
            await settle(pilot)
            stored = _session(demo_path, active["id"])
            assert stored["status"] == "ended"
            assert stored["summary"] == "Enum in"
            text = screen_text(app)
            assert "○ ended" in text and "summary Enum in" in text
            assert "0 active" in text
            # An ended session cannot end again: e leaves the footer and says why.
            assert "e End" not in text.splitlines()[-1]
            toasts = capture_toasts(app)
            await pilot.press("e")
            await settle(pilot)
            assert toasts == ["This session has already ended"]

    run(scenario)


@pytest.mark.slow
def test_set_a_key_with_a_ttl_then_delete_it(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("s")
            await settle(pilot)
            assert "Set a working-memory key" in screen_text(app)
            await pilot.press(*"owner", "tab", *"me", "tab", *"soon", "ctrl+s")
            await settle(pilot)
            assert "ttl: must be seconds" in screen_text(app)  # stays open, says why
            await pilot.press("ctrl+a", "ctrl+k", *"5m", "ctrl+s")
            await settle(pilot)
            entry = wm_keys.get_key(Store(demo_path), active["id"], "owner", now=NOW)
            assert entry["value"] == "me" and entry["ttl_remaining"] == 300
            assert "5m 00s" in screen_text(app)
            keys = await _focus(pilot, "wm-keys")
            keys.move_cursor(_keys(app).index("owner"))
            await pilot.press("d")
            await settle(pilot)
            assert "Delete key 'owner'?" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            with pytest.raises(NotFound):
                wm_keys.get_key(Store(demo_path), active["id"], "owner", now=NOW)
            assert "owner" not in _keys(app)

    run(scenario)


@pytest.mark.slow
def test_shared_keys_show_their_scope_and_d_deletes_from_it(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)
    project = f"project:{active['project']}"
    store = Store(demo_path)
    wm_scopes.set_key(store, None, "deploy", "friday", scope=project, now=NOW, actor="cli")
    store.close()

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert "deploy" in _keys(app)
            assert "deploy (project)" in screen_text(app)  # where it comes from
            keys = await _focus(pilot, "wm-keys")
            keys.move_cursor(_keys(app).index("deploy"))
            await pilot.press("d")
            await settle(pilot)
            assert f"Delete shared key 'deploy' from {project}?" in screen_text(app)
            assert "Every session of project checkout stops seeing it" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            await wait_until(pilot, lambda: "deploy" not in _keys(app))
            shown = wm_scopes.list_keys(Store(demo_path), None, scope=project, now=NOW)
            assert shown == []

    run(scenario)


@pytest.mark.slow
def test_delete_key_only_applies_to_the_keys_list(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            keys = _wm(demo_path, active["id"])["keys"]
            assert keys
            assert "d Delete key" not in screen_text(app)  # the sessions list has the focus
            toasts = capture_toasts(app)
            await pilot.press("d")
            await settle(pilot)
            assert "Delete key" not in screen_text(app)
            # Not silence: the keys say where they work.
            await pilot.press("r")
            await settle(pilot)
            assert toasts == [
                "d (Delete key) works in the working-memory keys list: Tab to it first",
                "r (Restore) works in the working-memory checkpoint list: Tab to it first",
            ]
            await _focus(pilot, "wm-keys")
            assert "d Delete key" in screen_text(app)
            assert _wm(demo_path, active["id"])["keys"] == keys  # nothing was deleted

    run(scenario)


@pytest.mark.slow
def test_delete_forgets_a_session_or_an_observation_after_a_confirmation(
    demo_app, demo_path: Path
) -> None:
    active = _active(demo_path)
    observations = sessions.observations(Store(demo_path), active["id"])
    last = observations[-1]

    def stored() -> str:
        """The observation tables' files (the audit keeps an id, as the fact)."""
        return "\n".join(
            p.read_text(errors="replace")
            for p in demo_path.iterdir()
            if p.is_file() and p.name.startswith("observations")
        )

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            # In the timeline, Delete names the observation under the cursor.
            timeline = await _focus(pilot, "timeline")
            timeline.move_cursor(len(observations) - 1)
            await pilot.press("delete")
            await settle(pilot)
            assert f"Forget observation #{last['seq']} for good?" in screen_text(app)
            await pilot.press("n")  # declined: nothing changes
            await settle(pilot)
            assert len(sessions.observations(Store(demo_path), active["id"])) == len(observations)
            await pilot.press("delete")
            await settle(pilot)
            await pilot.press("y")
            await settle(pilot)
            kept = sessions.observations(Store(demo_path), active["id"])
            assert [o["id"] for o in kept] == [o["id"] for o in observations[:-1]]
            assert last["id"] not in stored()
            # From the sessions list, Delete forgets the whole session.
            await _focus(pilot, "sessions")
            await pilot.press("delete")
            await settle(pilot)
            assert "Forget session 'Migrate orders.status to an enum' for good?" in screen_text(app)
            await pilot.press("y")
            await settle(pilot)
            with pytest.raises(NotFound):
                sessions.get_session(Store(demo_path), active["id"])
            assert active["id"] not in [s["id"] for s in _listed(demo_path)]
            assert not [p for p in demo_path.iterdir() if active["id"] in p.name]

    run(scenario)


@pytest.mark.slow
def test_w_lists_the_work_items_and_a_key_changes_a_status(demo_app, demo_path: Path) -> None:
    from memwork.core.domain import actions

    listed = actions.list_actions(Store(demo_path))
    first = listed[0]
    assert first["workable"] and first["status"] == "active"
    waiting = next(a for a in listed if first["id"] in a["waiting_for"])

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("w")
            await settle(pilot)
            frontier = sum(1 for a in listed if a["workable"])
            assert f"Work items · {len(listed)} · {frontier} to do now (▶)" in screen_text(app)
            await pilot.press("down")
            await settle(pilot)
            assert f"waits for: {first['title']}" in screen_text(app)
            await pilot.press("up", "d")  # the first is done: what waited for it joins
            await wait_until(
                pilot,
                lambda: actions.get_op(Store(demo_path), first["id"])["status"] == "done",
            )
            await settle(pilot)
            assert actions.get_op(Store(demo_path), waiting["id"])["workable"] is True
            assert f"Work items · {len(listed)} · {frontier} to do now" in screen_text(app)
            await pilot.press("escape")
            await settle(pilot)
            assert "Work items" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_checkpoint_then_restore_replaces_the_working_memory(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            existing = _wm(demo_path, active["id"])["checkpoints"]
            assert existing  # the demo's checkpoint, restored below
            demo_checkpoint = existing[0]
            await pilot.press("c")
            await settle(pilot)
            await pilot.press(*"swap", "ctrl+s")
            await settle(pilot)
            checkpoints = _wm(demo_path, active["id"])["checkpoints"]
            assert [c["description"] for c in checkpoints] == [
                *(c["description"] for c in existing),
                "swap",
            ]
            assert "11-20 12:00  swap" in screen_text(app)
            # Change the working memory, then restore the demo's checkpoint.
            store = Store(demo_path)
            wm_keys.delete_key(store, active["id"], "pr", now=NOW, actor="cli")
            wm_scratchpad.scratch_add(store, active["id"], "oops", now=NOW, actor="cli")
            app.store_changed()
            await settle(pilot)
            assert "pr" not in _keys(app)
            table = await _focus(pilot, "wm-checkpoints")
            table.move_cursor(0)
            await pilot.press("r")
            await settle(pilot)
            text = screen_text(app)
            assert f"Restore “{demo_checkpoint['description']}”?" in text
            assert "replaces the session's whole working memory" in text
            await pilot.press("y")
            await settle(pilot)
            wm = _wm(demo_path, active["id"])
            state = demo_checkpoint["state"]
            live = sorted(k for k, e in state["kv"].items() if not wm_state.is_expired(e, NOW))
            assert "pr" in live and "oops" not in [e["text"] for e in state["scratchpad"]]
            assert [k["key"] for k in wm["keys"]] == live
            assert [e["text"] for e in wm["scratchpad"]] == [e["text"] for e in state["scratchpad"]]
            assert "pr" in _keys(app)

    run(scenario)


@pytest.mark.slow
def test_task_and_scratchpad_from_the_keyboard(demo_app, demo_path: Path) -> None:
    active = _active(demo_path)

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("t")
            await settle(pilot)
            assert "Task state" in screen_text(app)
            await pilot.press("tab", "tab", "tab")  # task id → description → status → step
            await pilot.press("ctrl+a", "ctrl+k", "6", "ctrl+s")
            await settle(pilot)
            task = _wm(demo_path, active["id"])["task"]
            assert task["current_step"] == 6 and task["progress_percent"] == 75.0
            assert "step 6/8" in screen_text(app) and "75%" in screen_text(app)
            await pilot.press("a")
            await settle(pilot)
            await pilot.press(*"drop col", "ctrl+s")
            await settle(pilot)
            pad = _wm(demo_path, active["id"])["scratchpad"]
            assert pad[-1]["text"] == "drop col"
            assert "drop col" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_start_a_new_session(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            before = _listed(demo_path)
            live = sum(s["status"] == "active" for s in before)
            await pilot.press("n")
            await settle(pilot)
            await pilot.press(*"Index", "ctrl+s")
            await settle(pilot)
            listed = _listed(demo_path)
            assert len(listed) == len(before) + 1
            new = next(s for s in listed if s["title"] == "Index")
            assert new["agent_id"] == "tui" and new["status"] == "active"
            assert app.query_one("#sessions", VirtualTable).cursor_key == new["id"]
            text = screen_text(app)
            assert f"{len(listed)} sessions · {live + 1} active" in text
            assert "No observations yet (o adds one)" in text
            assert "No keys (s sets one)" in text and "No task (t sets one)" in text

    run(scenario)


@pytest.mark.slow
def test_jump_to_an_observation(demo_app, demo_path: Path) -> None:
    store = Store(demo_path)
    ended = sessions.list_sessions(store)[-1]
    target = sessions.observations(store, ended["id"])[2]

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.pane("sessions").jump_to(f"{ended['id']}/{target['id']}")
            await settle(pilot)
            assert app.query_one("#sessions", VirtualTable).cursor_key == ended["id"]
            timeline = app.query_one("#timeline", VirtualTable)
            assert timeline.cursor_key == target["id"] and timeline.has_focus
            assert ended["title"] in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_sessions_pane_snapshot(demo_app, snap_compare) -> None:
    async def ready(pilot) -> None:
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=ready, terminal_size=SIZE)


@pytest.mark.slow
def test_sessions_pane_keys_focused_snapshot(demo_app, snap_compare) -> None:
    async def ready(pilot) -> None:
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)

    assert snap_compare(demo_app(), run_before=ready, press=["down"], terminal_size=SIZE)
