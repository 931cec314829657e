"""The workbench shell: pane switching, help, palette, search, theme, quit, --demo."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import OptionList

import memwork.tui.app
from memwork.core.domain import lessons
from memwork.core.storage.paths import demo_source
from memwork.core.storage.store import Store
from memwork.tui.app import PANES
from memwork.tui.launch import demo_copy, launch
from memwork.tui.pane_list import pane_key
from memwork.tui.screens.form import FormScreen
from memwork.tui.screens.search import hit_label, query_words
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.conftest import folder_digest
from tests.tui.conftest import SIZE, capture_toasts, run, screen_text, settle, wait_until


@pytest.mark.slow
def test_digits_and_letters_switch_to_the_eleven_panes_in_order(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            text = screen_text(app)
            for n, pane in enumerate(PANES, start=1):
                # Every pane is named (in 120 columns, eleven tabs take their short names).
                named = (f"{pane_key(n, pane)} {t}" for t in (pane.TITLE, pane.SHORT_TITLE) if t)
                assert any(name in text for name in named), text
            expected = [
                "sessions",
                "episodes",
                "cards",
                "lessons",
                "slots",
                "checkpoints",
                "context",
                "history",
                "review",
                "graph",
                "replay",
            ]
            assert [p.PANE_ID for p in PANES] == expected
            keys = [*"123456789", "W", "R"]
            for key, pane_id in zip(keys, expected, strict=True):
                await pilot.press(key)
                await settle(pilot)
                assert app.active_pane == pane_id

    run(scenario)


@pytest.mark.slow
def test_help_screen_lists_every_pane_and_its_keys(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("question_mark")
            await settle(pilot)
            text = screen_text(app)
            assert "1 Sessions" in text and "Observe" in text  # the current pane's keys
            # The whole table, scrolled or not: every pane's keys are listed.
            everything = app.screen.plain_text()
            for pane in PANES:
                assert pane.TITLE in everything
            assert "Reinforce" in everything and "Decay" in everything
            # Keys the footer does not show are listed too.
            assert "Decay now" in everything and "Rules / lessons list" in everything
            await pilot.press("escape")
            await settle(pilot)
            assert "Observe — " not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_help_opens_on_the_keys_of_the_current_pane(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.press("5")
            await settle(pilot)
            await pilot.press("question_mark")
            await settle(pilot)
            text = screen_text(app)
            assert "5 Slots" in text and "Limit/desc." in text
            # The pane's keys come first, the app's after them.
            assert "Everywhere" not in text or text.index("5 Slots") < text.index("Everywhere")

    run(scenario)


@pytest.mark.slow
def test_command_palette_reaches_a_pane_action(demo_app, demo_path: Path) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("4")
            await settle(pilot)
            table = app.query_one("#lessons", VirtualTable)
            lesson_id = table.cursor_key
            store = Store(demo_path)
            with store.reading():
                before = lessons.resolve(store, lesson_id)["reinforcements"]
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"Rules & lessons: Reinforce")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            with store.reading():
                assert lessons.resolve(store, lesson_id)["reinforcements"] == before + 1

    run(scenario)


@pytest.mark.slow
def test_palette_shows_record_text_as_typed_and_lists_quit_once(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            app.refresh_search_index()
            await settle(pilot)
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"silenced the alert")
            await settle(pilot)
            # The rule's own words, brackets included (markup used to eat "[AVOID]").
            assert "rule: [AVOID] Silenced the alert without a ticket" in screen_text(app)
            await pilot.press("ctrl+a", "ctrl+k", *"quit")
            await settle(pilot)
            lines = screen_text(app).splitlines()[:-1]  # not the footer
            hits = [line for line in lines if "Quit" in line]
            assert len(hits) == 1, hits  # q and ctrl+q are one action; Textual's own is gone
            assert "key q / ctrl+q" in "\n".join(lines)

    run(scenario)


@pytest.mark.slow
def test_the_palette_finds_a_record_an_agent_wrote_while_it_was_open(
    demo_app, demo_path: Path
) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            app.refresh_search_index()
            await settle(pilot)
            # Another process writes after the index was built.
            from datetime import UTC, datetime

            lessons.add_lesson(
                Store(demo_path),
                "Quarantine [flaky] suites before release",
                now=datetime.now(UTC),
                actor="agent",
            )
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"quarantine")
            await settle(pilot)
            # It used to answer "No matches found" until / happened to rebuild the index.
            assert "lesson: Quarantine [flaky] suites before release" in screen_text(app)

    run(scenario)


async def _search(pilot, query: str) -> None:
    """Open the global search (ctrl+f; / filters the list in focus) and type ``query``."""
    await settle(pilot)
    await pilot.press("ctrl+f")
    await settle(pilot)
    await pilot.press(*query)
    await settle(pilot)


@pytest.mark.slow
def test_search_jumps_to_the_record(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await _search(pilot, "runbook paging")
            assert "Read the runbook before paging anyone" in screen_text(app)
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "lessons"
            table = app.query_one("#lessons", VirtualTable)
            with app.service.store.reading():
                chosen = lessons.resolve(app.service.store, table.cursor_key)
            assert chosen["content"] == "Read the runbook before paging anyone"
            # The record's own list has the focus, so its keys and detail are what show.
            await settle(pilot)
            assert table.has_focus
            text = screen_text(app)
            assert "r Reinforce" in text  # the lessons list's keys in the footer
            assert f"{chosen['id']}" in text

    run(scenario)


@pytest.mark.slow
def test_theme_toggles_and_q_quits(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+t")
            assert app.theme == "textual-light"
            await pilot.press("ctrl+t")
            assert app.theme == "textual-dark"
            await pilot.press("q")
            await pilot.pause()
            assert not app.is_running

    run(scenario)


def test_demo_copy_leaves_data_demo_untouched() -> None:
    before = folder_digest(demo_source())
    copy = demo_copy()
    store = Store(copy)
    from datetime import UTC, datetime

    try:
        lessons.add_lesson(store, "written to the copy only", now=datetime.now(UTC), actor="test")
        assert folder_digest(demo_source()) == before
        assert copy != demo_source()
    finally:
        shutil.rmtree(copy.parent)


def test_demo_workbench_removes_its_temporary_copy_on_quit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opened: list[Path] = []

    class QuitsAtOnce:
        return_code = 0

        def __init__(self, store: Store, **_: object) -> None:
            opened.append(store.path)

        def run(self) -> None:
            assert (opened[0] / "store.json").exists()

    monkeypatch.setattr(memwork.tui.app, "make_app", QuitsAtOnce)
    assert launch(None, demo=True) == 0
    assert opened and not opened[0].exists() and not opened[0].parent.exists()


@pytest.mark.slow
def test_help_snapshot(demo_app, snap_compare) -> None:
    assert snap_compare(demo_app(), press=["question_mark"], terminal_size=SIZE)


@pytest.mark.slow
def test_search_names_the_session_of_an_observation_and_jumps_to_it(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            # The session's title is searchable with the note's words, and shown apart
            # from the kind, so recurring notes in different sessions tell apart.
            await _search(pilot, "nightly worker-25")
            text = screen_text(app)
            assert "observation  tool · Nightly log cleanup: rotated" in text
            await pilot.press("enter")
            await settle(pilot)
            assert app.active_pane == "sessions"
            assert "Nightly log cleanup" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_search_hits_highlight_the_query_and_wrap_under_their_title(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await _search(pilot, "rolled out")
            lines = screen_text(app).splitlines()
            first = next(i for i, line in enumerate(lines) if "episode" in line and "#" in line)
            title_at = lines[first].index("#")
            # The wrapped rest of a long title starts under the title, not under the kind.
            follow = lines[first + 1]
            assert follow[:title_at].strip(" █") == "" and follow[title_at:].strip()
            await pilot.press("ctrl+a", "ctrl+k", *"feature flags surprising")
            await settle(pilot)
            assert "(forgotten) Old feature flags cause surprising" in screen_text(app)

    run(scenario)
    label = hit_label("rule", "[AVOID] Rolled out on a Friday", query_words("rolled f fri"))
    cell = label.columns[1]._cells[0]  # noqa: SLF001 - the title cell of the grid
    assert cell.plain == "[AVOID] Rolled out on a Friday"  # brackets kept, not markup
    marked = {cell.plain[span.start : span.end] for span in cell.spans}
    assert marked == {"Rolled", "Fri"}  # the query's words, whatever their case


@pytest.mark.slow
def test_search_starts_at_its_second_character(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await _search(pilot, "r")
            assert "Keep typing: a search starts at 2 characters" in screen_text(app)
            assert app.screen.query_one("#hits", OptionList).option_count == 0
            await pilot.press("u", "n", "b", "o", "o", "k")
            await settle(pilot)
            assert app.screen.query_one("#hits", OptionList).option_count > 0

    run(scenario)


@pytest.mark.slow
def test_tab_cycles_the_panes_lists_in_the_order_the_help_gives(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            visited = [app.focused.id if app.focused else None]
            for _ in range(5):
                await pilot.press("tab")
                await pilot.pause()
                visited.append(app.focused.id if app.focused else None)
            # The pane's lists, then back to the first (Tab used to land on the tab bar
            # next, where no pane key answers).
            assert visited == [
                "sessions",
                "wm-keys",
                "wm-scratch",
                "wm-checkpoints",
                "timeline",
                "sessions",
            ]
            await pilot.press("question_mark")
            await settle(pilot)
            help_text = " ".join(app.screen.plain_text(width=400).split())
            # The help names them in the same order (it used to put the timeline second).
            names = ["sessions list", "keys", "scratchpad", "checkpoints", "timeline"]
            at = [help_text.index(name, help_text.index("Tab moves")) for name in names]
            assert at == sorted(at), help_text

    run(scenario)


@pytest.mark.slow
def test_hidden_panes_are_prepared_in_idle_time(demo_app) -> None:  # noqa: ANN001

    async def scenario() -> None:
        app = demo_app(prepare=True)
        async with app.run_test(size=SIZE) as pilot:
            assert not app.all_panes_prepared
            await wait_until(pilot, lambda: app.all_panes_prepared)
            # Every hidden pane has its data: a first switch only shows it.
            assert all(not app.pane(p.PANE_ID).stale for p in PANES)
            await pilot.press("8")
            await pilot.pause()
            assert "History" in screen_text(app) and "entries" in screen_text(app)

    run(scenario)


def test_quitting_stops_preparing_hidden_panes(demo_app) -> None:  # noqa: ANN001
    """A pane's turn to be prepared could come after q: mounting it into a tab that was
    being taken down ended the workbench with a traceback (exit 1) now and then."""

    async def scenario() -> None:
        app = demo_app(prepare=True)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            attached = {p.PANE_ID for p in PANES if app.pane(p.PANE_ID).parent is not None}
            app.exit()
            await app._prepare_next_pane()  # the idle timer's call, after the quit
            now = {p.PANE_ID for p in PANES if app.pane(p.PANE_ID).parent is not None}
            assert now == attached

    run(scenario)


@pytest.mark.slow
def test_palette_never_acts_on_a_record_out_of_sight(demo_app, demo_path: Path) -> None:
    """ "Rules & lessons: Reinforce" chosen on Sessions used to reinforce whichever lesson
    had been selected there earlier, unseen. It shows the lessons and asks for a pick."""

    async def scenario() -> None:
        app = demo_app(prepare=True)  # the hidden Lessons pane has a selection
        async with app.run_test(size=SIZE) as pilot:
            toasts = capture_toasts(app)
            await wait_until(pilot, lambda: app.all_panes_prepared)
            await settle(pilot)
            assert app.active_pane == "sessions"
            lesson_id = app.query_one("#lessons", VirtualTable).cursor_key
            store = Store(demo_path)
            with store.reading():
                before = lessons.resolve(store, lesson_id)["reinforcements"]
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"Rules & lessons: Reinforce", "enter")
            await settle(pilot)
            assert app.active_pane == "lessons"
            with store.reading():
                assert lessons.resolve(store, lesson_id)["reinforcements"] == before
            assert any("press r (Reinforce)" in t for t in toasts), toasts
            # Now the lesson is in view: its key acts on it.
            await pilot.press("r")
            await settle(pilot)
            with store.reading():
                assert lessons.resolve(store, lesson_id)["reinforcements"] == before + 1

    run(scenario)


@pytest.mark.slow
def test_palette_runs_an_action_on_no_record_from_any_pane(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+p")
            await settle(pilot)
            await pilot.press(*"Slots: New", "enter")
            await settle(pilot)
            assert app.active_pane == "slots"
            assert isinstance(app.screen, FormScreen)

    run(scenario)


@pytest.mark.slow
def test_search_finds_chinese_and_thai_inside_their_unspaced_lines(tmp_path: Path) -> None:
    """Chinese and Thai are written without spaces: a name inside a line is found, and
    one Chinese character (often a whole word) starts a search as two letters do."""
    from memwork import Memory
    from memwork.tui.app import make_app

    memory = Memory(tmp_path / "s")
    session = memory.start_session(agent="travel")["id"]
    for note in ["我昨天去了北京看我的奶奶", "我的猫很可爱", "สวัสดีครับ วันนี้อากาศดี"]:
        memory.observe(session, note)
    memory.close()

    async def scenario() -> None:
        app = make_app(tmp_path / "s", poll=False, prepare=False, title_suffix="cjk")
        async with app.run_test(size=SIZE) as pilot:
            for query, found in [("北京", "北京看我"), ("猫", "我的猫"), ("อากาศ", "อากาศดี")]:
                await _search(pilot, query)
                hits = app.screen.query_one("#hits", OptionList)
                assert hits.option_count == 1, query
                assert found in screen_text(app)
                await pilot.press("escape")
            await _search(pilot, "ส")  # one Thai letter means little: still too short
            assert "Keep typing" in screen_text(app)

    run(scenario)
