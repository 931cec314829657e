"""``memwork observe`` checks sessions and observations without pydantic when it can.

The plain check (``core.models.plain_session``) must accept only what the models
accept, and give exactly what they would store; anything else goes to the models.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.domain import sessions
from memwork.core.models import plain_session
from memwork.core.models.base import validate
from memwork.core.models.limits import MAX_INT
from memwork.core.models.session import Observation, Session
from memwork.core.storage.store import Store
from tests.conftest import NOW, python_env

STAMP = "2026-11-01T12:00:00Z"


def _session(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": "run-42",
        "created_at": STAMP,
        "updated_at": STAMP,
        "agent_id": "coder",
        "project": "checkout",
        "title": "Deploy",
        "started_at": STAMP,
        "ended_at": None,
        "status": "active",
        "summary": "",
        "observation_count": 3,
        "dropped_observations": 0,
        "max_observations": 500,
        "forgotten_observations": 0,
        "implicit": False,
    }
    doc.update(over)
    return doc


def _observation(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": "obs_01",
        "created_at": STAMP,
        "updated_at": STAMP,
        "session_id": "run-42",
        "kind": "note",
        "content": "Canary at 5%",
        "tags": ["deploy"],
        "seq": 4,
        "after_end": False,
    }
    doc.update(over)
    return doc


#: Values that break (or bend) each kind of field: wrong types the models coerce or
#: refuse, values past a rule's edge, and values just inside it.
ODD = [
    None,
    "",
    " ",
    "x" * 50,
    "x" * 51,
    "x" * 201,
    "a/b",
    "..",
    "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "2026-11-01T12:00:00+02:00",
    "2026-13-01T12:00:00Z",
    "yesterday",
    0,
    1,
    -1,
    MAX_INT,
    MAX_INT + 1,
    3.0,
    "3",
    True,
    False,
    [],
    ["a", 1],
    ["a", "b"],
    {},
    "active",
    "ended",
    "paused",
]


def _verdicts(model: type[Session | Observation], doc: Any) -> tuple[Any, Any]:
    check = plain_session.plain_session if model is Session else plain_session.plain_observation
    plain = check(doc)
    try:
        stored: Any = validate(model, doc).to_doc()
    except InvalidInput:
        stored = "refused"
    return plain, stored


@pytest.mark.parametrize("model", [Session, Observation])
def test_the_field_lists_are_the_models_own(model: type[Session | Observation]) -> None:
    fields = plain_session.SESSION_FIELDS if model is Session else plain_session.OBSERVATION_FIELDS
    assert tuple(model.model_fields) == fields


@pytest.mark.parametrize("model", [Session, Observation])
def test_the_plain_check_accepts_only_what_the_model_stores_as_given(
    model: type[Session | Observation],
) -> None:
    make = _session if model is Session else _observation
    rng = random.Random(7)
    base = make()
    accepted = 0
    cases: list[Any] = [base, [base], "doc", {**base, "extra": 1}]
    cases += [{k: v for k, v in base.items() if k != name} for name in base]
    cases += [make(**{name: value}) for name in base for value in ODD]
    for _ in range(400):  # several odd fields at once
        names = rng.sample(list(base), rng.randint(1, 3))
        cases.append(make(**{name: rng.choice(ODD) for name in names}))
    for doc in cases:
        plain, stored = _verdicts(model, doc)
        if plain is not None:
            accepted += 1
            assert stored != "refused", doc
            assert plain == stored, doc
            assert list(plain) == list(stored), doc  # the model's field order
    assert _verdicts(model, base)[0] is not None  # what observe builds takes the fast path
    assert accepted > 20


def _observe_all(store: Store) -> None:
    at = NOW
    for i in range(6):
        at += timedelta(minutes=1)
        sessions.observe(
            store,
            "run-42",
            f"step {i}",
            kind="tool",
            tags=["a", "a", "b"],
            now=at,
            actor="cli:coder",
        )
    started = sessions.start_session(store, agent_id="coder", title="Deploy", now=at, actor="t")
    sessions.observe(store, started["id"], "first", now=at, actor="cli:coder")
    sessions.end_session(store, started["id"], summary="done", now=at, actor="t")
    sessions.observe(store, started["id"], "late flush", now=at, actor="cli:coder")


_ID = re.compile(r"\b[a-z]{2,5}_[0-9A-Z]{26}\b")


def _stored(store: Store) -> list[tuple[str, list[str]]]:
    """Every table's documents as JSON in their stored key order, ids replaced (they are
    random), sorted."""
    with store.reading():
        tables = {name: store.docs(name) for name in store.table_names()}
    return sorted(
        (_ID.sub("<id>", name), sorted(_ID.sub("<id>", json.dumps(d)) for d in docs.values()))
        for name, docs in tables.items()
    )


def test_observing_stores_the_same_documents_with_or_without_the_plain_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_MAX_OBS_PER_SESSION", "4")  # drops the oldest too
    fast = Store.in_memory()
    _observe_all(fast)
    monkeypatch.setattr(sessions, "plain_session", lambda doc: None)
    monkeypatch.setattr(sessions, "plain_observation", lambda doc: None)
    slow = Store.in_memory()
    _observe_all(slow)
    assert _stored(fast) == _stored(slow)
    assert any(name.startswith("observations.") for name, _ in _stored(fast))


def test_an_observe_process_does_not_import_pydantic(tmp_path) -> None:
    probe = (
        "import sys; from memwork.core.doors.cli.main import main; "
        "codes = [main(['--db', sys.argv[1], 'observe', '--session', s, 'canary ok']) "
        "for s in ('run-1', 'run-1')]; "
        "print(codes, sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'tinydb'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env={k: v for k, v in python_env().items() if k != "MEMWORK_VERIFY_WRITES"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[0, 0] []"
