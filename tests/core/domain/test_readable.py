"""A wrong-typed slot, rule, mistake card, session, observation or episode (a table file edited by
hand or damaged) is left out of every answer with one line on stderr, never an internal
error; the other records are answered and the store is left as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import folded, folder_digest, resealed

pytestmark = pytest.mark.folder_only

EPISODES = [
    {
        "task_id": "deploy",
        "score": 0.2,
        "mistakes": ["forgot the canary"],
        "mistake_cards": [
            {"mistake_type": "skip_canary", "bad_decision": "no canary", "lesson": "canary"}
        ],
    },
    {
        "task_id": "deploy",
        "score": 0.3,
        "mistake_cards": [
            {"mistake_type": "skip_tests", "bad_decision": "no tests", "lesson": "run tests"}
        ],
    },
]


def _store(cli: Any, db: Path, tmp_path: Path) -> str:
    """A store holding two of each kind; the first session's id."""
    cli("slot", "set", "persona", "You are careful with deploys")
    cli("slot", "set", "prefs", "Short answers please")
    cli("rule", "add", "Always run the canary first")
    cli("rule", "add", "Read the deploy logs")
    sid = cli("session", "start", "--title", "canary night").out.strip()
    cli("session", "start", "--title", "quiet day")
    cli("observe", "--session", sid, "the canary deploy failed at noon")
    cli("observe", "--session", sid, "the canary rollback worked")
    batch = tmp_path / "episodes.json"
    batch.write_text(json.dumps(EPISODES))
    assert cli("record-episode", str(batch)).code == 0
    return sid


def _records(db: Path) -> dict[str, str]:
    """The store's files but search's cache (a search builds it, from the records)."""
    return {k: v for k, v in folder_digest(db).items() if not k.startswith("cache/")}


def _named(arg: str, sid: str, good: str) -> str:
    return {"SID": sid, "GOOD": good}.get(arg, arg)


# (table file glob, field, wrong value, rule said, the kind's own reads)
CASES = [
    ("slots", "position", "first", "must be a whole number (got 'first')", [("slot", "list")]),
    ("slots", "content", 7, "must be a string (got 7)", [("slot", "list")]),
    ("rules.global", "seq", "x", "must be a whole number (got 'x')", [("rule", "list", "--all")]),
    ("rules.global", "active", "maybe", "must be true or false (got 'maybe')", [("rule", "list")]),
    (
        "mistake_cards",
        "seen_count",
        "many",
        "must be a whole number (got 'many')",
        [("card", "list")],
    ),
    (
        "mistake_cards",
        "merged_keys",
        [[1]],
        "must be a list of lists of strings (got a list holding a list holding int)",
        [("card", "list")],
    ),
    (
        "sessions",
        "observation_count",
        "lots",
        "must be a whole number (got 'lots')",
        [("session", "list")],
    ),
    (
        "observations.*",
        "seq",
        "x",
        "must be a whole number (got 'x')",
        [("session", "show", "SID")],
    ),
    ("episodes.*", "score", "high", "must be a number (got 'high')", [("get", "GOOD")]),
]


@pytest.mark.parametrize(
    ("table", "field", "value", "rule", "own"),
    CASES,
    ids=[f"{c[0].split('.')[0]}-{c[1]}" for c in CASES],
)
def test_a_wrong_typed_record_is_named_once_and_left_out(
    cli: Any, db: Path, tmp_path: Path, table: str, field: str, value: object, rule: str, own: list
) -> None:
    sid = _store(cli, db, tmp_path)
    path = next(folded(db).glob(f"{table}.json"))
    data = json.loads(path.read_text())
    bad, good = sorted(data["documents"])[:2]
    data["documents"][bad][field] = value
    path.write_text(json.dumps(data))
    resealed(path)
    before = _records(db)
    said = (
        f"memwork: {path.stem}: record '{bad}': {field}: {rule}; "
        "left out (memwork doctor names it)\n"
    )
    reads = [
        ("context",),
        ("context", "--task", "deploy", "--query", "canary deploy"),
        *own,
        ("--json", *own[0]),
        ("search", "canary deploy"),
        ("stats",),
        ("lint",),
        ("export",),
    ]
    heard = ""
    for args in reads:
        done = cli(*(_named(a, sid, good) for a in args))
        assert done.code == 0, (args, done.err)
        assert "internal error" not in done.err, args
        heard += done.err.replace("0 findings\n", "")
        # An export keeps every record, as it is; a left-out session's observations are
        # sound and still answered (their references carry its id).
        # A card's sightings name a left-out episode (stats shows the top cards).
        if args[0] != "export" and not (
            (table == "sessions" and args[0] in ("search", "context"))
            or (table == "episodes.*" and args[0] == "stats")
        ):
            assert bad not in done.out, args
    assert heard == said  # one line per process, naming table, id, field and rule
    assert good in cli("--json", *(_named(a, sid, good) for a in own[0])).out
    doctor = cli("doctor")
    assert doctor.code == 1 and bad in doctor.out and "internal error" not in doctor.err
    assert _records(db) == before  # untouched: the record is kept for a person to fix
    assert json.loads(path.read_text())["documents"][bad][field] == value


def test_the_defaults_are_the_models() -> None:
    # The check runs on memwork context's cold path, which loads no model: its defaults
    # are written out, and must stay the models'.
    from memwork.core.domain import readable
    from memwork.core.models.by_table import MODELS

    for table, defaults in readable.DEFAULTS.items():
        fields = MODELS[table].model_fields
        for name, value in defaults.items():
            assert fields[name].get_default(call_default_factory=True) == value, (table, name)
        assert set(readable.FIELDS[table]) | set(readable.OPTIONAL.get(table, {})) <= set(fields)


def test_a_write_never_takes_the_place_of_a_wrong_typed_slot(cli: Any, db: Path) -> None:
    cli("slot", "set", "persona", "You are careful with deploys")
    cli("slot", "set", "prefs", "Short answers please")
    path = folded(db) / "slots.json"
    data = json.loads(path.read_text())
    bad = next(d for d in data["documents"].values() if d["label"] == "persona")
    bad["position"] = "first"
    path.write_text(json.dumps(data))
    resealed(path)
    before = _records(db)
    assert cli("slot", "create", "persona").code == 2  # its label stays taken
    done = cli("slot", "set", "persona", "new words")
    assert done.code == 2 and "position" in done.err  # refused, naming the field
    assert _records(db) == before
    assert cli("slot", "move", "prefs", "0").code == 0  # the others are still curated
    assert json.loads(folded(db).joinpath("slots.json").read_text())["documents"][bad["id"]] == bad


def test_a_wrong_typed_rule_is_not_found_by_get_or_a_switch_and_its_text_can_come_back(
    cli: Any, db: Path
) -> None:
    bad = cli("rule", "add", "Always run the canary first").out.strip().split()[0]
    cli("rule", "add", "Read the deploy logs")
    path = folded(db) / "rules.global.json"
    data = json.loads(path.read_text())
    data["documents"][bad]["scope"] = 5
    path.write_text(json.dumps(data))
    resealed(path)
    kept = data["documents"][bad]
    for args in (("get", bad), ("rule", "deactivate", bad), ("rule", "activate", bad)):
        done = cli(*args)
        assert done.code == 2 and "not found" in done.err, (args, done.err)
    # The same words again: a sound rule beside the one a person has to fix.
    done = cli("--json", "rule", "add", "Always run the canary first")
    assert done.code == 0, done.err
    assert done.json()["id"] != bad
    assert "Always run the canary first" in cli("context").out
    assert (
        json.loads(folded(db).joinpath("rules.global.json").read_text())["documents"][bad] == kept
    )


def test_an_observation_for_a_wrong_typed_session_is_refused_naming_the_field(
    cli: Any, db: Path
) -> None:
    sid = cli("session", "start", "--title", "canary night").out.strip()
    path = folded(db) / "sessions.json"
    data = json.loads(path.read_text())
    data["documents"][sid]["observation_count"] = "lots"
    path.write_text(json.dumps(data))
    resealed(path)
    before = _records(db)
    done = cli("observe", "--session", sid, "the canary failed")
    assert done.code == 2 and "observation_count: must be a whole number" in done.err
    assert _records(db) == before  # nothing written over it
    assert cli("observe", "--session", "run-42", "another run is fine").code == 0


def test_a_lesson_an_older_memwork_wrote_is_read_as_it_is(tmp_path: Path) -> None:
    """A lesson without the fields a later memwork added (``effect_base``, ``source``)
    is sound: every lesson is served from the store's own table, not a copy, so a
    context over thousands of old lessons costs what it does over new ones; the
    lesson whose optional field has the wrong type is still left out."""
    from datetime import UTC, datetime

    from memwork.core.domain import lessons, readable
    from memwork.core.storage.store import Store

    store = Store(tmp_path / "db")
    now = datetime(2026, 11, 1, tzinfo=UTC)
    made = [
        lessons.add_lesson(store, text, now=now, actor="t").lesson
        for text in ("read the logs first", "back up before migrations")
    ]
    with store.transaction():
        for doc in made:
            old = {k: v for k, v in doc.items() if k not in ("effect_base", "source")}
            store.put("lessons", doc["id"], old)
    with store.reading():
        assert readable.docs(store, "lessons") is store.docs("lessons")
    with store.transaction():
        store.put("lessons", made[0]["id"], {**made[0], "effect_base": "high"})
    with store.reading():
        assert list(readable.docs(store, "lessons")) == [made[1]["id"]]
