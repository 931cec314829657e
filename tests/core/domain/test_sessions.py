"""Sessions and observations: lifecycle, prefixes, scrubbing, the per-session cap."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.base.errors import Conflict, InvalidInput, NotFound
from memwork.core.domain import forgetting, sessions
from memwork.core.ledger import audit
from memwork.core.models.session import MAX_OBSERVATIONS
from memwork.core.storage.store import Store
from tests.conftest import NOW

ACTOR = "test"


def _start(store: Store, now: datetime, **kw) -> dict:
    return sessions.start_session(store, now=now, actor=ACTOR, **kw)


def _observe(store: Store, sid: str, text: str, now: datetime, **kw) -> dict:
    return sessions.observe(store, sid, text, now=now, actor=ACTOR, **kw)


def _stored_session(store: Store, sid: str) -> dict:
    with store.reading():
        return store.get("sessions", sid)


def _audit_actions(store: Store) -> list[str]:
    with store.reading():
        return [e["action"] for e in audit.entries(store, newest_first=False)]


# -- lifecycle --------------------------------------------------------------------------
def test_start_session_stores_the_record_and_audits(store: Store, now: datetime) -> None:
    session = _start(store, now, agent_id="coder", project="web", title="fix login")
    assert session["id"].startswith("ses_")
    stored = _stored_session(store, session["id"])
    assert stored["status"] == "active"
    assert stored["started_at"] == stored["created_at"] == "2026-11-01T12:00:00.000000Z"
    assert stored["ended_at"] is None
    assert (stored["agent_id"], stored["project"], stored["title"]) == ("coder", "web", "fix login")
    assert stored["observation_count"] == stored["dropped_observations"] == 0
    assert stored["max_observations"] == MAX_OBSERVATIONS
    assert session["total_observed"] == 0
    assert _audit_actions(store) == ["start"]


def test_start_session_scrubs_title_and_project(store: Store, now: datetime) -> None:
    session = _start(store, now, project="/home/alice/web", title="mail bob@example.com")
    assert "alice" not in session["project"]
    assert "bob@example.com" not in session["title"]
    assert "[redacted:" in session["title"]


def test_start_session_refuses_a_cap_below_one(store: Store, now: datetime) -> None:
    with pytest.raises(InvalidInput) as err:
        _start(store, now, max_observations=0)
    assert err.value.field == "max_observations"
    assert sessions.list_sessions(store) == []


def test_list_sessions_newest_first(store: Store, now: datetime) -> None:
    first = _start(store, now, title="a")
    second = _start(store, now + timedelta(minutes=5), title="b")
    third = _start(store, now + timedelta(minutes=1), title="c")
    assert [s["id"] for s in sessions.list_sessions(store)] == [
        second["id"],
        third["id"],
        first["id"],
    ]


def test_end_session(store: Store, now: datetime) -> None:
    session = _start(store, now)
    later = now + timedelta(minutes=30)
    ended = sessions.end_session(
        store,
        session["id"],
        summary="done; token ghp_" + "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2QeX",
        now=later,
        actor=ACTOR,
    )
    assert ended["status"] == "ended"
    assert ended["ended_at"] == "2026-11-01T12:30:00.000000Z"
    assert ended["duration_seconds"] == 1800.0
    assert "ghp_" not in ended["summary"] and ended["summary"].startswith("done;")
    assert _stored_session(store, session["id"])["status"] == "ended"
    assert _audit_actions(store) == ["start", "end"]


def test_end_twice_is_a_conflict_and_writes_nothing(store: Store, now: datetime) -> None:
    session = _start(store, now)
    sessions.end_session(store, session["id"], summary="first", now=now, actor=ACTOR)
    before = _stored_session(store, session["id"])
    with pytest.raises(Conflict, match="already ended"):
        sessions.end_session(store, session["id"], summary="second", now=now, actor=ACTOR)
    assert _stored_session(store, session["id"]) == before
    assert _audit_actions(store) == ["start", "end"]


def test_end_missing_session_is_not_found(store: Store, now: datetime) -> None:
    with pytest.raises(NotFound, match="session not found: ses_nope"):
        sessions.end_session(store, "ses_nope", now=now, actor=ACTOR)


def test_get_session_by_unique_prefix(store: Store, now: datetime) -> None:
    session = _start(store, now)
    assert sessions.get_session(store, session["id"][:10])["id"] == session["id"]
    # Three characters are never a prefix, even if they match.
    with pytest.raises(NotFound):
        sessions.get_session(store, session["id"][:3])
    with pytest.raises(NotFound):
        sessions.get_session(store, "ses_ZZZZ")


def test_ambiguous_prefix_is_invalid_input(store: Store, now: datetime) -> None:
    _start(store, now)
    _start(store, now)
    with pytest.raises(InvalidInput) as err:
        sessions.get_session(store, "ses_")
    assert err.value.field == "session" and "matches 2 sessions" in err.value.rule


def test_duration_of_an_active_session_runs_to_now(store: Store, now: datetime) -> None:
    session = _start(store, now)
    assert sessions.get_session(store, session["id"])["duration_seconds"] is None
    later = sessions.get_session(store, session["id"], now + timedelta(seconds=90))
    assert later["duration_seconds"] == 90.0


# -- observations ---------------------------------------------------------------------
def test_observe_scrubs_and_numbers_per_session(store: Store, now: datetime) -> None:
    a = _start(store, now)
    b = _start(store, now)
    first = _observe(store, a["id"], "key sk-" + "x" * 40 + " <private>pw</private>", now)
    _observe(store, b["id"], "other session", now)
    second = _observe(store, a["id"], "ran pytest", now, kind="tool", tags=["ci", "ci", " "])
    assert first["seq"] == 1 and second["seq"] == 2
    assert "sk-" not in first["content"] and "pw" not in first["content"]
    assert "[redacted:" in first["content"]
    assert second["kind"] == "tool" and second["tags"] == ["ci"]
    with store.reading():
        assert set(store.docs(f"observations.{a['id']}")) == {first["id"], second["id"]}
        assert len(store.docs(f"observations.{b['id']}")) == 1
    assert [o["content"] for o in sessions.observations(store, b["id"])] == ["other session"]
    assert _stored_session(store, a["id"])["observation_count"] == 2


def test_observations_oldest_first(store: Store, now: datetime) -> None:
    session = _start(store, now)
    for i in range(5):
        _observe(store, session["id"], f"step {i}", now + timedelta(seconds=i))
    found = sessions.observations(store, session["id"])
    assert [o["content"] for o in found] == [f"step {i}" for i in range(5)]
    assert [o["seq"] for o in found] == [1, 2, 3, 4, 5]


def test_observe_accepts_a_prefix(store: Store, now: datetime) -> None:
    session = _start(store, now)
    obs = _observe(store, session["id"][:12], "hello", now)
    assert obs["session_id"] == session["id"]


def test_cap_drops_the_oldest_and_counts_them(store: Store, now: datetime) -> None:
    session = _start(store, now, max_observations=3)
    results = [_observe(store, session["id"], f"o{i}", now) for i in range(5)]
    assert [r["dropped"] for r in results] == [0, 0, 0, 1, 1]
    stored = _stored_session(store, session["id"])
    assert stored["observation_count"] == 3
    assert stored["dropped_observations"] == 2
    kept = sessions.observations(store, session["id"])
    assert [o["content"] for o in kept] == ["o2", "o3", "o4"]
    assert [o["seq"] for o in kept] == [3, 4, 5]
    assert sessions.get_session(store, session["id"])["total_observed"] == 5


def test_cap_drops_the_lowest_seq_whatever_order_the_table_holds(
    store: Store, now: datetime
) -> None:
    # Another writer's observations can arrive in a table in any id order: the one
    # dropped is the oldest by seq, not the first the table happens to list.
    session = _start(store, now, max_observations=3)
    for i in range(3):
        _observe(store, session["id"], f"o{i}", now)
    table = f"observations.{session['id']}"
    with store.transaction():
        docs = store.docs(table)
        shuffled = [docs[i] for i in sorted(docs, key=lambda i: -docs[i]["seq"])]
        store.delete(table, list(docs))
        for doc in shuffled:
            store.put(table, doc["id"], doc)
    assert [d["seq"] for d in store.docs(table).values()] != [1, 2, 3]
    _observe(store, session["id"], "o3", now)
    kept = sessions.observations(store, session["id"])
    assert [o["content"] for o in kept] == ["o1", "o2", "o3"]
    assert [o["seq"] for o in kept] == [2, 3, 4]


@pytest.mark.slow
def test_cap_at_the_default_of_500(store: Store, now: datetime) -> None:
    session = _start(store, now)
    for i in range(MAX_OBSERVATIONS + 2):
        _observe(store, session["id"], f"o{i}", now)
    stored = _stored_session(store, session["id"])
    assert stored["observation_count"] == 500
    assert stored["dropped_observations"] == 2
    kept = sessions.observations(store, session["id"])
    assert len(kept) == 500
    assert kept[0]["content"] == "o2" and kept[-1]["content"] == "o501"


def test_observing_an_ended_session_is_kept_and_marked(store: Store, now: datetime) -> None:
    session = _start(store, now)
    during = _observe(store, session["id"], "during", now)
    sessions.end_session(store, session["id"], now=now, actor=ACTOR)
    late = _observe(store, session["id"], "flushed late", now + timedelta(seconds=5))
    assert during["after_end"] is False
    assert late["after_end"] is True
    assert _stored_session(store, session["id"])["observation_count"] == 2


def test_observe_into_an_unknown_session_id_creates_it(store: Store, now: datetime) -> None:
    obs = _observe(store, "agent@host:run.7", "x", now)
    assert obs["session_id"] == "agent@host:run.7"
    session = sessions.get_session(store, "agent@host:run.7")
    assert session["implicit"] is True and session["observation_count"] == 1
    assert _audit_actions(store) == ["start", "observe"]


def test_observe_with_a_malformed_session_id_writes_nothing(store: Store, now: datetime) -> None:
    with pytest.raises(InvalidInput, match="session"):
        _observe(store, "../escape", "x", now)
    with store.reading():
        assert store.table_names() == []


@pytest.mark.parametrize("text", ["", "   ", "<private>secret</private>"])
def test_observe_refuses_empty_content(store: Store, now: datetime, text: str) -> None:
    session = _start(store, now)
    with pytest.raises(InvalidInput) as err:
        _observe(store, session["id"], text, now)
    assert err.value.field == "content"
    assert _stored_session(store, session["id"])["observation_count"] == 0


def test_observe_refuses_a_bad_kind(store: Store, now: datetime) -> None:
    session = _start(store, now)
    with pytest.raises(InvalidInput) as err:
        _observe(store, session["id"], "x", now, kind="k" * 51)
    assert err.value.field == "kind"
    with pytest.raises(InvalidInput) as err:
        _observe(store, session["id"], "x", now, kind="  ")
    assert err.value.field == "kind"


def test_observe_audits(store: Store, now: datetime) -> None:
    session = _start(store, now, max_observations=1)
    _observe(store, session["id"], "a", now)
    _observe(store, session["id"], "b", now)
    with store.reading():
        entries = list(audit.entries(store, newest_first=False))
    assert [e["action"] for e in entries] == ["start", "observe", "observe"]
    assert entries[-1]["table"] == "observations"
    assert "dropped 1 oldest" in entries[-1]["summary"]


def test_delete_session_drops_its_tables(store: Store, now: datetime) -> None:
    from memwork.core.domain.working_memory import keys as wm_keys

    session = _start(store, now)
    _observe(store, session["id"], "a", now)
    wm_keys.set_key(store, session["id"], "k", "v", now=now, actor=ACTOR)
    forgetting.forget_session(store, session["id"], now=now, actor=ACTOR)
    with store.reading():
        assert store.table_names("observations") == []
        assert store.table_names("working_memory") == []
        assert store.docs("sessions") == {}
    with pytest.raises(NotFound):
        sessions.get_session(store, session["id"])


# -- invariants -----------------------------------------------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cap=st.integers(min_value=1, max_value=6), count=st.integers(min_value=0, max_value=14))
def test_count_never_exceeds_the_cap_and_nothing_is_lost_from_the_tally(
    cap: int, count: int
) -> None:
    store = Store.in_memory()
    session = sessions.start_session(store, now=NOW, actor=ACTOR, max_observations=cap)
    for i in range(count):
        sessions.observe(store, session["id"], f"o{i}", now=NOW, actor=ACTOR)
        stored = _stored_session(store, session["id"])
        assert stored["observation_count"] <= cap
        assert stored["observation_count"] + stored["dropped_observations"] == i + 1
    kept = sessions.observations(store, session["id"])
    # What is kept is always the newest ones, in order.
    assert [o["content"] for o in kept] == [f"o{i}" for i in range(max(0, count - cap), count)]


def test_an_observation_that_is_all_private_says_so_plainly(store: Store) -> None:
    """The refusal names what the user typed (<private>…</private>), not scrubber jargon."""
    session = sessions.start_session(store, now=NOW, actor="test")
    with pytest.raises(InvalidInput) as refused:
        sessions.observe(store, session["id"], "<private>my token</private>", now=NOW, actor="t")
    assert "<private>…</private>" in str(refused.value)
    assert "spans" not in str(refused.value)
