"""Every imported record passes the models the CLI writes with, or the import is refused.

Refused: exit 2, one line naming the table, the record and the field, the store unchanged.
Accepted: what is stored is the model's output, so later commands never meet a record
missing a field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import folder_digest

T = "2026-11-01T12:00:00.000000Z"
STAMPS = {"created_at": T, "updated_at": T}


def _export(**tables: list[dict[str, Any]]) -> dict[str, Any]:
    return {"format": "memwork-export", "schema_version": 1, "tables": tables}


def _lesson(**extra: Any) -> dict[str, Any]:
    return {
        "id": "les_1",
        "content": "Canary every deploy",
        "fingerprint": "f",
        "last_reinforced_at": T,
        **STAMPS,
        **extra,
    }


def _slot(**extra: Any) -> dict[str, Any]:
    return {"id": "slot_1", "label": "persona", "content": "terse", **STAMPS, **extra}


def _session(**extra: Any) -> dict[str, Any]:
    return {"id": "ses_1", "started_at": T, **STAMPS, **extra}


def _episode(**extra: Any) -> dict[str, Any]:
    base = {"id": "ep_1", "index": 1, "task_id": "t", "score": 0.5, "steps": 1}
    return {**base, "outcome": "partial", **STAMPS, **extra}


def _write(tmp_path: Path, doc: Any, name: str = "in.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def _refused(cli, db: Path, path: Path, *needles: str, fmt: str = "auto") -> None:  # noqa: ANN001
    cli("lesson", "add", "already here")
    before = folder_digest(db)
    done = cli("import", str(path), "--format", fmt)
    assert done.code == 2, (done.out, done.err)
    assert len(done.err.strip().splitlines()) == 1 and "internal error" not in done.err
    for needle in needles:
        assert needle in done.err, done.err
    assert folder_digest(db) == before


# -- memwork format: every table --------------------------------------------------------------
REFUSED = [
    (
        "lesson confidence 'high'",
        {"lessons": [_lesson(confidence="high")]},
        "lessons[1].confidence",
    ),
    (
        "lesson timestamp",
        {"lessons": [_lesson(last_reinforced_at="yesterday")]},
        "last_reinforced_at",
    ),
    ("lesson scope", {"lessons": [_lesson(scope="team")]}, "lessons[1].scope"),
    ("slot label", {"slots": [_slot(label="a b")]}, "slots[1].label"),
    ("slot limit", {"slots": [_slot(limit=0)]}, "slots[1].limit"),
    ("slot limit 2**70", {"slots": [_slot(limit=2**70)]}, "slots[1].limit"),
    ("episode outcome", {"episodes": [_episode(outcome="meh")]}, "episodes[1].outcome"),
    ("episode score", {"episodes": [_episode(score=7)]}, "episodes[1].score"),
    ("episode steps 1e29", {"episodes": [_episode(steps=1e29)]}, "episodes[1].steps"),
    (
        "episode deep metadata",
        {"episodes": [_episode(metadata=json.loads("[" * 80 + "]" * 80))]},
        "nests deeper",
    ),
    (
        "card without task",
        {"mistake_cards": [{"id": "c", "first_seen_episode": 1, "last_seen_episode": 1, **STAMPS}]},
        "mistake_cards[1].task_id",
    ),
    (
        "rule polarity",
        {"rules": [{"id": "r", "text": "x", "polarity": "maybe", **STAMPS}]},
        "rules[1].polarity",
    ),
    ("session status", {"sessions": [_session(status="paused")]}, "sessions[1].status"),
    ("session id with /", {"sessions": [_session(id="a/b")]}, "sessions[1].id"),
    ("session id with NUL", {"sessions": [_session(id="a\x00b")]}, "sessions[1].id"),
    ("session id of 300 chars", {"sessions": [_session(id="s" * 300)]}, "sessions[1].id"),
    (
        "observation session id",
        {"observations": [{"id": "o", "session_id": "../x", "content": "c", **STAMPS}]},
        "observations[1].session_id",
    ),
    (
        "wm state",
        {
            "working_memory": [
                {"id": "state", "session_id": "s", "kv": {"k": {"value": 1}}, **STAMPS}
            ]
        },
        "working_memory[1].kv.k.set_at",
    ),
    (
        "audit timestamp",
        {
            "audit": [
                {
                    "id": "a",
                    "seq": 1,
                    "ts": "later",
                    "actor": "cli",
                    "action": "x",
                    "table": "t",
                    "record_id": "r",
                    "summary": "s",
                }
            ]
        },
        "audit[1].ts",
    ),
    (
        "audit actor secret",
        {
            "audit": [
                {
                    "id": "a",
                    "seq": 1,
                    "ts": T,
                    "actor": "cli:ghp_" + "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2QeX",
                    "action": "x",
                    "table": "t",
                    "record_id": "r",
                    "summary": "s",
                }
            ]
        },
        "audit[1].actor",
    ),
    (
        "task stats mean",
        {"task_stats": [{"id": "t", "task_id": "t", "mean_score": "high"}]},
        "task_stats[1].mean_score",
    ),
    ("meta recent", {"meta": [{"id": "episodes", "recent": {"a": 1}}]}, "meta[1].recent"),
    (
        "crash count",
        {
            "crashes": [
                {
                    "id": "crash_1",
                    "crash_fingerprint": "f",
                    "episode_id": "ep_1",
                    "index": 1,
                    "task_id": "t",
                    "error_type": "E",
                    "count": 0,
                    "first_seen_at": T,
                    "last_seen_at": T,
                    **STAMPS,
                }
            ]
        },
        "crashes[1].count",
    ),
    ("meta counters", {"meta": [{"id": "counters", "rule_seq": -3}]}, "meta[1]"),
    (
        "distinct kind",
        {
            "distinct": [
                {
                    "id": "m1",
                    "kind": "other",
                    "text": "x",
                    "seq": 1,
                    "first_seen_episode": 1,
                    "first_seen_at": T,
                }
            ]
        },
        "distinct[1].kind",
    ),
    (
        "proposal status",
        {
            "proposals": [
                {
                    "id": "prop_1",
                    "kind": "lesson",
                    "op": "add",
                    "target": "global",
                    "args": {"content": "x"},
                    "status": "maybe",
                    "proposed_by": "cli",
                    **STAMPS,
                }
            ]
        },
        "proposals[1].status",
    ),
    (
        "link kind",
        {
            "links": [
                {"id": "l", "kind": "Not A Kind", "from": "a", "to": "b", "home": "lessons"}
                | STAMPS
            ]
        },
        "links[1].kind",
    ),
    (
        "link home outside the store",
        {"links": [{"id": "l", "kind": "about", "from": "a", "to": "b", "home": "../x"} | STAMPS]},
        "links[1]",
    ),
    (
        "action status",
        {"actions": [{"id": "a", "title": "t", "status": "later"} | STAMPS]},
        "actions[1].status",
    ),
    (
        "profile limit",
        {"profiles": [{"id": "p", "project": "api", "limit": 0} | STAMPS]},
        "profiles[1].limit",
    ),
    (
        "wm scope kind",
        {"wm_scopes": [{"id": "team:x", "scope": "team:x", "kv": {}} | STAMPS]},
        "wm_scopes[1].scope",
    ),
    # An old export's relation fields (turned into links as it is read), of the wrong type.
    (
        "a rule's episode_ids not a list",
        {"rules": [{"id": "r", "episode_ids": 1.5e24} | STAMPS]},
        "tables.rules[1].episode_ids",
        "must be a list of record ids",
    ),
    (
        "a card's merged_from holding a number",
        {"mistake_cards": [{"id": "c", "merged_from": ["mc_1", 7]} | STAMPS]},
        "tables.mistake_cards[1].merged_from",
    ),
    (
        "a lesson's supersedes an object",
        {"lessons": [{"id": "l", "supersedes": {"id": "x"}} | STAMPS]},
        "tables.lessons[1].supersedes",
        "must be a record id",
    ),
    ("checkpoints", {"checkpoints": [{"id": ".."}]}, "tables.checkpoints", "store-local"),
    ("imports", {"imports": [{"id": "imp_1"}]}, "tables.imports"),
    (
        "task id secret",
        {"episodes": [_episode(task_id="PASSWORD=hunter2rocks")]},
        "episodes[1].task_id",
        "secret",
    ),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_memwork_import_refuses_invalid_records(cli, db: Path, tmp_path: Path, case: tuple) -> None:  # noqa: ANN001
    _, tables, *needles = case
    _refused(cli, db, _write(tmp_path, _export(**tables)), *needles)


def test_refused_cases_cover_every_table() -> None:
    from memwork.core.services.interop.memwork_format import KNOWN, LOCAL

    covered = {t for c in REFUSED for t in c[1]}
    assert covered >= KNOWN | LOCAL


def test_missing_fields_get_their_defaults(cli, tmp_path: Path) -> None:  # noqa: ANN001
    doc = _export(
        slots=[{"id": "slot_1", "label": "persona", "content": "terse", **STAMPS}],
        lessons=[{k: v for k, v in _lesson(confidence="0.9").items()}],
        sessions=[_session()],
    )
    done = cli("import", str(_write(tmp_path, doc)))
    assert done.code == 0, done.err
    (slot,) = cli("slot", "list", "--json").json()
    assert (slot["limit"], slot["position"], slot["read_only"]) == (2000, 0, False)
    (lesson,) = cli("lesson", "list", "--json").json()
    assert lesson["confidence"] == 0.9 and lesson["decay_rate"] == 0.05
    assert cli("context").code == 0 and "Canary every deploy" in cli("context").out
    assert cli("session", "list").code == 0


def test_imported_text_is_scrubbed_and_personal_details_kept_in_slots(
    cli, db: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    secret = "ghp_" + "R7mQx2Lp9Vn4Ks8Tz1Wb6Hc3Yd5Jf0Ga2QeX"
    doc = _export(
        lessons=[_lesson(content=f"mail ann@example.com, token {secret}")],
        slots=[_slot(content=f"ann@example.com {secret}")],
    )
    done = cli("import", str(_write(tmp_path, doc)), "--json")
    assert done.code == 0, done.err
    assert done.json()["redactions"] == {"email": 1, "github-pat": 2}
    (lesson,) = cli("lesson", "list", "--json").json()
    assert lesson["content"] == "mail [redacted:email], token [redacted:github-pat]"
    from memwork.core.base.text import fingerprint

    assert lesson["fingerprint"] == fingerprint(lesson["content"])
    (slot,) = cli("slot", "list", "--json").json()
    assert slot["content"] == "ann@example.com [redacted:github-pat]"
    assert secret not in "".join(p.read_text() for p in db.glob("*.json"))


# -- the other formats ------------------------------------------------------------------------
def test_letta_import_refuses_bad_blocks(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    for block, needle in (
        ({"label": "a", "value": "x", "limit": "lots"}, "limit"),
        ({"label": "a", "value": "x", "limit": 1e308}, "limit"),
        ({"label": "a", "value": 5}, "value"),
    ):
        path = _write(tmp_path, {"agents": [], "blocks": [block]}, "agent.af")
        _refused(cli, db, path, needle, fmt="letta")


def test_agentmemory_source_session_ids_never_become_paths(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    # agentmemory's own session ids are mapped to memwork ids; the odd ones stay harmless.
    odd = ["../../etc", "a\x00b", "s" * 300]
    doc = {
        "version": "1",
        "exportedAt": T,
        "sessions": [{"id": sid, "project": "p", "startedAt": T} for sid in odd],
        "observations": {
            sid: [{"id": "o1", "type": "note", "content": "c", "timestamp": T}] for sid in odd
        },
    }
    done = cli("import", str(_write(tmp_path, doc)), "--format", "agentmemory")
    assert done.code == 0, done.err
    listed = cli("session", "list", "--json").json()
    assert len(listed) == 3
    for session in listed:
        assert "/" not in session["id"] and "\x00" not in session["id"]
        assert len(session["id"]) <= 200 and "\x00" not in session["title"]
    assert all(p.parent == db for p in db.rglob("*.json") if "snapshots" not in p.parts)


def test_episodic_import_refuses_bad_episodes(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    doc = {
        "version": 1,
        "total_episodes": 1,
        "global_rules": [],
        "task_rules": {},
        "episode_log": [
            {"timestamp": T, "task_id": "t", "score": "high", "steps": 1, "summary": "s"}
        ],
        "score_history": {"t": [0.5]},
        "mistakes": [],
        "successes": [],
        "mistake_cards": [],
    }
    _refused(cli, db, _write(tmp_path, doc), "score", fmt="episodic")
    doc["episode_log"][0] |= {"score": 0.5, "steps": 1e29}
    _refused(cli, db, _write(tmp_path, doc), "steps", fmt="episodic")
