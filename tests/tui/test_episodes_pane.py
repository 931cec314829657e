"""The Episodes pane, driven by real key presses on the demo store and on a big store."""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import OptionList, Sparkline

from memwork.core.domain import aggregates, cards, episodes
from memwork.core.storage.store import Store
from memwork.tui.app import make_app
from memwork.tui.panes.episodes import EpisodesPane
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle

ROOT = Path(__file__).resolve().parents[2]


def _pane(app) -> EpisodesPane:
    return app.query_one(EpisodesPane)


def _table(app) -> VirtualTable:
    return app.query_one("#episodes-table", VirtualTable)


def _keys(table: VirtualTable) -> list[str | None]:
    return [table.row_key_at(i) for i in range(table.row_count)]


def _read(path: Path, fn, *args):
    store = Store(path)
    with store.reading():
        return fn(store, *args)


def _first_episode(app, path: Path, wanted) -> tuple[int, dict]:
    """The first row (newest first) whose stored episode is ``wanted``: (position, episode)."""
    for position, key in enumerate(_keys(_table(app))):
        doc = _read(path, episodes.get_episode, key)
        if wanted(doc):
            return position, doc
    raise AssertionError("no such episode in the demo")


@pytest.mark.slow
def test_lists_newest_first_with_scores_coloured_by_outcome(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            text = screen_text(app)
            total = _read(demo_path, episodes.count)
            newest = _read(demo_path, episodes.get_episode, f"#{total}")
            assert f"{total} episodes" in text
            assert f"#{total}" in text and f"#{total - 1}" in text
            assert f"{newest['score']:.2f} ✗" in text  # the demo ends on a failure
            table = _table(app)
            assert table.row_count == total
            assert table.cursor_key == newest["id"]
            assert app.focused is table
            # Newest first, all the way down.
            indexes = [row[0] for row in _pane(app).view_rows]
            assert indexes == sorted(indexes, reverse=True)

    run(scenario)


@pytest.mark.slow
def test_filters_by_task_and_outcome_narrow_the_table(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            total = _read(demo_path, episodes.count)
            task = _read(demo_path, aggregates.read_task, "deploy-api")
            table = _table(app)
            await pilot.press("t")  # the task list opens; typing jumps to a task
            await pilot.press(*"deploy", "enter")
            await settle(pilot)
            assert table.row_count == task["episodes"] < total
            assert {row[2] for row in _pane(app).view_rows} == {"deploy-api"}
            assert f"{task['episodes']} of {total}" in screen_text(app)
            assert app.focused is table  # back on the list after choosing

            await pilot.press("o")  # all → success
            await settle(pilot)
            assert table.row_count == task["outcomes"]["success"]
            assert {row[4] for row in _pane(app).view_rows} == {"success"}
            await pilot.press("o", "o")  # → partial → failure
            await settle(pilot)
            assert table.row_count == task["outcomes"]["failure"]
            scores = "".join(str(table.source.row(i).cells[2]) for i in range(table.row_count))
            assert "✓" not in scores

            await pilot.press("x")  # clear both
            await settle(pilot)
            assert table.row_count == total
            assert f"{total} episodes" in screen_text(app)

            await pilot.press("o", "o", "o")  # outcome alone: failures of every task
            await settle(pilot)
            failures = sum(t["outcomes"]["failure"] for t in _read(demo_path, aggregates.all_tasks))
            assert table.row_count == failures
            await pilot.press("o")  # back to all
            await settle(pilot)
            assert table.row_count == total

    run(scenario)


@pytest.mark.slow
def test_sparkline_and_detail_follow_the_cursor(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            table = _table(app)
            spark = app.query_one("#episodes-sparkline", Sparkline)
            for _ in range(3):
                doc = _read(demo_path, episodes.get_episode, table.cursor_key)
                task = _read(demo_path, aggregates.read_task, doc["task_id"])
                text = screen_text(app)
                assert f"Episode #{doc['index']}" in text
                assert doc["summary"][:30] in " ".join(text.split())
                assert list(spark.data) == task["score_tail"][-200:]
                assert f"{task['task_id']} · {task['episodes']} · mean" in text
                assert f"mean {task['mean_score']:.2f}" in text
                await pilot.press("down")
                await settle(pilot)

            # An episode with an error and a mistake card shows both, with the card's lesson.
            position, doc = _first_episode(
                app, demo_path, lambda d: d["errors"] and d["card_ids"] and d["worker_id"]
            )
            await pilot.press("home", *["down"] * position)
            await settle(pilot)
            assert table.cursor_key == doc["id"]
            text = screen_text(app)
            error = doc["errors"][0]
            card = _read(demo_path, cards.resolve, doc["card_ids"][0])
            assert f"Episode #{doc['index']}" in text
            assert f"Errors ({len(doc['errors'])})" in text
            assert error["error_type"] in text
            assert f"[{card['mistake_type']}] seen {card['seen_count']}×" in text
            assert card["lesson"][:25] in text
            assert "worker " + doc["worker_id"] in text

            # Mistakes of one episode, successes of another.
            rows = _pane(app).view_rows
            for field, title in (("mistakes", "Mistakes ("), ("successes", "Successes (")):
                position, doc = next(
                    (i, d)
                    for i, row in enumerate(rows)
                    if (d := _read(demo_path, episodes.get_episode, row[1]))[field]
                )
                table.move_cursor(position)
                await settle(pilot)
                text = " ".join(screen_text(app).split())
                assert title in text and doc[field][0][:30] in text

    run(scenario)


@pytest.mark.slow
def test_an_agents_new_episode_appears_on_top_keeping_the_selection(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            table = _table(app)
            await pilot.press("down", "down")
            await settle(pilot)
            selected = table.cursor_key
            total = _read(demo_path, episodes.count)
            store = Store(demo_path)  # another writer, as an agent's CLI would be
            episodes.record_episodes(
                store,
                [{"task_id": "deploy-api", "score": 0.91, "steps": 7, "summary": "Fresh from CI"}],
                now=datetime(2026, 11, 20, 11, 59, tzinfo=UTC),
                actor="cli",
            )
            app.store_changed()  # what the app's poll does when the store moves
            await settle(pilot)
            assert table.row_count == total + 1
            assert table.cursor_key == selected
            text = screen_text(app)
            assert f"#{total + 1}" in text and "Fresh from CI" in text
            assert f"{total + 1} episodes" in text

    run(scenario)


@pytest.mark.slow
def test_an_error_memwork_named_says_so(demo_app, demo_path: Path) -> None:
    # A failure reported without an error gets memwork's IterationError (the context's
    # past failures need a line); the detail says the agent never reported that class.
    store = Store(demo_path)
    for summary, errors in (
        ("Reported its own error", [{"error_type": "TimeoutError", "message": "30s"}]),
        ("Failed without a word", []),
    ):
        episodes.record_episodes(
            store,
            [
                {
                    "task_id": "deploy-api",
                    "score": 0.1,
                    "steps": 3,
                    "outcome": "failure",
                    "summary": summary,
                    "errors": errors,
                }
            ],
            now=datetime(2026, 11, 20, 11, 59, tzinfo=UTC),
            actor="cli",
        )

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            await pilot.press("home")
            await settle(pilot)
            text = " ".join(screen_text(app).split())
            assert "Failed without a word" in text
            assert "IterationError" in text
            assert "named by memwork (no error reported)" in text
            await pilot.press("down")
            await settle(pilot)
            text = " ".join(screen_text(app).split())
            assert "Reported its own error" in text and "TimeoutError" in text
            assert "named by memwork" not in text

    run(scenario)


@pytest.mark.slow
def test_c_opens_the_episodes_mistake_card(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "episodes")
            position, doc = _first_episode(app, demo_path, lambda d: d["card_ids"])
            await pilot.press(*["down"] * position)
            await settle(pilot)
            assert _table(app).cursor_key == doc["id"]
            await pilot.press("c")
            await settle(pilot)
            assert app.active_pane == "cards"
            assert app.query_one("#cards-table", VirtualTable).cursor_key == doc["card_ids"][0]

    run(scenario)


@pytest.mark.slow
def test_search_jumps_to_an_old_episode(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)  # the search index builds in the background
            old = _read(demo_path, episodes.get_episode, "#5")
            # The index, the task and the summary's longest word: what a user remembers.
            word = max(re.findall(r"[a-z]+", old["summary"].lower()), key=len)
            await pilot.press("ctrl+f")
            await settle(pilot)
            await pilot.press(*f"{old['index']} {old['task_id']} {word}")
            await settle(pilot)
            hits = app.screen.query_one("#hits", OptionList)
            assert hits.option_count
            for _ in range(hits.option_count):  # walk to the first episode (history ranks too)
                option = hits.get_option_at_index(hits.highlighted or 0)
                if (option.id or "").startswith("episode|"):
                    break
                await pilot.press("down")
            assert option.id == f"episode|{old['id']}"
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "episodes"
            table = _table(app)
            assert table.cursor_key == old["id"]
            assert app.focused is table
            assert f"Episode #{old['index']}" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_big_store_pages_to_the_oldest_episode(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import synthetic

    path = tmp_path / "big"
    store = Store(path)
    items = list(synthetic.episodes(11, 20_000))
    now = datetime(2026, 11, 19, tzinfo=UTC)
    for start in range(0, len(items), 2000):
        episodes.record_episodes(store, items[start : start + 2000], now=now, actor="test")
    oldest = _read(path, episodes.get_episode, "#1")

    async def scenario() -> None:
        # Paging is what is tested: preparing the ten hidden panes over 20,000 episodes
        # in idle time would only compete with the keys.
        app = make_app(path, poll=False, prepare=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("2")
            await pilot.pause()
            table = _table(app)
            assert table.row_count >= 100  # the newest, from the aggregate, at once
            assert table.row_key_at(0) == _read(path, episodes.get_episode, "#20000")["id"]
            await settle(pilot)
            assert table.row_count == 20_000
            assert "20,000 episodes" in screen_text(app)
            for _ in range(3):
                await pilot.press("pagedown")
            assert table.cursor_row > 60
            await pilot.press("end")
            await settle(pilot)
            assert table.cursor_row == 19_999
            assert table.cursor_key == oldest["id"]
            assert "Episode #1 " in screen_text(app)

            # A filter over the whole index, then a jump to an old episode it hides.
            await pilot.press("o")
            await settle(pilot)
            assert 0 < table.row_count < 20_000
            await pilot.press("home")
            failure = next(row for row in _pane(app).all_rows[::-1] if row[4] != "success")
            app.query_one(EpisodesPane).jump_to(failure[1])
            await settle(pilot)
            assert table.cursor_key == failure[1]
            assert table.row_count == 20_000  # the filter gave way to show it

    run(scenario)


async def _shown(pilot: Pilot, pane: str, *keys: str) -> None:
    """Switch to ``pane``, wait until it shows its rows (as a user sees them before
    pressing on), then press ``keys``. A key pressed while a busy machine is still
    loading the pane met an empty table: the snapshot showed the first episode, not the
    second, once in a whole-suite run."""
    await settle(pilot)
    await pilot.press(pane)
    await settle(pilot)
    await pilot.press(*keys)
    await settle(pilot)


@pytest.mark.slow
def test_episodes_pane_snapshot(demo_app, snap_compare) -> None:
    assert snap_compare(
        demo_app(), run_before=lambda pilot: _shown(pilot, "2", "down"), terminal_size=SIZE
    )


@pytest.mark.slow
def test_episodes_filtered_snapshot(demo_app, snap_compare) -> None:
    assert snap_compare(
        demo_app(),
        run_before=lambda pilot: _shown(pilot, "2", "t", *"review", "enter", "o", "o"),
        terminal_size=SIZE,
    )
