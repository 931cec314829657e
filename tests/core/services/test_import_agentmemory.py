"""``memwork import --format agentmemory``: agentmemory-style server exports, old and new."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.base.text import fingerprint
from memwork.core.services.interop import agentmemory, importer
from memwork.core.services.interop.bundle import Bundle
from tests.conftest import NOW, folder_digest

DATA = Path(__file__).resolve().parents[2] / "data" / "agentmemory"
OLD = DATA / "v0.3-export.json"  # sessions, observations, memories, summaries, profiles
NEW = DATA / "v0.9-export.json"  # plus lessons, slots, an action and a graph (ignored)
T_NOW = "2026-11-01T12:00:00Z"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _parse(data: Any) -> Bundle:
    bundle = agentmemory.parse(data, now=NOW)
    importer.validate_bundle(bundle)  # every doc is a complete, valid record
    return bundle


def _by(bundle: Bundle, table: str, key: str) -> dict[str, dict[str, Any]]:
    return {d[key]: d for d in bundle.tables.get(table, [])}


def _obs(session: str, n: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"o{n}",
        "sessionId": session,
        "timestamp": f"2026-10-01T10:{n // 60:02d}:{n % 60:02d}.000Z",
        "type": "note",
        "title": f"step {n}",
        "narrative": f"did thing number {n}",
        **extra,
    }


def _doc(**parts: Any) -> dict[str, Any]:
    return {"version": "0.8.0", "exportedAt": "2026-10-30T00:00:00Z", **parts}


def _write(tmp_path: Path, data: Any, name: str = "export.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# -- sniffing -----------------------------------------------------------------------------
def test_sniffing() -> None:
    assert importer.sniff(_load(OLD)) == "agentmemory"
    assert importer.sniff(_load(NEW)) == "agentmemory"
    assert agentmemory.looks_like({"sessions": [], "observations": {}, "memories": []})
    assert not agentmemory.looks_like({"agents": [], "blocks": []})
    assert not agentmemory.looks_like({"core_memory": [], "exportedAt": "x"})
    assert not agentmemory.looks_like({"global_rules": [], "episode_log": []})
    assert not agentmemory.looks_like([])


# -- the older export -------------------------------------------------------------------
def test_old_export_counts_and_note() -> None:
    bundle = _parse(_load(OLD))
    # 3 listed sessions + 1 created for observations that point to a missing one;
    # 3 latest memories + 1 convention + 1 common error from the profile.
    assert bundle.counts() == {"sessions": 4, "observations": 9, "lessons": 5}
    note = bundle.note
    assert note["version"] == "0.3.0"
    assert note["exported_at"] == "2026-10-20T09:15:00.000000Z"
    assert note["sessions_created"] == ["ses_m1z00orphan"]
    assert note["memories_older_versions_skipped"] == 1
    (profile,) = note["profiles"]
    assert profile["project"] == "acme-api"
    assert profile["top_concepts"] == ["rate-limiting", "redis"]
    assert profile["summary"].startswith("Node/TypeScript API")
    assert "ignored_keys" not in note


def test_old_export_sessions() -> None:
    bundle = _parse(_load(OLD))
    sessions = _by(bundle, "sessions", "started_at")
    done = sessions["2026-10-18T08:02:11.412000Z"]
    assert done["status"] == "ended" and done["ended_at"] == "2026-10-18T09:47:03.001000Z"
    assert done["project"] == "acme-api"
    # The session's summary record names it and fills its summary.
    assert done["title"] == "Fix burst traffic in the rate limiter"
    assert done["summary"].startswith("Found that the fixed window")
    assert "Key decisions:\n- Sliding log instead of fixed window" in done["summary"]
    assert (done["observation_count"], done["dropped_observations"]) == (4, 0)
    # Started as epoch milliseconds; "abandoned" is ended, at its last observation.
    abandoned = sessions["2026-10-19T09:00:00.000000Z"]
    assert abandoned["status"] == "ended"
    assert abandoned["ended_at"] == "2026-10-19T09:10:00.000000Z"
    assert abandoned["title"] == "ses_m2b77e41"  # no title anywhere: the source id
    active = sessions["2026-10-20T08:55:42.000000Z"]
    assert (active["status"], active["ended_at"], active["project"]) == ("active", None, "acme-web")
    # Created for orphan observations: ended, spanning its observations and summary.
    created = sessions["2026-10-15T14:00:00.000000Z"]
    assert created["status"] == "ended" and created["ended_at"] == "2026-10-15T14:10:00.000000Z"
    assert created["title"] == "Faster CI caching"
    assert created["observation_count"] == 2


def test_old_export_observations() -> None:
    bundle = _parse(_load(OLD))
    sessions = _by(bundle, "sessions", "id")
    by_session: dict[str, list[dict[str, Any]]] = {}
    for doc in bundle.tables["observations"]:
        assert doc["session_id"] in sessions
        by_session.setdefault(doc["session_id"], []).append(doc)
    for sid, docs in by_session.items():
        assert [d["seq"] for d in docs] == list(range(1, len(docs) + 1))
        assert sessions[sid]["observation_count"] == len(docs)
    first = bundle.tables["observations"][0]
    assert first["kind"] == "file_read"
    assert first["content"] == (
        "Read the rate limiter\n"
        "Looked at src/middleware/rate_limit.ts to see why bursts get through.\n"
        "- Limiter uses a fixed window of 60 s\n"
        "- Redis key prefix is rl:\n"
        "Files: src/middleware/rate_limit.ts"
    )
    assert first["tags"] == ["rate-limiting", "redis"]
    assert first["created_at"] == "2026-10-18T08:03:40.120000Z"
    contents = "\n".join(d["content"] for d in bundle.tables["observations"])
    assert "dana.k@" not in contents and "[redacted:email]" in contents
    second = bundle.tables["observations"][1]
    assert second["content"].startswith("Ran the integration tests — 3 failures\n")


def test_old_export_memories_become_lessons() -> None:
    lessons = _by(_parse(_load(OLD)), "lessons", "content")
    rate = lessons[
        "Rate limiting: The API rate limiter is a sliding log in Redis, 100 requests per "
        "minute per key."
    ]
    assert rate["confidence"] == pytest.approx(0.8)  # strength 8 of 10
    assert rate["scope"] == "global" and rate["source"] == "agentmemory"
    assert rate["tags"] == ["architecture", "rate-limiting", "redis"]
    assert rate["last_reinforced_at"] == "2026-10-18T09:45:00.000000Z"
    assert rate["fingerprint"] == fingerprint(rate["content"])
    assert lessons["Package manager: Use pnpm, never npm, in every acme repository."][
        "confidence"
    ] == pytest.approx(1.0)
    # The superseded version (isLatest false) is not a lesson of its own.
    assert not any("fixed 60 s window" in c for c in lessons)
    convention = lessons["Run pnpm test:integration before pushing"]
    assert convention["scope"] == "project:acme-api"
    assert convention["tags"] == ["convention", "profile"]
    assert convention["last_reinforced_at"] == "2026-10-19T10:00:00.000000Z"
    assert lessons["Migrations that are not idempotent fail on the second run"]["tags"] == [
        "common-error",
        "profile",
    ]


# -- the newer export ---------------------------------------------------------------------
def test_new_export_counts_and_note() -> None:
    bundle = _parse(_load(NEW))
    assert bundle.counts() == {
        "sessions": 2,
        "observations": 4,
        "lessons": 4,
        "slots": 4,
        "actions": 1,
    }
    note = bundle.note
    assert note["version"] == "0.9.12"
    assert note["ignored_keys"] == ["graphNodes"]
    assert note["not_imported"] == {"graphNodes": 2}
    assert note["slots_unpinned_in_source"] == ["self_notes"]
    assert "sessions_created" not in note


def test_new_export_lessons() -> None:
    bundle = _parse(_load(NEW))
    lessons = bundle.tables["lessons"]
    rotate = [x for x in lessons if x["content"].startswith("Rotate service tokens")]
    # Same text as a memory, but that one is global and this one the project's: two lessons.
    assert sorted(x["scope"] for x in rotate) == ["global", "project:acme-api"]
    project = next(x for x in rotate if x["scope"] == "project:acme-api")
    assert (project["confidence"], project["reinforcements"]) == (0.7, 2)
    assert project["last_reinforced_at"] == "2026-10-28T09:00:00.000000Z"
    memory = next(x for x in rotate if x["scope"] == "global")
    assert memory["confidence"] == pytest.approx(0.9)
    by_content = {x["content"]: x for x in lessons}
    docs = by_content["Check openapi.yaml whenever pagination changes."]
    assert docs["created_at"] == "2026-10-26T17:33:20.000000Z"  # epoch milliseconds
    assert docs["decay_rate"] == 0.1 and docs["tags"] == ["docs"]
    assert by_content["Staging deploys need a VPN connection."]["deleted"] is True


def test_new_export_slots_and_scrubbed_observations() -> None:
    bundle = _parse(_load(NEW))
    slots = bundle.tables["slots"]
    assert [(s["label"], s["limit"], s["read_only"], s["position"]) for s in slots] == [
        ("persona", 1000, False, 0),
        ("user_preferences", 2000, True, 1),
        ("project_context", 3000, False, 2),
        ("self_notes", 1500, False, 3),
    ]
    assert slots[3]["content"] == ""
    assert slots[0]["description"].startswith("How the agent should see itself")
    contents = "\n".join(d["content"] for d in bundle.tables["observations"])
    assert "eyJhbGci" not in contents and "Bearer [redacted:bearer]" in contents
    sessions = _by(bundle, "sessions", "status")
    assert sessions["active"]["ended_at"] is None
    assert sessions["ended"]["project"] == "acme-api"


def test_ids_are_stable_across_parses() -> None:
    first, second = _parse(_load(OLD)), _parse(_load(OLD))
    for table in ("sessions", "observations"):
        assert [d["id"] for d in first.tables[table]] == [d["id"] for d in second.tables[table]]
    assert all(d["id"].startswith("ses_") for d in first.tables["sessions"])
    assert all(d["id"].startswith("obs_") for d in first.tables["observations"])


# -- hand-made edge cases ---------------------------------------------------------------
def test_observation_cap_keeps_the_newest_500() -> None:
    items = [_obs("s1", n) for n in range(600)]
    random.Random(7).shuffle(items)  # out of order in the file: sorted by timestamp
    bundle = _parse(
        _doc(
            sessions=[{"id": "s1", "startedAt": "2026-10-01T09:00:00Z"}], observations={"s1": items}
        )
    )
    (session,) = bundle.tables["sessions"]
    assert (session["observation_count"], session["dropped_observations"]) == (500, 100)
    kept = bundle.tables["observations"]
    assert len(kept) == 500
    assert [d["seq"] for d in kept] == list(range(101, 601))
    assert kept[0]["content"].startswith("step 100\n") and kept[-1]["content"].startswith(
        "step 599"
    )
    assert bundle.note["observations_dropped_over_cap"] == 100


def test_file_order_when_some_observations_have_no_time() -> None:
    items = [_obs("s1", 5), {"id": "x", "content": "no time"}, _obs("s1", 1)]
    bundle = _parse(
        _doc(
            sessions=[{"id": "s1", "startedAt": "2026-10-01T09:00:00Z"}], observations={"s1": items}
        )
    )
    assert [d["content"].split("\n")[0] for d in bundle.tables["observations"]] == [
        "step 5",
        "no time",
        "step 1",
    ]
    # An observation without a time is placed at the session's start.
    assert bundle.tables["observations"][1]["created_at"] == "2026-10-01T09:00:00.000000Z"


def test_missing_sessions_are_created_not_dropped() -> None:
    bundle = _parse(
        _doc(sessions=[], observations={"lost-1": [_obs("lost-1", 1), _obs("lost-1", 2)]})
    )
    (session,) = bundle.tables["sessions"]
    assert session["title"] == "lost-1" and session["status"] == "ended"
    assert session["started_at"] == "2026-10-01T10:00:01.000000Z"
    assert session["ended_at"] == "2026-10-01T10:00:02.000000Z"
    assert [d["session_id"] for d in bundle.tables["observations"]] == [session["id"]] * 2
    assert bundle.note["sessions_created"] == ["lost-1"]


def test_flat_observation_list_and_session_object_are_tolerated() -> None:
    data = _doc(
        sessions={"s1": {"project": "p", "startedAt": "2026-10-01T09:00:00Z"}},
        observations=[_obs("s1", 1), _obs("s2", 2)],
    )
    bundle = _parse(data)
    assert bundle.counts() == {"sessions": 2, "observations": 2}
    assert bundle.note["sessions_created"] == ["s2"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-10-01T10:00:00Z", "2026-10-01T10:00:00.000000Z"),
        ("2026-10-01T12:00:00+02:00", "2026-10-01T10:00:00.000000Z"),
        ("2026-10-01T10:00:00", "2026-10-01T10:00:00.000000Z"),
        (1790848800000, "2026-10-01T10:00:00.000000Z"),  # epoch milliseconds
        (1790848800, "2026-10-01T10:00:00.000000Z"),  # epoch seconds
        ("1790848800000", "2026-10-01T10:00:00.000000Z"),
        (1790848800123.0, "2026-10-01T10:00:00.123000Z"),
    ],
)
def test_timestamps_iso_or_epoch(value: Any, expected: str) -> None:
    bundle = _parse(_doc(sessions=[{"id": "s", "startedAt": value}]))
    assert bundle.tables["sessions"][0]["started_at"] == expected


def test_lessons_of_equal_content_and_scope_merge() -> None:
    data = _doc(
        memories=[
            {"content": "Prefer small PRs.", "strength": 6, "concepts": ["review"]},
            {"content": "prefer  SMALL prs.", "confidence": 0.9, "tags": ["habit"]},
        ],
        lessons=[{"content": "Prefer small PRs.", "reinforcements": 3, "confidence": 0.2}],
    )
    bundle = _parse(data)
    (lesson,) = bundle.tables["lessons"]
    assert lesson["content"] == "Prefer small PRs."
    assert lesson["confidence"] == 0.9
    assert lesson["reinforcements"] == 2 + 3
    assert lesson["tags"] == ["habit", "review"]
    assert lesson["wordings"] == ["prefer  SMALL prs."]
    assert bundle.note["lessons_merged_duplicates"] == 2


@pytest.mark.parametrize(
    ("fields", "confidence"),
    [
        ({}, 0.5),
        ({"confidence": 1.7}, 1.0),
        ({"confidence": -0.2}, 0.0),
        ({"strength": 12}, 1.0),
        ({"strength": 3}, 0.3),
        ({"strength": 0.4}, 0.4),
    ],
)
def test_confidence_default_and_clamp(fields: dict[str, Any], confidence: float) -> None:
    bundle = _parse(_doc(memories=[{"content": "x", **fields}]))
    assert bundle.tables["lessons"][0]["confidence"] == pytest.approx(confidence)


def test_scopes() -> None:
    data = _doc(
        lessons=[
            {"content": "a", "project": "acme"},
            {"content": "b", "scope": "task:deploy"},
            {"content": "c", "scope": "global", "project": "acme"},
            {"content": "d", "scope": "project"},
        ]
    )
    scopes = [x["scope"] for x in _parse(data).tables["lessons"]]
    assert scopes == ["project:acme", "task:deploy", "project:acme", "global"]


def test_summaries_without_a_session_are_lessons() -> None:
    data = _doc(
        summaries=[
            {
                "project": "acme",
                "title": "Weekly",
                "narrative": "Shipped the limiter.",
                "concepts": ["rate-limiting"],
            }
        ]
    )
    bundle = _parse(data)
    assert "sessions" not in bundle.tables
    (lesson,) = bundle.tables["lessons"]
    assert lesson["content"] == "Weekly: Shipped the limiter."
    assert lesson["tags"] == ["rate-limiting", "summary"]
    assert lesson["scope"] == "project:acme"


def test_slot_labels_that_clash_or_break_the_rule() -> None:
    data = _doc(
        slots=[
            {"label": "persona", "content": "global me", "scope": "global"},
            {"label": "persona", "content": "project me", "scope": "project", "project": "acme"},
            {"label": "team notes", "value": "v", "limit": "300"},
        ]
    )
    bundle = _parse(data)
    assert [(s["label"], s["content"], s["limit"]) for s in bundle.tables["slots"]] == [
        ("global/persona", "global me", 2000),
        ("acme/persona", "project me", 2000),
        ("team_notes", "v", 300),
    ]
    assert [r["to"] for r in bundle.note["renamed_labels"]] == [
        "global/persona",
        "acme/persona",
        "team_notes",
    ]
    as_object = _parse(_doc(slots={"guidance": {"content": "focus", "sizeLimit": 50}}))
    assert [(s["label"], s["limit"]) for s in as_object.tables["slots"]] == [("guidance", 50)]


def test_private_only_observations_are_counted_not_stored() -> None:
    items = [_obs("s", 1), {"id": "p", "content": "<private>my password is hunter2</private>"}]
    bundle = _parse(_doc(sessions=[{"id": "s"}], observations={"s": items}))
    assert len(bundle.tables["observations"]) == 1
    assert bundle.note["observations_private_only"] == 1
    assert "hunter2" not in json.dumps(bundle.tables)


def _broken(where: str) -> dict[str, Any]:
    """The old sample with one item broken in the middle."""
    data = copy.deepcopy(_load(OLD))
    if where == "memory":
        data["memories"][1]["isLatest"] = True
        data["memories"][2]["content"] = "   "
        data["memories"][2]["title"] = ""
    elif where == "observation":
        data["observations"]["ses_m2a91f0c"][1]["timestamp"] = "yesterday"
    elif where == "session":
        del data["sessions"][1]["id"]
    elif where == "confidence":
        data["memories"][0]["strength"] = "high"
    elif where == "observations":
        data["observations"] = "all of them"
    return data


@pytest.mark.parametrize(
    ("where", "field", "rule"),
    [
        ("memory", "memories[3].content", "must be a non-empty string"),
        ("observation", "observations.ses_m2a91f0c[2].timestamp", "ISO-8601"),
        ("session", "sessions[2].id", "is required"),
        ("confidence", "memories[1].strength", "must be a number"),
        ("observations", "observations", "must be an object"),
    ],
)
def test_a_broken_item_names_item_and_field(where: str, field: str, rule: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        agentmemory.parse(_broken(where), now=NOW)
    assert caught.value.field == field and rule in caught.value.rule


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (_doc(sessions=[{"id": "a"}, {"id": "a"}]), "sessions[2].id"),
        (_doc(lessons=[{"content": "x", "decayRate": 3}]), "lessons[1].decayRate"),
        (_doc(lessons=[{"content": "x", "scope": "team"}]), "lessons[1].scope"),
        (_doc(lessons=[{"content": "x" * 4001}]), "lessons[1].content"),
        (_doc(slots=[{"label": "s", "sizeLimit": "big"}]), "slots[1].sizeLimit"),
        (_doc(slots=[{"content": "no label"}]), "slots[1].label"),
        (_doc(observations={"s": [{"id": "o", "type": "note"}]}), "observations.s[1].content"),
        (_doc(observations={"s": [{"text": "t", "tags": "a,b"}]}), "observations.s[1].tags"),
        (_doc(memories="none"), "memories"),
    ],
)
def test_hand_made_broken_items(data: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        agentmemory.parse(data, now=NOW)
    assert caught.value.field == field


# -- through the CLI ------------------------------------------------------------------------
def test_cli_imports_the_old_export(cli) -> None:  # noqa: ANN001
    done = cli("import", str(OLD), now=T_NOW)
    assert done.code == 0, done.err
    assert "(agentmemory)" in done.out
    assert "sessions: 4 added" in done.out
    assert "observations: 9 added" in done.out
    assert "lessons: 5 added" in done.out
    sessions = cli("session", "list", "--json").json()
    assert len(sessions) == 4
    assert sorted(s["observation_count"] for s in sessions) == [1, 2, 2, 4]
    shown = cli("session", "show", sessions[-1]["id"], "--json").json()
    assert [o["kind"] for o in shown["observations"]] == ["discovery", "decision"]
    lessons = cli("lesson", "list", "--all", "--json").json()
    assert len(lessons) == 5 and all(x["source"] == "agentmemory" for x in lessons)


def test_cli_imports_the_new_export_with_explicit_format(cli) -> None:  # noqa: ANN001
    done = cli("import", str(NEW), "--format", "agentmemory", "--json", now=T_NOW)
    assert done.code == 0, done.err
    report = done.json()
    assert report["added"] == {
        "actions": 1,
        "lessons": 4,
        "observations": 4,
        "sessions": 2,
        "slots": 4,
    }
    assert report["note"]["ignored_keys"] == ["graphNodes"]
    slots = cli("slot", "list", "--json").json()
    assert [s["label"] for s in slots] == [
        "persona",
        "user_preferences",
        "project_context",
        "self_notes",
    ]
    assert slots[1]["read_only"] is True
    # A read-only slot brought in by the import stays locked for agents.
    assert cli("slot", "set", "user_preferences", "changed").code == 2


def test_cli_broken_item_writes_nothing(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    assert cli("import", str(NEW), now=T_NOW).code == 0
    before = folder_digest(db)
    done = cli("import", str(_write(tmp_path, _broken("memory"))), now=T_NOW)
    assert done.code == 2 and done.out == ""
    assert done.err.count("\n") == 1
    assert "memories[3].content" in done.err and "non-empty string" in done.err
    assert folder_digest(db) == before


def test_cli_reimport_reports_clashes(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("import", str(OLD), now=T_NOW).code == 0
    before = folder_digest(db)
    done = cli("import", str(OLD), now=T_NOW)
    assert done.code == 2
    assert "18 records already exist" in done.err and "--on-conflict" in done.err
    assert folder_digest(db) == before

    skipped = cli("import", str(OLD), "--on-conflict", "skip", now=T_NOW)
    assert skipped.code == 0, skipped.err
    assert "sessions: 4 skipped" in skipped.out and "observations: 9 skipped" in skipped.out
    assert len(cli("session", "list", "--json").json()) == 4
    assert len(cli("lesson", "list", "--all", "--json").json()) == 5

    replaced = cli("import", str(OLD), "--on-conflict", "replace", now=T_NOW)
    assert replaced.code == 0, replaced.err
    assert "sessions: 0 added, 4 replaced" in replaced.out
    sessions = cli("session", "list", "--json").json()
    assert sorted(s["observation_count"] for s in sessions) == [1, 2, 2, 4]
    assert len(cli("lesson", "list", "--all", "--json").json()) == 5


def test_cli_keep_both_keeps_observations_with_their_session_copy(cli) -> None:  # noqa: ANN001
    assert cli("import", str(OLD), now=T_NOW).code == 0
    assert cli("import", str(OLD), "--on-conflict", "keep-both", now=T_NOW).code == 0
    sessions = cli("session", "list", "--json").json()
    assert len(sessions) == 8
    for session in sessions:
        shown = cli("session", "show", session["id"], "--json").json()
        assert len(shown["observations"]) == session["observation_count"] > 0
