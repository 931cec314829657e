"""Working memory: keys with TTL, reserved keys, task state, scratchpad, checkpoints."""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.base.errors import InvalidInput, NotFound
from memwork.core.domain import sessions
from memwork.core.domain.working_memory import checkpoints as wm_checkpoints
from memwork.core.domain.working_memory import keys as wm_keys
from memwork.core.domain.working_memory import overview as wm_overview
from memwork.core.domain.working_memory import scratchpad as wm_scratchpad
from memwork.core.domain.working_memory import state as wm_state
from memwork.core.domain.working_memory import task as wm_task
from memwork.core.ledger import audit
from memwork.core.models.working_memory import SCRATCH_CAPACITY
from memwork.core.storage.store import Store
from tests.conftest import NOW

ACTOR = "test"


@pytest.fixture
def sid(store: Store, now: datetime) -> str:
    return sessions.start_session(store, now=now, actor=ACTOR, title="wm")["id"]


def _state(store: Store, sid: str) -> dict:
    with store.reading():
        return store.get(f"working_memory.{sid}", "state")


def _table(store: Store, sid: str) -> dict:
    with store.reading():
        return {k: dict(v) for k, v in store.docs(f"working_memory.{sid}").items()}


def _audit_count(store: Store) -> int:
    with store.reading():
        return audit.last_seq(store)


# -- keys -----------------------------------------------------------------------------
def test_set_get_list_delete(store: Store, now: datetime, sid: str) -> None:
    entry = wm_keys.set_key(store, sid, "plan", "read the code", now=now, actor=ACTOR)
    assert entry == {
        "key": "plan",
        "value": "read the code",
        "set_at": "2026-11-01T12:00:00.000000Z",
        "expires_at": None,
        "ttl_remaining": None,
    }
    wm_keys.set_key(store, sid, "config", {"retries": 3, "paths": ["a"]}, now=now, actor=ACTOR)
    assert wm_keys.get_key(store, sid, "config", now=now)["value"] == {"retries": 3, "paths": ["a"]}
    assert [e["key"] for e in wm_keys.list_keys(store, sid, now=now)] == ["config", "plan"]
    state = _state(store, sid)
    assert state["id"] == "state" and state["session_id"] == sid
    assert state["kv"]["plan"] == {
        "value": "read the code",
        "set_at": "2026-11-01T12:00:00.000000Z",
        "expires_at": None,
    }
    deleted = wm_keys.delete_key(store, sid, "plan", now=now, actor=ACTOR)
    assert deleted["value"] == "read the code"
    with pytest.raises(NotFound, match="working-memory key not found: plan"):
        wm_keys.get_key(store, sid, "plan", now=now)


def test_overwrite_replaces_value_and_ttl(store: Store, now: datetime, sid: str) -> None:
    wm_keys.set_key(store, sid, "k", "old", ttl=10, now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "k", "new", now=now + timedelta(seconds=5), actor=ACTOR)
    entry = wm_keys.get_key(store, sid, "k", now=now + timedelta(hours=1))
    assert entry["value"] == "new" and entry["expires_at"] is None


def test_values_are_scrubbed(store: Store, now: datetime, sid: str) -> None:
    wm_keys.set_key(store, sid, "who", "alice@example.com", now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "nested", {"path": "/home/alice/x"}, now=now, actor=ACTOR)
    assert "alice@" not in wm_keys.get_key(store, sid, "who", now=now)["value"]
    assert "alice" not in wm_keys.get_key(store, sid, "nested", now=now)["value"]["path"]


def test_value_must_be_json(store: Store, now: datetime, sid: str) -> None:
    with pytest.raises(InvalidInput) as err:
        wm_keys.set_key(store, sid, "k", {1, 2}, now=now, actor=ACTOR)
    assert err.value.field == "value"


@pytest.mark.parametrize("key", ["_private", "_"])
def test_reserved_keys_are_refused(store: Store, now: datetime, sid: str, key: str) -> None:
    with pytest.raises(InvalidInput) as err:
        wm_keys.set_key(store, sid, key, "v", now=now, actor=ACTOR)
    assert err.value.field == "key"
    assert err.value.rule == "keys starting with '_' are reserved"
    assert _state(store, sid) is None
    assert _audit_count(store) == 1  # only the session start


@pytest.mark.parametrize("key", ["", "   ", " padded", "a\nb", "k" * 201])
def test_bad_keys_are_refused(store: Store, now: datetime, sid: str, key: str) -> None:
    with pytest.raises(InvalidInput) as err:
        wm_keys.set_key(store, sid, key, "v", now=now, actor=ACTOR)
    assert err.value.field == "key"
    assert _state(store, sid) is None


@pytest.mark.parametrize("ttl", [0, -1, -0.5, math.nan, math.inf, True, 10**12])
def test_bad_ttl_is_refused(store: Store, now: datetime, sid: str, ttl: float) -> None:
    with pytest.raises(InvalidInput) as err:
        wm_keys.set_key(store, sid, "k", "v", ttl=ttl, now=now, actor=ACTOR)
    assert err.value.field == "ttl"
    assert _state(store, sid) is None


def test_missing_keys_are_not_found(store: Store, now: datetime, sid: str) -> None:
    with pytest.raises(NotFound):
        wm_keys.get_key(store, sid, "nope", now=now)
    with pytest.raises(NotFound):
        wm_keys.delete_key(store, sid, "nope", now=now, actor=ACTOR)
    assert wm_keys.list_keys(store, sid, now=now) == []


# -- TTL ------------------------------------------------------------------------------
def test_ttl_counts_down_and_expired_keys_are_invisible(
    store: Store, now: datetime, sid: str
) -> None:
    entry = wm_keys.set_key(store, sid, "lease", "x", ttl=60, now=now, actor=ACTOR)
    assert entry["expires_at"] == "2026-11-01T12:01:00.000000Z"
    assert entry["ttl_remaining"] == 60.0
    almost = now + timedelta(seconds=59.5)
    assert wm_keys.get_key(store, sid, "lease", now=almost)["ttl_remaining"] == 0.5
    at_expiry = now + timedelta(seconds=60)
    with pytest.raises(NotFound):
        wm_keys.get_key(store, sid, "lease", now=at_expiry)
    assert wm_keys.list_keys(store, sid, now=at_expiry) == []
    # Invisible, but reads never write: the stored document still holds it.
    assert "lease" in _state(store, sid)["kv"]


def test_remaining_ttl_helper(now: datetime) -> None:
    assert wm_state.remaining_ttl({"value": 1, "set_at": "x", "expires_at": None}, now) is None
    entry = {"expires_at": "2026-11-01T12:00:30.000000Z"}
    assert wm_state.remaining_ttl(entry, now) == 30.0
    assert wm_state.remaining_ttl(entry, now + timedelta(seconds=29.25)) == 0.75
    assert wm_state.remaining_ttl(entry, now + timedelta(hours=1)) == 0.0


WRITES = {
    "set": lambda s, sid, t: wm_keys.set_key(s, sid, "other", "v", now=t, actor=ACTOR),
    "delete": lambda s, sid, t: wm_keys.delete_key(s, sid, "keep", now=t, actor=ACTOR),
    "task": lambda s, sid, t: wm_task.update_task(s, sid, status="running", now=t, actor=ACTOR),
    "scratch": lambda s, sid, t: wm_scratchpad.scratch_add(s, sid, "note", now=t, actor=ACTOR),
    "checkpoint": lambda s, sid, t: wm_checkpoints.create_wm_checkpoint(s, sid, now=t, actor=ACTOR),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_expired_keys_are_purged_on_the_next_write(
    store: Store, now: datetime, sid: str, write: str
) -> None:
    wm_keys.set_key(store, sid, "short", "x", ttl=5, now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "long", "y", ttl=3600, now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "keep", "z", now=now, actor=ACTOR)
    later = now + timedelta(seconds=10)
    WRITES[write](store, sid, later)
    kv = _state(store, sid)["kv"]
    assert "short" not in kv
    assert "long" in kv
    with store.reading():
        last = next(audit.entries(store))
    assert "purged 1 expired: short" in last["summary"]


def test_purge_belongs_to_the_session_written(store: Store, now: datetime, sid: str) -> None:
    other = sessions.start_session(store, now=now, actor=ACTOR)["id"]
    wm_keys.set_key(store, sid, "a", "x", ttl=1, now=now, actor=ACTOR)
    wm_keys.set_key(store, other, "b", "x", ttl=1, now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "c", "x", now=now + timedelta(seconds=5), actor=ACTOR)
    assert "a" not in _state(store, sid)["kv"]
    assert "b" in _state(store, other)["kv"]  # another session's memory is not touched


def test_deleting_an_expired_key_is_not_found_and_writes_nothing(
    store: Store, now: datetime, sid: str
) -> None:
    wm_keys.set_key(store, sid, "k", "x", ttl=1, now=now, actor=ACTOR)
    before, count = _state(store, sid), _audit_count(store)
    with pytest.raises(NotFound):
        wm_keys.delete_key(store, sid, "k", now=now + timedelta(seconds=2), actor=ACTOR)
    assert _state(store, sid) == before
    assert _audit_count(store) == count


# -- any session id an agent names works ------------------------------------------------
EMPTY_READS = {
    "list": lambda s, t: wm_keys.list_keys(s, "run-42", now=t) == [],
    "get_task": lambda s, t: wm_task.get_task(s, "run-42") is None,
    "scratch_list": lambda s, t: wm_scratchpad.scratch_list(s, "run-42") == [],
    "cp_list": lambda s, t: wm_checkpoints.list_wm_checkpoints(s, "run-42") == [],
    "snapshot": lambda s, t: wm_overview.overview(s, "run-42", now=t)["keys"] == [],
}


@pytest.mark.parametrize("call", sorted(EMPTY_READS))
def test_reading_an_unknown_session_id_reads_empty_and_creates_nothing(
    store: Store, now: datetime, call: str
) -> None:
    assert EMPTY_READS[call](store, now)
    with pytest.raises(NotFound, match="working-memory key not found: k"):
        wm_keys.get_key(store, "run-42", "k", now=now)
    with store.reading():
        assert store.table_names() == []


FIRST_WRITES = {
    "set": lambda s, t: wm_keys.set_key(s, "run-42", "k", "v", now=t, actor=ACTOR),
    "task": lambda s, t: wm_task.update_task(s, "run-42", task_id="x", now=t, actor=ACTOR),
    "scratch_add": lambda s, t: wm_scratchpad.scratch_add(s, "run-42", "x", now=t, actor=ACTOR),
    "cp_create": lambda s, t: wm_checkpoints.create_wm_checkpoint(s, "run-42", now=t, actor=ACTOR),
}


@pytest.mark.parametrize("call", sorted(FIRST_WRITES))
def test_writing_to_an_unknown_session_id_creates_it_implicitly(
    store: Store, now: datetime, call: str
) -> None:
    FIRST_WRITES[call](store, now)
    session = sessions.get_session(store, "run-42")
    assert session["implicit"] is True and session["status"] == "active"
    assert session["started_at"] == "2026-11-01T12:00:00.000000Z"
    with store.reading():
        actions = [e["action"] for e in audit.entries(store, newest_first=False)]
    assert actions[0] == "start" and len(actions) == 2


@pytest.mark.parametrize(
    "call",
    [
        lambda s, t: wm_keys.delete_key(s, "run-42", "k", now=t, actor=ACTOR),
        lambda s, t: wm_checkpoints.restore_wm_checkpoint(s, "run-42", "abcd", now=t, actor=ACTOR),
        lambda s, t: wm_checkpoints.delete_wm_checkpoint(s, "run-42", "abcd", now=t, actor=ACTOR),
    ],
)
def test_a_refused_write_to_an_unknown_session_creates_nothing(
    store: Store, now: datetime, call
) -> None:  # noqa: ANN001
    with pytest.raises(NotFound):
        call(store, now)
    with store.reading():
        assert store.table_names() == []


@pytest.mark.parametrize("bad", ["../x", "a/b", "a..b", "", " ", "-lead", "x" * 129, "a\x00b"])
def test_malformed_session_ids_are_refused(store: Store, now: datetime, bad: str) -> None:
    with pytest.raises((InvalidInput, NotFound)):
        wm_keys.set_key(store, bad, "k", "v", now=now, actor=ACTOR)
    with store.reading():
        assert store.table_names() == []


def test_an_agent_id_is_taken_whole_never_as_a_prefix(store: Store, now: datetime) -> None:
    wm_keys.set_key(store, "run-42", "k", "forty-two", now=now, actor=ACTOR)
    wm_keys.set_key(store, "run-4", "k", "four", now=now, actor=ACTOR)
    assert wm_keys.get_key(store, "run-42", "k", now=now)["value"] == "forty-two"
    assert wm_keys.get_key(store, "run-4", "k", now=now)["value"] == "four"
    assert {s["id"] for s in sessions.list_sessions(store)} == {"run-4", "run-42"}


def test_session_prefix_is_accepted(store: Store, now: datetime, sid: str) -> None:
    wm_keys.set_key(store, sid[:10], "k", "v", now=now, actor=ACTOR)
    assert wm_keys.get_key(store, sid, "k", now=now)["value"] == "v"


# -- task state -----------------------------------------------------------------------
def test_task_is_created_with_defaults(store: Store, now: datetime, sid: str) -> None:
    assert wm_task.get_task(store, sid) is None
    task = wm_task.update_task(
        store, sid, task_id="t1", description="ship it", now=now, actor=ACTOR
    )
    assert task == {
        "task_id": "t1",
        "description": "ship it",
        "status": "in_progress",
        "current_step": None,
        "total_steps": None,
        "progress_percent": 0.0,
        "progress_given": False,
        "started_at": "2026-11-01T12:00:00.000000Z",
        "updated_at": "2026-11-01T12:00:00.000000Z",
    }
    assert wm_task.get_task(store, sid) == task


def test_partial_updates_change_only_given_fields(store: Store, now: datetime, sid: str) -> None:
    wm_task.update_task(
        store, sid, task_id="t1", description="d", current_step=1, total_steps=4, now=now,
        actor=ACTOR,
    )  # fmt: skip
    later = now + timedelta(minutes=3)
    task = wm_task.update_task(store, sid, status="blocked", now=later, actor=ACTOR)
    assert task["status"] == "blocked"
    assert (task["task_id"], task["description"]) == ("t1", "d")
    assert (task["current_step"], task["total_steps"], task["progress_percent"]) == (1, 4, 25.0)
    assert task["started_at"] == "2026-11-01T12:00:00.000000Z"
    assert task["updated_at"] == "2026-11-01T12:03:00.000000Z"
    # Same task id: still the same task.
    task = wm_task.update_task(store, sid, task_id="t1", current_step=3, now=later, actor=ACTOR)
    assert task["progress_percent"] == 75.0 and task["status"] == "blocked"


def test_progress_is_derived_from_steps_unless_given(store: Store, now: datetime, sid: str) -> None:
    task = wm_task.update_task(store, sid, current_step=1, total_steps=3, now=now, actor=ACTOR)
    assert task["task_id"] == "unknown"
    assert task["progress_percent"] == 33.33 and task["progress_given"] is False
    task = wm_task.update_task(store, sid, total_steps=4, now=now, actor=ACTOR)
    assert task["progress_percent"] == 25.0  # follows the steps while nobody set it
    task = wm_task.update_task(store, sid, current_step=9, now=now, actor=ACTOR)
    assert task["progress_percent"] == 100.0  # steps past the plan are allowed, progress clamped
    task = wm_task.update_task(
        store, sid, current_step=2, progress_percent=10, now=now, actor=ACTOR
    )  # an explicit progress wins
    assert task["progress_percent"] == 10.0 and task["progress_given"] is True
    task = wm_task.update_task(store, sid, description="no step change", now=now, actor=ACTOR)
    assert task["progress_percent"] == 10.0
    # Once given, the progress is the caller's: step updates leave it alone.
    task = wm_task.update_task(store, sid, total_steps=4, now=now, actor=ACTOR)
    assert (task["total_steps"], task["progress_percent"]) == (4, 10.0)
    task = wm_task.update_task(store, sid, current_step=3, now=now, actor=ACTOR)
    assert (task["current_step"], task["progress_percent"]) == (3, 10.0)
    task = wm_task.update_task(store, sid, progress_percent=80, now=now, actor=ACTOR)
    assert task["progress_percent"] == 80.0
    # A new task starts over: its progress follows its steps again.
    task = wm_task.update_task(store, sid, task_id="next", current_step=1, total_steps=2, now=now,
                          actor=ACTOR)  # fmt: skip
    assert task["progress_percent"] == 50.0 and task["progress_given"] is False


@pytest.mark.parametrize(
    ("stored", "given"),
    [
        ({"current_step": 3, "total_steps": 4, "progress_percent": 75.0}, False),
        ({"current_step": 3, "total_steps": 4, "progress_percent": 60.0}, True),
        ({"progress_percent": 0.0}, False),
        ({"progress_percent": 30.0}, True),
    ],
)
def test_tasks_stored_before_progress_given_are_judged_by_their_numbers(
    stored: dict, given: bool
) -> None:
    assert wm_task.progress_is_given(stored) is given


@pytest.mark.parametrize(("given", "stored"), [(150, 100.0), (-5, 0.0), (42.5, 42.5), (100, 100.0)])
def test_progress_is_clamped(
    store: Store, now: datetime, sid: str, given: float, stored: float
) -> None:
    task = wm_task.update_task(store, sid, progress_percent=given, now=now, actor=ACTOR)
    assert task["progress_percent"] == stored


def test_a_new_task_id_starts_a_new_task(store: Store, now: datetime, sid: str) -> None:
    wm_task.update_task(
        store, sid, task_id="a", current_step=2, total_steps=2, status="done", now=now,
        actor=ACTOR,
    )  # fmt: skip
    later = now + timedelta(minutes=1)
    task = wm_task.update_task(store, sid, task_id="b", now=later, actor=ACTOR)
    assert task["task_id"] == "b"
    assert task["status"] == "in_progress"
    assert task["progress_percent"] == 0.0 and task["current_step"] is None
    assert task["started_at"] == "2026-11-01T12:01:00.000000Z"


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"current_step": -1}, "current_step"),
        ({"total_steps": 0}, "total_steps"),
        ({"progress_percent": math.nan}, "progress_percent"),
        ({"task_id": "  "}, "task_id"),
        ({"status": ""}, "status"),
        ({"current_step": 1.5}, "current_step"),
        ({}, "task"),
    ],
)
def test_bad_task_updates_are_refused(
    store: Store, now: datetime, sid: str, kw: dict, field: str
) -> None:
    wm_task.update_task(store, sid, task_id="t", now=now, actor=ACTOR)
    before = _state(store, sid)
    with pytest.raises(InvalidInput) as err:
        wm_task.update_task(store, sid, now=now + timedelta(seconds=1), actor=ACTOR, **kw)
    assert err.value.field == field
    assert _state(store, sid) == before


def test_clear_task(store: Store, now: datetime, sid: str) -> None:
    with pytest.raises(NotFound):
        wm_task.clear_task(store, sid, now=now, actor=ACTOR)
    wm_task.update_task(store, sid, task_id="t", now=now, actor=ACTOR)
    assert wm_task.clear_task(store, sid, now=now, actor=ACTOR)["task_id"] == "t"
    assert wm_task.get_task(store, sid) is None


@settings(max_examples=60, deadline=None)
@given(
    updates=st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "current_step": st.integers(min_value=0, max_value=1000),
                "total_steps": st.integers(min_value=1, max_value=1000),
                "progress_percent": st.floats(allow_nan=False, allow_infinity=False),
            },
        ).filter(bool),
        min_size=1,
        max_size=6,
    )
)
def test_progress_is_always_within_0_and_100(updates: list[dict]) -> None:
    store = Store.in_memory()
    sid = sessions.start_session(store, now=NOW, actor=ACTOR)["id"]
    for kw in updates:
        task = wm_task.update_task(store, sid, now=NOW, actor=ACTOR, **kw)
        assert 0.0 <= task["progress_percent"] <= 100.0
        assert wm_task.get_task(store, sid)["progress_percent"] == task["progress_percent"]


# -- scratchpad -----------------------------------------------------------------------
def test_scratchpad_appends_timestamped_scrubbed_entries(
    store: Store, now: datetime, sid: str
) -> None:
    wm_scratchpad.scratch_add(store, sid, "first", now=now, actor=ACTOR)
    entry = wm_scratchpad.scratch_add(
        store, sid, "call 10.1.2.3 next", now=now + timedelta(seconds=1), actor=ACTOR
    )
    assert entry["dropped"] == 0
    pad = wm_scratchpad.scratch_list(store, sid)
    assert [e["ts"] for e in pad] == ["2026-11-01T12:00:00.000000Z", "2026-11-01T12:00:01.000000Z"]
    assert pad[0]["text"] == "first"
    assert "10.1.2.3" not in pad[1]["text"]
    with pytest.raises(InvalidInput) as err:
        wm_scratchpad.scratch_add(store, sid, "  ", now=now, actor=ACTOR)
    assert err.value.field == "text"


def test_scratchpad_capacity_drops_the_oldest(store: Store, now: datetime, sid: str) -> None:
    for i in range(4):
        wm_scratchpad.scratch_add(store, sid, f"s{i}", now=now, actor=ACTOR)
    assert wm_scratchpad.set_scratch_capacity(store, sid, 3, now=now, actor=ACTOR) == 1
    assert [e["text"] for e in wm_scratchpad.scratch_list(store, sid)] == ["s1", "s2", "s3"]
    entry = wm_scratchpad.scratch_add(store, sid, "s4", now=now, actor=ACTOR)
    assert entry["dropped"] == 1
    assert [e["text"] for e in wm_scratchpad.scratch_list(store, sid)] == ["s2", "s3", "s4"]
    with pytest.raises(InvalidInput) as err:
        wm_scratchpad.set_scratch_capacity(store, sid, 0, now=now, actor=ACTOR)
    assert err.value.field == "scratch_capacity"


def test_scratchpad_default_capacity_is_1000(store: Store, now: datetime, sid: str) -> None:
    assert SCRATCH_CAPACITY == 1000
    wm_scratchpad.scratch_add(store, sid, "seed", now=now, actor=ACTOR)
    state = _state(store, sid)
    assert state["scratch_capacity"] == 1000
    # Fill to the brim directly (a thousand appends would only test the clock).
    state["scratchpad"] = [{"ts": state["updated_at"], "text": f"s{i}"} for i in range(1000)]
    with store.transaction():
        store.put(f"working_memory.{sid}", "state", state)
    entry = wm_scratchpad.scratch_add(store, sid, "one more", now=now, actor=ACTOR)
    assert entry["dropped"] == 1
    pad = wm_scratchpad.scratch_list(store, sid)
    assert len(pad) == 1000
    assert pad[0]["text"] == "s1" and pad[-1]["text"] == "one more"


# -- checkpoints ----------------------------------------------------------------------
def test_checkpoint_create_returns_a_uuid4_and_stores_a_copy(
    store: Store, now: datetime, sid: str
) -> None:
    wm_keys.set_key(store, sid, "k", "v", now=now, actor=ACTOR)
    wm_task.update_task(store, sid, task_id="t", progress_percent=20, now=now, actor=ACTOR)
    wm_scratchpad.scratch_add(store, sid, "note", now=now, actor=ACTOR)
    cp_id = wm_checkpoints.create_wm_checkpoint(
        store, sid, description="before refactor", now=now, actor=ACTOR
    )
    assert str(uuid.UUID(cp_id)) == cp_id and uuid.UUID(cp_id).version == 4
    doc = _table(store, sid)[cp_id]
    assert doc["kind"] == "checkpoint" and doc["session_id"] == sid
    assert doc["description"] == "before refactor"
    assert doc["created_at"] == "2026-11-01T12:00:00.000000Z"
    state = _state(store, sid)
    assert doc["state"] == {k: state[k] for k in ("kv", "task", "scratchpad")}


def test_checkpoints_are_listed_in_creation_order(store: Store, now: datetime, sid: str) -> None:
    # Same instant for all three: creation order must still hold (uuids are random).
    made = [
        wm_checkpoints.create_wm_checkpoint(store, sid, description=str(i), now=now, actor=ACTOR)
        for i in range(3)
    ]
    made.append(
        wm_checkpoints.create_wm_checkpoint(
            store, sid, description="3", now=now + timedelta(1), actor=ACTOR
        )
    )
    listed = wm_checkpoints.list_wm_checkpoints(store, sid)
    assert [c["id"] for c in listed] == made
    assert [c["description"] for c in listed] == ["0", "1", "2", "3"]


def test_restore_replaces_the_whole_state(store: Store, now: datetime, sid: str) -> None:
    wm_keys.set_key(store, sid, "a", "1", now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "b", "2", now=now, actor=ACTOR)
    wm_task.update_task(
        store, sid, task_id="t", current_step=1, total_steps=2, now=now, actor=ACTOR
    )
    wm_scratchpad.scratch_add(store, sid, "before", now=now, actor=ACTOR)
    cp_id = wm_checkpoints.create_wm_checkpoint(store, sid, now=now, actor=ACTOR)
    snapshot_state = _state(store, sid)

    later = now + timedelta(minutes=1)
    wm_keys.set_key(store, sid, "a", "changed", now=later, actor=ACTOR)
    wm_keys.delete_key(store, sid, "b", now=later, actor=ACTOR)
    wm_keys.set_key(store, sid, "c", "new", now=later, actor=ACTOR)
    wm_task.update_task(store, sid, task_id="other", now=later, actor=ACTOR)
    wm_scratchpad.scratch_add(store, sid, "after", now=later, actor=ACTOR)

    restored = wm_checkpoints.restore_wm_checkpoint(store, sid, cp_id[:8], now=later, actor=ACTOR)
    assert restored["id"] == cp_id
    state = _state(store, sid)
    for part in ("kv", "task", "scratchpad"):
        assert state[part] == snapshot_state[part]
    assert [e["key"] for e in wm_keys.list_keys(store, sid, now=later)] == ["a", "b"]
    assert wm_keys.get_key(store, sid, "a", now=later)["value"] == "1"
    assert wm_task.get_task(store, sid)["task_id"] == "t"
    assert [e["text"] for e in wm_scratchpad.scratch_list(store, sid)] == ["before"]
    assert (
        len(wm_checkpoints.list_wm_checkpoints(store, sid)) == 1
    )  # restoring keeps the checkpoint


def test_checkpoint_skips_expired_keys_and_restore_keeps_absolute_expiry(
    store: Store, now: datetime, sid: str
) -> None:
    wm_keys.set_key(store, sid, "gone", "x", ttl=1, now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "lease", "y", ttl=60, now=now, actor=ACTOR)
    cp_id = wm_checkpoints.create_wm_checkpoint(
        store, sid, now=now + timedelta(seconds=2), actor=ACTOR
    )
    assert set(_table(store, sid)[cp_id]["state"]["kv"]) == {"lease"}
    later = now + timedelta(minutes=5)
    wm_checkpoints.restore_wm_checkpoint(store, sid, cp_id, now=later, actor=ACTOR)
    # The lease ran out since the snapshot: restore does not revive it, and purges it.
    assert _state(store, sid)["kv"] == {}


def test_delete_checkpoint(store: Store, now: datetime, sid: str) -> None:
    keep = wm_checkpoints.create_wm_checkpoint(store, sid, now=now, actor=ACTOR)
    drop = wm_checkpoints.create_wm_checkpoint(store, sid, now=now, actor=ACTOR)
    assert wm_checkpoints.delete_wm_checkpoint(store, sid, drop, now=now, actor=ACTOR)["id"] == drop
    assert [c["id"] for c in wm_checkpoints.list_wm_checkpoints(store, sid)] == [keep]
    with pytest.raises(NotFound, match="working-memory checkpoint not found"):
        wm_checkpoints.delete_wm_checkpoint(store, sid, drop, now=now, actor=ACTOR)
    with pytest.raises(NotFound):
        wm_checkpoints.restore_wm_checkpoint(store, sid, drop, now=now, actor=ACTOR)


def test_checkpoints_belong_to_their_session(store: Store, now: datetime, sid: str) -> None:
    other = sessions.start_session(store, now=now, actor=ACTOR)["id"]
    cp_id = wm_checkpoints.create_wm_checkpoint(store, other, now=now, actor=ACTOR)
    with pytest.raises(NotFound):
        wm_checkpoints.restore_wm_checkpoint(store, sid, cp_id, now=now, actor=ACTOR)
    assert wm_checkpoints.list_wm_checkpoints(store, sid) == []


def test_short_checkpoint_prefix_is_not_found(store: Store, now: datetime, sid: str) -> None:
    cp_id = wm_checkpoints.create_wm_checkpoint(store, sid, now=now, actor=ACTOR)
    with pytest.raises(NotFound):
        wm_checkpoints.restore_wm_checkpoint(store, sid, cp_id[:3], now=now, actor=ACTOR)


def test_every_mutation_is_audited(store: Store, now: datetime, sid: str) -> None:
    start = _audit_count(store)
    wm_keys.set_key(store, sid, "k", "v", now=now, actor=ACTOR)
    wm_keys.delete_key(store, sid, "k", now=now, actor=ACTOR)
    wm_task.update_task(store, sid, task_id="t", now=now, actor=ACTOR)
    wm_task.clear_task(store, sid, now=now, actor=ACTOR)
    wm_scratchpad.scratch_add(store, sid, "x", now=now, actor=ACTOR)
    wm_scratchpad.set_scratch_capacity(store, sid, 10, now=now, actor=ACTOR)
    cp_id = wm_checkpoints.create_wm_checkpoint(store, sid, now=now, actor=ACTOR)
    wm_checkpoints.restore_wm_checkpoint(store, sid, cp_id, now=now, actor=ACTOR)
    wm_checkpoints.delete_wm_checkpoint(store, sid, cp_id, now=now, actor=ACTOR)
    with store.reading():
        entries = list(audit.entries(store, newest_first=False))[start:]
    assert [e["action"] for e in entries] == [
        "wm-set",
        "wm-delete",
        "wm-task",
        "wm-task",
        "wm-scratch",
        "wm-scratch",
        "wm-checkpoint",
        "wm-restore",
        "wm-checkpoint-delete",
    ]
    assert {e["table"] for e in entries} == {"working_memory"}
    assert {e["actor"] for e in entries} == {ACTOR}


def test_snapshot_for_the_workbench(store: Store, now: datetime, sid: str) -> None:
    wm_keys.set_key(store, sid, "a", "1", ttl=30, now=now, actor=ACTOR)
    wm_keys.set_key(store, sid, "b", "2", ttl=5, now=now, actor=ACTOR)
    view = wm_overview.overview(store, sid, now=now + timedelta(seconds=10))
    assert [(k["key"], k["ttl_remaining"]) for k in view["keys"]] == [("a", 20.0)]
    assert view["task"] is None and view["scratchpad"] == [] and view["checkpoints"] == []
