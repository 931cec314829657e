"""The Review pane (key 9): agents' proposals beside what they would change; approve,
edit then approve, reject and merge with keys; the header counts what waits."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core.domain import lessons, slots
from memwork.core.ledger import config
from memwork.core.services import review
from memwork.core.storage.store import Store
from memwork.tui.widgets.virtual_table import VirtualTable
from tests.tui.conftest import SIZE, open_pane, run, screen_text, settle


def _table(app) -> VirtualTable:  # noqa: ANN001
    return app.query_one("#proposals", VirtualTable)


def _proposals(path: Path) -> dict[str, dict]:
    store = Store(path, create=False)
    with store.reading():
        return {p["id"]: dict(p) for p in store.docs("proposals").values()}


async def _select(pilot, change: str) -> str:  # noqa: ANN001
    """Move the cursor to the proposal whose change starts with ``change``; its id."""
    app = pilot.app
    pane = app.pane("review")
    for index in range(_table(app).row_count):
        key = _table(app).row_key_at(index)
        if pane.proposals[key]["change"].startswith(change):
            _table(app).move_cursor(index)
            await settle(pilot)
            return key
    raise AssertionError(f"no proposal {change!r}")


@pytest.mark.slow
def test_the_queue_shows_each_proposal_beside_its_change(demo_app) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            text = screen_text(app)
            assert "5 to review (9)" in text and "10 lint findings" in text
            assert "Review on · 5 waiting" in text
            assert _table(app).row_count == 5
            # A lesson: its flags and the nearest live lesson.
            await _select(pilot, "add lesson (task:deploy-api): Never pin")
            text = screen_text(app)
            assert "⚑ contradicts les_" in text
            assert "Nearest live lesson" in text and "Pin container images by digest" in text
            # A slot edit: its diff.
            await _select(pilot, "replace in slot project/checkout")
            text = screen_text(app)
            assert "-Checkout service: Python 3.12, Postgres 16" in text
            assert "+Checkout service: Python 3.12, Postgres 17" in text
            # Decided ones on request.
            await pilot.press("x")
            await settle(pilot)
            assert _table(app).row_count == 7
            assert "rejected" in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_approve_with_a(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            key = await _select(pilot, "add lesson (global): Summaries lead")
            await pilot.press("a")
            await settle(pilot)
            decided = _proposals(demo_path)[key]
            assert decided["status"] == "approved" and decided["decided_by"] == "tui"
            store = Store(demo_path, create=False)
            live = lessons.get_lesson(store, decided["result_id"], review_now())
            assert live["content"] == "Summaries lead with the customer impact"
            assert _table(app).row_count == 4
            assert "4 to review (9)" in screen_text(app)

    run(scenario)


def review_now():  # noqa: ANN201
    from memwork.core.base.clock import now

    return now()


@pytest.mark.slow
def test_edit_then_approve_with_e(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            key = await _select(pilot, "append to slot persona")
            await pilot.press("e")
            await settle(pilot)
            assert "Edit, then approve: slot append persona" in screen_text(app)
            await pilot.press("f7", "backspace", *"Say the rollback plan first.", "ctrl+s")
            await settle(pilot)
            assert _proposals(demo_path)[key]["edited"] is True
            store = Store(demo_path, create=False)
            persona = slots.get_slot(store, "persona")["content"]
            assert persona.endswith("\nSay the rollback plan first.")
            assert "State the rollback plan" not in persona

    run(scenario)


@pytest.mark.slow
def test_reject_with_r_keeps_the_reason(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            key = await _select(pilot, "add lesson (task:deploy-api): Never pin")
            await pilot.press("r")
            await settle(pilot)
            await pilot.press(*"digests are how we roll back", "enter")
            await settle(pilot)
            decided = _proposals(demo_path)[key]
            assert decided["status"] == "rejected"
            assert decided["why"] == "digests are how we roll back"
            store = Store(demo_path, create=False)
            texts = [
                x["content"] for x in lessons.list_lessons(store, review_now(), include_all=True)
            ]
            assert "Never pin container images by digest" not in texts
            assert key not in {r.key for r in _rows(app)}

    run(scenario)


def _rows(app):  # noqa: ANN001, ANN202
    table = _table(app)
    return [table.source.row(i) for i in range(table.row_count)]


@pytest.mark.slow
def test_merge_with_m_reinforces_the_near_duplicate(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            key = await _select(pilot, "add lesson (task:deploy-api): Canary every")
            target = app.pane("review").proposals[key]["duplicate_of"]
            store = Store(demo_path, create=False)
            before = lessons.get_lesson(store, target, review_now())
            await pilot.press("m")
            await settle(pilot)
            text = screen_text(app)
            assert "into a live lesson" in text
            assert "suggested  Canary every deploy for at least fifteen minutes" in text
            await pilot.press("enter")  # the near-duplicate is suggested, first
            await settle(pilot)
            decided = _proposals(demo_path)[key]
            assert decided["status"] == "merged" and decided["result_id"] == target
            after = lessons.get_lesson(store, target, review_now())
            assert after["reinforcements"] == before["reinforcements"] + 1
            assert after["wordings"][-1] == "Canary every deploy for fifteen minutes at least"
            # A slot edit cannot be merged: the key does nothing there.
            await _select(pilot, "append to slot persona")
            await pilot.press("m")
            await settle(pilot)
            assert "into a live lesson" not in screen_text(app)

    run(scenario)


@pytest.mark.slow
def test_merge_picks_any_lesson_by_searching_for_it(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=(80, 24)) as pilot:
            await open_pane(pilot, "review")
            key = await _select(pilot, "add lesson (task:deploy-api): Canary every")
            store = Store(demo_path, create=False)
            with store.reading():
                target = next(
                    x for x in lessons.all_lessons(store) if x["content"].startswith("Use Decimal")
                )
            await pilot.press("m", *"decimal money", "enter")
            await settle(pilot)
            decided = _proposals(demo_path)[key]
            assert decided["status"] == "merged" and decided["result_id"] == target["id"]

    run(scenario)


@pytest.mark.slow
def test_a_replace_whose_text_is_gone_is_approved_as_a_whole_slot_edit(
    demo_app, demo_path: Path
) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            # Someone rewrote the slot: the proposed replace's old text is gone.
            writer = Store(demo_path)
            slots.set_slot(
                writer,
                "project/checkout",
                "Checkout service: Python 3.13, Postgres 15, on Kubernetes.",
                now=review_now(),
                actor="tui",
            )
            app.store_changed()
            await settle(pilot)
            key = await _select(pilot, "replace in slot project/checkout")
            text = screen_text(app)
            assert "No longer applies" in text
            assert "e edits the whole slot" in text
            await pilot.press("e")
            await settle(pilot)
            text = screen_text(app)
            assert "Edit the whole slot, then approve" in text
            assert "Postgres 15, on Kubernetes." in text  # what the slot holds now
            new = "Checkout service: Python 3.13, Postgres 17, on Kubernetes."
            await pilot.press("home", "shift+end")  # the whole line (the slot is one line)
            await pilot.press(*new, "ctrl+s")
            await settle(pilot)
            decided = _proposals(demo_path)[key]
            assert decided["status"] == "approved"
            assert slots.get_slot(Store(demo_path), "project/checkout")["content"] == new

    run(scenario)


@pytest.mark.slow
def test_o_switches_review_and_the_workbench_writes_live(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            await pilot.press("o")
            await settle(pilot)
            assert "Review off" in screen_text(app)
            store = Store(demo_path, create=False)
            assert config.get(store, "review") == "off"
            await pilot.press("o")
            await settle(pilot)
            assert "Review on" in screen_text(app)
            # A person's edit in the workbench goes live even now.
            await open_pane(pilot, "lessons")
            await pilot.press("a")
            await settle(pilot)
            await pilot.press(*"Write the postmortem within a day", "ctrl+s")
            await settle(pilot)
            texts = [x["content"] for x in lessons.list_lessons(store, review_now())]
            assert "Write the postmortem within a day" in texts
            assert review.pending_count(store) == 5

    run(scenario)


@pytest.mark.slow
def test_review_pane_snapshot(demo_app, snap_compare) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        await open_pane(pilot, "review")
        await _select(pilot, "replace in slot project/checkout")  # a slot edit's diff

    assert snap_compare(demo_app(), run_before=run_before, terminal_size=SIZE)


@pytest.mark.slow
def test_review_pane_snapshot_at_80x24(demo_app, snap_compare) -> None:  # noqa: ANN001
    async def run_before(pilot) -> None:  # noqa: ANN001
        await open_pane(pilot, "review")
        await _select(pilot, "add lesson (task:deploy-api): Never pin")  # a flagged lesson

    assert snap_compare(demo_app(), run_before=run_before, terminal_size=(80, 24))


@pytest.mark.slow
def test_an_agents_lesson_edit_shows_its_diff_and_approves(demo_app, demo_path: Path) -> None:  # noqa: ANN001
    store = Store(demo_path, create=False)
    now = review_now()
    live = lessons.list_lessons(store, now)[0]
    edited = f"{live['content']} (checked by a second person)"
    proposal = review.edit_lesson(store, live["id"], text=edited, now=now, actor="mcp:coder")
    assert proposal["proposed"] is True
    store.close()

    async def scenario() -> None:
        app = demo_app()
        async with app.run_test(size=SIZE) as pilot:
            await open_pane(pilot, "review")
            await _select(pilot, f"edit lesson {live['id']}")
            text = screen_text(app)
            assert "Proposed lesson edit" in text and f"lesson {live['id']}" in text
            assert "+" + edited[:40] in text  # the new wording, in the diff
            await pilot.press("a")
            await settle(pilot)

    run(scenario)
    after = lessons.get_lesson(Store(demo_path, create=False), live["id"], now)
    assert after["content"] == edited and live["content"] in after["wordings"]
    assert _proposals(demo_path)[proposal["id"]]["result"] == f"edited lesson {live['id']}"
