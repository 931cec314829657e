"""The workbench in an 80x24 terminal: every list keeps its text column, every form
and dialog fits with its buttons in reach, and the footer ends cleanly; and at 140x45,
where there is room, titles and labels are not cut."""

from __future__ import annotations

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Select
from textual.widgets._footer import FooterKey

from memwork.tui.app import PANES, MemworkApp
from memwork.tui.pane_list import pane_key
from memwork.tui.panes.lessons import LessonsPane
from memwork.tui.screens.clusters import ClustersScreen
from memwork.tui.screens.confirm import ConfirmScreen
from memwork.tui.screens.form import FormScreen
from memwork.tui.widgets.footer import WorkbenchFooter
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import open_pane, run, screen_text, settle

SMALL = (80, 24)

#: pane → (table id, its text column's key, that column's header label)
TEXT_COLUMNS = {
    "sessions": [
        ("sessions", "title", "Title"),
        ("timeline", "content", "Content"),
        ("wm-keys", "value", "Value"),
        ("wm-scratch", "text", "Scratchpad"),
        ("wm-checkpoints", "description", "Description"),
    ],
    "episodes": [("episodes-table", "summary", "Summary")],
    "cards": [("cards-table", "lesson", "Lesson")],
    "lessons": [("rules", "text", "Rule"), ("lessons", "content", "Lesson")],
    "slots": [("slots", "label", "Label")],
    "checkpoints": [("checkpoints", "description", "Description")],
    "history": [("history", "summary", "Summary")],
}


def on_screen(app: MemworkApp, widget: Widget) -> bool:
    """Whether the whole of ``widget`` is drawn, inside the terminal."""
    region = widget.region
    screen = app.screen.region
    visible = app.screen._compositor.visible_widgets  # noqa: SLF001 - what is drawn
    return widget in visible and bool(region) and screen.contains_region(region)


@pytest.mark.slow
def test_every_list_keeps_its_text_column_at_80x24(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SMALL) as pilot:
            for pane_id, tables in TEXT_COLUMNS.items():
                await open_pane(pilot, pane_id)
                lines = screen_text(app).splitlines()
                for table_id, key, label in tables:
                    table = app.query_one(f"#{table_id}", VirtualTable)
                    where = f"{pane_id}: #{table_id}"
                    assert on_screen(app, table) and table.region.height >= 3, where
                    region = table.region
                    header = lines[region.y][region.x : region.right]
                    assert f" {label} " in f"{header} ", f"{where}: {header!r}"
                    assert table.visible_columns()[key] >= 12, where
                    if table.row_count:
                        top = round(table.scroll_y)
                        index = [c.key for c in table.columns].index(key)
                        cell = table.source.row(top).cells[index]
                        plain = cell.plain if isinstance(cell, Text) else str(cell)
                        row = lines[region.y + 1][region.x : region.right]
                        assert plain[:8].strip() in row, f"{where}: {plain!r} not in {row!r}"
                footer = lines[-1].rstrip()
                assert footer.endswith("^p palette"), f"{pane_id}: footer {footer!r}"
            # The Context pane's controls all fit: the style picker is reachable.
            await open_pane(pilot, "context")
            for field_id in ("#context-task", "#context-project", "#context-budget"):
                assert on_screen(app, app.query_one(field_id)), field_id
            assert on_screen(app, app.query_one("#context-style", Select))
            await pilot.press("e")
            await settle(pilot)
            assert app.query_one("#context-style", Select).value == "episodic"

    run(scenario)


async def _check_modal(pilot: Pilot, what: str, *keys: str, tab: bool = False) -> None:
    """Press ``keys``; the modal they open fits, its buttons are drawn and Tab reaches
    the one that acts (pressed for real with ``tab``, else read from the focus chain
    Tab follows); escape closes it."""
    app = pilot.app
    await pilot.press(*keys)  # opening a dialog runs no worker: no need to settle
    screen = app.screen
    assert isinstance(screen, FormScreen | ConfirmScreen | ClustersScreen), (what, screen)
    if isinstance(screen, ClustersScreen):
        assert on_screen(app, screen.query_one("#groups")), what
        assert on_screen(app, screen.query_one(".pane-title")), what
    else:
        act = screen.query_one("#save" if isinstance(screen, FormScreen) else "#yes", Button)
        text = screen_text(app)
        for button in screen.query(Button):
            assert on_screen(app, button), f"{what}: {button.label} not on screen"
            assert str(button.label) in text, f"{what}: {button.label} is cut"
        title = "#form-title" if isinstance(screen, FormScreen) else "#title"
        assert on_screen(app, screen.query_one(title)), what
        assert act in screen.focus_chain, f"{what}: Tab never reaches {act.label}"
        for _ in range(12 if tab else 0):
            if app.focused is act:
                break
            await pilot.press("tab")
        if tab:
            assert app.focused is act, f"{what}: Tab never reached {act.label}"
            assert on_screen(app, act), what
    await pilot.press("escape")
    assert not isinstance(app.screen, FormScreen | ConfirmScreen | ClustersScreen), what


@pytest.mark.slow
def test_every_form_and_dialog_fits_80x24(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app(prepare=False)  # panes load when opened: no idle work to wait for
        async with app.run_test(size=SMALL) as pilot:
            await open_pane(pilot, "sessions")
            for key, what in [
                ("o", "observe"),
                ("s", "set key"),
                ("t", "task state"),  # pressed for real below too
                ("a", "scratchpad note"),
                ("c", "wm checkpoint"),
                ("e", "end session"),
                ("n", "new session"),
            ]:
                await _check_modal(pilot, what, key)
            # The form of the report: Task state's Save was off-screen, out of Tab's reach.
            await _check_modal(pilot, "task state, by Tab", "t", tab=True)
            app.query_one("#wm-keys", VirtualTable).focus()
            await _check_modal(pilot, "delete key", "d")
            app.query_one("#wm-checkpoints", VirtualTable).focus()
            await _check_modal(pilot, "restore wm checkpoint", "r")

            await open_pane(pilot, "cards")
            await _check_modal(pilot, "edit card", "e")
            await _check_modal(pilot, "merge cards", "space", "down", "m")

            await open_pane(pilot, "lessons")
            for key, what in [
                ("a", "add lesson"),
                ("e", "edit lesson"),
                ("f", "forget"),
            ]:
                await _check_modal(pilot, what, key)
            # The demo holds no near-duplicates (m then only says so): show the merge
            # dialog with several groups of long lessons, as m would.
            pane = app.query_one(LessonsPane)
            longest = sorted(pane.lessons.values(), key=lambda x: -len(x["content"]))
            groups = [longest[i : i + 3] for i in range(0, 12, 3)]
            app.push_screen(ClustersScreen(groups, pane.service.now))
            await pilot.pause()
            await _check_modal(pilot, "merge near-duplicates")
            app.query_one("#rules", VirtualTable).focus()
            await _check_modal(pilot, "new rule", "n")

            await open_pane(pilot, "slots")
            for key, what in [("n", "new slot"), ("i", "limit"), ("d", "delete slot")]:
                await _check_modal(pilot, what, key)

            await open_pane(pilot, "checkpoints")
            for key, what in [("c", "create"), ("r", "restore"), ("d", "delete")]:
                await _check_modal(pilot, what, key)

            await open_pane(pilot, "context")
            await _check_modal(pilot, "save to file", "s")

    run(scenario)


@pytest.mark.slow
@pytest.mark.parametrize("pane_id", [pane.PANE_ID for pane in PANES])
def test_each_pane_at_80x24_snapshot(demo_app, snap_compare, pane_id: str) -> None:
    async def ready(pilot: Pilot) -> None:
        await open_pane(pilot, pane_id)

    assert snap_compare(demo_app(), run_before=ready, terminal_size=SMALL)


@pytest.mark.slow
def test_the_session_forms_read_whole_at_140x45(demo_app) -> None:
    """The Task form's button labels were clipped even on a large screen."""

    async def scenario() -> None:
        app = demo_app(prepare=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await open_pane(pilot, "sessions")
            for key, what in [("o", "observe"), ("t", "task state"), ("e", "end session")]:
                await _check_modal(pilot, what, key)

    run(scenario)


@pytest.mark.slow
def test_at_140x45_task_names_are_whole_and_a_session_title_is_whole_above_its_timeline(
    demo_app,
) -> None:
    """A wide screen has the room: task names were cut beside wide details. The Sessions
    list gives its room to the observation timeline (the session's own words), so a long
    title may end in "…" there, but the selected session's title is whole above it."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(140, 45)) as pilot:
            await open_pane(pilot, "episodes")
            table = app.query_one("#episodes-table", VirtualTable)
            index = [c.key for c in table.columns].index("task")
            lines = screen_text(app).splitlines()
            top = table.region.y + 1  # under the header
            for n in range(min(table.row_count, table.region.height - 1)):
                cell = table.source.row(n).cells[index]
                whole = cell.plain if isinstance(cell, Text) else str(cell)
                assert f" {whole} " in lines[top + n], whole

            await open_pane(pilot, "sessions")
            table = app.query_one("#sessions", VirtualTable)
            index = [c.key for c in table.columns].index("title")
            for n in range(table.row_count):
                table.move_cursor(n)
                await settle(pilot)
                cell = table.source.row(n).cells[index]
                title = cell.plain if isinstance(cell, Text) else str(cell)
                text = screen_text(app)
                assert title in text  # whole, above the timeline
                assert title[:20] in text.splitlines()[table.region.y + 1 + n]

    run(scenario)


@pytest.mark.slow
def test_a_dialog_dims_the_workbench_instead_of_blanking_it(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app(prepare=False)
        async with app.run_test(size=(140, 45)) as pilot:
            await open_pane(pilot, "lessons")
            status = screen_text(app).splitlines()[3].strip()
            await pilot.press("f")  # the forget confirmation
            assert isinstance(app.screen, ConfirmScreen)
            # The pane stays readable around the dialog (it used to be blanked out).
            assert status and status in screen_text(app)
            await pilot.press("escape")

    run(scenario)


def assert_footer_keys_whole(app: MemworkApp, pane_id: str) -> None:
    """The footer used to be cut mid-word ("…c Checkpoint e", "y Co", "q Qu"): it shows
    the pane's first keys that fit whole, then Help, Search and Quit."""
    footer = app.query_one(WorkbenchFooter)
    right = footer.query_one("#footer-right")
    line = screen_text(app).splitlines()[-1]
    for widget in (right, *footer.query(FooterKey)):
        assert on_screen(app, widget), (pane_id, line)
    left = [k for k in footer.query(FooterKey) if k.parent is footer]
    assert left, (pane_id, line)  # the pane's own keys, not just the app's
    for key in left:
        assert key.region.right <= right.region.x, (pane_id, line)
        assert f"{key.key_display} {key.description}" in line, line
    for whole in ("? Help", "/ Search", "q Quit"):
        assert whole in line, (pane_id, line)


@pytest.mark.slow
def test_at_80x24_the_title_tabs_and_footer_say_everything(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app(title_suffix="demo (a temporary copy)")  # as memwork --demo says
        async with app.run_test(size=SMALL) as pilot:
            for pane in PANES:
                await open_pane(pilot, pane.PANE_ID)
                lines = screen_text(app).splitlines()
                title, tabs = lines[0], lines[1]
                # The counts whole, with the keys that open them (they used to end "10 lint …").
                assert "5 review (9)" in title and "10 lint (L)" in title, title
                assert "…" not in title.split("·", 1)[1], title
                # Every pane's tab (the bar used to stop at "6 Checkpoi"): eleven fit with
                # their key and four letters of their name.
                for n, cls in enumerate(PANES, start=1):
                    assert f"{pane_key(n, cls)}{(cls.SHORT_TITLE or cls.TITLE)[:4]}" in tabs, tabs
                assert_footer_keys_whole(app, pane.PANE_ID)

    run(scenario)


@pytest.mark.slow
def test_at_80x24_lessons_and_proposals_show_their_text(demo_app) -> None:
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SMALL) as pilot:
            await open_pane(pilot, "lessons")
            table = app.query_one("#lessons", VirtualTable)
            assert table.visible_columns()["content"] >= 30  # it had ~22
            await open_pane(pilot, "review")
            table = app.query_one("#proposals", VirtualTable)
            rows = [table.render_line(1 + i).text for i in range(table.row_count)]
            # The proposed text leads each row (every row read "add lesson (t…").
            assert any("Canary every deploy for" in row for row in rows), rows
            assert not any("add lesson (t" in row for row in rows), rows

    run(scenario)


@pytest.mark.slow
def test_footer_keys_are_whole_and_quit_is_always_there_at_100x30(demo_app) -> None:
    """As at 80x24 (checked with the title above), with room for more of the pane's keys."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(100, 30)) as pilot:
            for pane in PANES:
                await open_pane(pilot, pane.PANE_ID)
                assert_footer_keys_whole(app, pane.PANE_ID)

    run(scenario)


@pytest.mark.slow
def test_short_forms_mark_their_fields_so_hints_never_look_like_values(demo_app) -> None:
    """Below 32 lines the fields drop their borders; a bar at their left (and their own
    background) tells a value from the hint under it ("global" and "global, task:<id>…"
    used to read alike)."""

    async def scenario() -> None:
        app = demo_app(prepare=False)
        async with app.run_test(size=SMALL) as pilot:
            await open_pane(pilot, "lessons")
            await pilot.press("a")
            await settle(pilot)
            assert isinstance(app.screen, FormScreen)
            lines = screen_text(app).splitlines()
            scope = app.screen.query_one("#f-scope", Input)
            assert scope.compact  # short terminal: borderless
            row, x = scope.region.y, scope.region.x
            assert lines[row][x] == "▌" and lines[row][x + 1 :].startswith("global"), lines[row]
            hint = next(line for line in lines if "global, task:<id>" in line)
            assert "▌" not in hint
            for field in app.screen.query("Input, TextArea"):
                assert lines[field.region.y][field.region.x] == "▌", field.id

    run(scenario)


@pytest.mark.slow
def test_at_140x45_the_lesson_text_has_most_of_the_list(demo_app) -> None:
    """The lesson text stopped at ~35 characters on a wide screen while the scope kept 20."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(140, 45)) as pilot:
            await open_pane(pilot, "lessons")
            widths = app.query_one("#lessons", VirtualTable).visible_columns()
            assert widths["content"] >= 44, widths
            assert widths["content"] >= 4 * widths["scope"], widths

    run(scenario)


@pytest.mark.slow
def test_at_80x24_the_episode_task_list_shows_each_name_on_one_line(demo_app) -> None:
    """The task list was as narrow as its 16-column Select: long names wrapped and read
    as one with the table beside them."""

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SMALL) as pilot:
            await open_pane(pilot, "episodes")
            await pilot.press("t")
            await settle(pilot)
            overlay = app.query_one("#episodes-task > SelectOverlay", OptionList)
            lines = screen_text(app).splitlines()
            for index in range(overlay.option_count):
                label = str(overlay.get_option_at_index(index).prompt)
                assert any(label in line for line in lines), (label, lines)

    run(scenario)
