"""Review is a policy of the operation runner, read from the declaration.

An operation declared ``review=True`` is queued for an agent while review is on (its
name and checked parameters), and approving replays it through the runner as the
curator: a new operation needs no review code of its own. Proposals stored by older
memwork (``kind``, ``op`` and ``args`` only) are still listed, shown, approved and
rejected.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput, NotFound
from memwork.core.domain import lessons, slots
from memwork.core.ledger import config
from memwork.core.ops import operations, runner
from memwork.core.ops.operations import Op, Param
from memwork.core.services import review
from memwork.core.storage.store import Store
from tests.conftest import curator_for

AGENT = "mcp:coder"


def _run(
    store: Store, name: str, now: datetime, actor: str = AGENT, curator: Any = None, **given: Any
) -> Any:
    op = operations.by_name(name)
    return runner.call(
        op, store, runner.check(op, "api", given), now=now, actor=actor, curator=curator
    )


def _review_on(store: Store, now: datetime) -> Any:
    key = curator_for(store, now)
    config.set_value(store, "review", "on", now=now, actor="tui")
    return key


def test_a_new_review_operation_is_queued_and_replayed(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    note = Op(
        "add_note",
        "note add",
        "add a line to the notes slot",
        "domain.slots:append_slot",
        (
            Param("label", "str", "the slot", cli="LABEL"),
            Param("text", "str", "the line", cli="TEXT"),
        ),
        writes=True,
        review=True,
        result="slot_write",
    )
    monkeypatch.setitem(operations.BY_NAME, note.name, note)
    slots.set_slot(store, "notes", "first", now=now, actor="tui")
    key = _review_on(store, now)

    # Refused before anything is queued, as the operation itself refuses it.
    with pytest.raises(NotFound) as refused:
        _run(store, "add_note", now, label="nowhere", text="x")
    with pytest.raises(NotFound) as direct:
        slots.append_slot(store, "nowhere", "x", now=now, actor="tui")
    assert str(refused.value) == str(direct.value) and review.pending_count(store) == 0

    proposed = _run(
        store, "add_note", now, label="notes", text="second https://alice:pw@example.com/x"
    )
    assert proposed["proposed"] is True and proposed["status"] == "pending"
    assert (proposed["kind"], proposed["op"]) == ("note", "add")
    assert proposed["operation"] == "add_note"  # kind and op do not name it
    assert slots.get_slot(store, "notes")["content"] == "first"
    stored = store.docs(review.TABLE)[proposed["id"]]
    assert stored["operation"] == "add_note" and stored["args"]["label"] == "notes"
    assert "alice:pw" not in str(stored)  # kept scrubbed, as the write would store it
    assert proposed["change"].startswith("note add: label=notes")

    decided = _run(
        store, "approve_proposal", now, actor="tui", curator=key, proposal=proposed["id"]
    )
    assert decided["status"] == "approved"
    assert slots.get_slot(store, "notes")["content"].startswith("first\nsecond")
    assert decided["result_id"] == slots.get_slot(store, "notes")["id"]
    # The curator's own call is not held.
    done = _run(store, "add_note", now, actor="tui", curator=key, label="notes", text="third")
    assert done["content"].endswith("third")


def test_bad_input_is_refused_before_anything_is_queued(store: Store, now: datetime) -> None:
    _review_on(store, now)
    with pytest.raises(InvalidInput) as queued:
        _run(store, "add_lesson", now, text="   ")
    with pytest.raises(InvalidInput) as direct:
        lessons.add_lesson(store, "   ", now=now, actor="tui")
    assert str(queued.value) == str(direct.value)
    assert review.pending_count(store) == 0


def _older(
    store: Store, now: datetime, pid: str, kind: str, op: str, target: str, args: dict
) -> None:
    """A proposal as older memwork stored it: kind, op and args, no operation."""
    stamp = "2026-01-01T00:00:00.000000Z"
    doc = {
        "id": pid,
        "kind": kind,
        "op": op,
        "target": target,
        "args": args,
        "status": "pending",
        "proposed_by": "cli:atlas",
        "decided_by": None,
        "decided_at": None,
        "why": "",
        "edited": False,
        "result_id": None,
        "result": "",
        "created_at": stamp,
        "updated_at": stamp,
    }
    with store.transaction():
        store.put(review.TABLE, pid, doc)


def test_older_proposals_are_listed_shown_approved_and_rejected(
    store: Store, now: datetime
) -> None:
    key = _review_on(store, now)
    slots.set_slot(store, "persona", "You are terse.", now=now, actor="tui")
    args = {
        "content": "Pin every dependency",
        "scope": "global",
        "confidence": None,
        "tags": [],
        "on_duplicate": "keep-both",
        "source": "agent",
    }
    _older(store, now, "prop_old0lesson", "lesson", "add", "global", args)
    _older(
        store,
        now,
        "prop_old0slot",
        "slot",
        "append",
        "persona",
        {"label": "persona", "text": "Cite sources."},
    )
    listed = review.list_proposals(store, now)
    assert [p["id"] for p in listed] == ["prop_old0lesson", "prop_old0slot"]
    assert listed[0]["change"] == "add lesson (global): Pin every dependency"
    assert listed[1]["after"] == "You are terse.\nCite sources."
    assert "operation" not in listed[0]

    decided = _run(
        store,
        "approve_proposal",
        now,
        actor="tui",
        curator=key,
        proposal="prop_old0lesson",
        edit="Pin every direct dependency",
    )
    assert decided["status"] == "approved" and decided["edited"] is True
    assert decided["result"] == f"created lesson {decided['result_id']}"
    assert [x["content"] for x in lessons.list_lessons(store, now)] == [
        "Pin every direct dependency"
    ]
    rejected = _run(
        store,
        "reject_proposal",
        now,
        actor="tui",
        curator=key,
        proposal="prop_old0slot",
        why="not now",
    )
    assert rejected["status"] == "rejected"
    assert slots.get_slot(store, "persona")["content"] == "You are terse."
    assert review.operation_of(store.docs(review.TABLE)["prop_old0slot"]) == (
        "append_slot",
        {"label": "persona", "text": "Cite sources."},
    )


def test_a_known_write_is_queued_in_the_shape_older_memwork_reads(
    store: Store, now: datetime
) -> None:
    key = _review_on(store, now)
    proposed = _run(store, "add_lesson", now, text="Pin every dependency", tags=["b", "a", "b"])
    stored = store.docs(review.TABLE)[proposed["id"]]
    assert "operation" not in stored and "operation" not in proposed
    assert (stored["kind"], stored["op"], stored["target"]) == ("lesson", "add", "global")
    assert stored["args"]["content"] == "Pin every dependency"
    assert review.operation_of(stored) == (
        "add_lesson",
        {
            "text": "Pin every dependency",
            "scope": "global",
            "confidence": None,
            "tags": ["a", "b"],
            "on_duplicate": "keep-both",
        },
    )
    decided = _run(
        store, "approve_proposal", now, actor="tui", curator=key, proposal=proposed["id"]
    )
    assert "operation" not in store.docs(review.TABLE)[decided["id"]]
    assert lessons.list_lessons(store, now)[0]["tags"] == ["a", "b"]
