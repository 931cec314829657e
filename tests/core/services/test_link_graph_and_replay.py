"""The Graph's tree of links and the Replay's timeline, read from real stores."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memwork.core.base.errors import NotFound
from memwork.core.domain import actions, link_ops, sessions
from memwork.core.domain.episodes import record_episodes
from memwork.core.services.link_graph import link_tree, linked_records
from memwork.core.services.replay import session_replay
from memwork.core.storage.store import Store


def _actions(store: Store, now: datetime) -> list[str]:
    first = actions.create(store, "Write the runbook", now=now, actor="t")["id"]
    second = actions.create(store, "Ship the canary", after=[first], now=now, actor="t")["id"]
    third = actions.create(store, "Announce it", after=[second], now=now, actor="t")["id"]
    return [first, second, third]


def test_the_tree_goes_both_ways_and_stops_at_a_record_already_shown(
    store: Store, now: datetime
) -> None:
    first, second, third = _actions(store, now)
    link_ops.add_link(store, first, "task:deploy", kind="about", now=now, actor="t")
    link_ops.add_link(store, third, first, kind="follows", now=now, actor="t")
    rows = link_tree(store, second)
    shown = [(r.depth, r.direction, r.via, r.id, r.repeat) for r in rows]
    # Depth first: what a record links to (out), then what links to it (in); a record
    # met again (the root through third, third through first) is listed, not reopened.
    assert shown == [
        (0, "root", "", second, False),
        (1, "out", "after", first, False),
        (2, "out", "about", "task:deploy", False),
        (2, "in", "follows", third, False),
        (3, "out", "after", second, True),
        (1, "in", "after", third, True),
    ]
    assert "Write the runbook" in rows[1].title and rows[2].kind == "task"
    # A shallower tree, and the records a link touches (most linked first).
    assert [(r.depth, r.id) for r in link_tree(store, second, depth=1)] == [
        (0, second),
        (1, first),
        (1, third),
    ]
    listed = linked_records(store)
    assert listed[0].id == first and listed[0].links == 3
    assert {r.id for r in listed} == {first, second, third, "task:deploy"}


def test_a_record_without_links_or_existence_is_not_found(store: Store, now: datetime) -> None:
    with pytest.raises(NotFound):
        link_tree(store, "les_nothing")
    assert linked_records(store) == []


def test_a_replay_is_the_sessions_life_in_time_order(store: Store, now: datetime) -> None:
    session = sessions.start_session(store, agent_id="atlas", title="Deploy", now=now, actor="t")
    sid = session["id"]
    later = [now + timedelta(minutes=m) for m in range(10)]
    sessions.observe(store, sid, "looked at the dashboard", now=later[1], actor="t")
    sessions.observe(store, sid, "probe failed", kind="error", now=later[3], actor="t")
    item = actions.create(store, "Roll back", session=sid, now=later[2], actor="t")
    actions.update(store, item["id"], note="done by hand", now=later[4], actor="t")
    actions.update(store, item["id"], status="done", now=later[5], actor="t")
    episode = {"task_id": "deploy", "score": 0.4, "summary": "rolled back", "session_id": sid}
    list(record_episodes(store, [episode], now=later[6], actor="t"))
    sessions.end_session(store, sid, summary="rolled back cleanly", now=later[7], actor="t")
    replay = session_replay(store, sid)
    assert [(e.kind, e.label) for e in replay.events] == [
        ("start", "start"),
        ("observation", "note"),
        ("action", "action"),
        ("observation", "error"),
        ("note", "note"),
        ("closed", "done"),
        ("episode", "episode"),
        ("end", "end"),
    ]
    assert replay.events[-1].text == "session ended: rolled back cleanly"
    assert "deploy · score 0.40 · rolled back" in replay.events[-2].text
    assert replay.dropped == 0
    with pytest.raises(NotFound):
        session_replay(store, "ses_none")
