"""agentmemory exports: relations become links, actions become work items with their
dependencies, every end pointing at the record it became here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.services.interop import agentmemory, importer
from tests.conftest import NOW, curator_args, folder_digest

T_NOW = "2026-11-01T12:00:00Z"


def _export() -> dict[str, Any]:
    memory = {"createdAt": "2026-10-20T10:00:00Z", "isLatest": True, "strength": 8}
    return {
        "version": "0.9.12",
        "exportedAt": "2026-10-30T00:00:00Z",
        "sessions": [],
        "observations": {},
        "summaries": [],
        "memories": [
            {
                **memory,
                "id": "m_old",
                "content": "Rate limit with a fixed window",
                "isLatest": False,
            },
            {**memory, "id": "m_new", "content": "Rate limit with a sliding window in Redis"},
            {**memory, "id": "m_docs", "content": "Document every limit in openapi.yaml"},
            {**memory, "id": "m_test", "content": "Load-test the limiter", "relatedIds": ["m_new"]},
        ],
        "relations": [
            {"type": "supersedes", "sourceId": "m_new", "targetId": "m_old"},
            {"type": "extends", "sourceId": "m_docs", "targetId": "m_new"},
            {"type": "related", "sourceId": "m_docs", "targetId": "m_gone"},
        ],
        "actions": [
            {
                "id": "a_impl",
                "title": "Implement the sliding window",
                "status": "done",
                "priority": 8,
                "description": "Replace the fixed window in src/middleware/rate_limit.ts",
                "createdAt": "2026-10-21T09:00:00Z",
                "updatedAt": "2026-10-22T09:00:00Z",
            },
            {
                "id": "a_docs",
                "title": "Update the openapi docs",
                "status": "pending",
                "priority": 5,
                "createdAt": "2026-10-21T09:05:00Z",
            },
            {
                "id": "a_release",
                "title": "Release 2.4",
                "status": "pending",
                "priority": 9,
                "createdAt": "2026-10-21T09:10:00Z",
            },
        ],
        "actionEdges": [
            {"type": "requires", "sourceActionId": "a_docs", "targetActionId": "a_impl"},
            {"type": "unlocks", "sourceActionId": "a_docs", "targetActionId": "a_release"},
            {"type": "conflicts_with", "sourceActionId": "a_release", "targetActionId": "a_x"},
        ],
        "graphNodes": [{"id": "gn_1", "type": "concept", "name": "rate-limiting"}],
    }


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_relations_and_actions_map_to_the_imported_records() -> None:
    bundle = agentmemory.parse(_export(), now=NOW)
    importer.validate_bundle(bundle)
    lessons = {x["content"]: x["id"] for x in bundle.tables["lessons"]}
    actions = {x["title"]: x for x in bundle.tables["actions"]}
    got = {(x["kind"], x["from"], x["to"], x["home"]) for x in bundle.tables["links"]}
    sliding = lessons["Rate limit with a sliding window in Redis"]
    impl, docs, release = (
        actions[t]["id"]
        for t in ("Implement the sliding window", "Update the openapi docs", "Release 2.4")
    )
    assert got == {
        ("extends", lessons["Document every limit in openapi.yaml"], sliding, "lessons"),
        ("related", lessons["Load-test the limiter"], sliding, "lessons"),
        ("after", docs, impl, "actions"),  # docs requires impl
        ("after", release, docs, "actions"),  # docs unlocks the release
    }
    done = actions["Implement the sliding window"]
    assert (done["status"], done["priority"], done["closed_at"]) == (
        "done",
        8,
        "2026-10-22T09:00:00.000000Z",
    )
    assert done["notes"][0]["text"] == "Replace the fixed window in src/middleware/rate_limit.ts"
    note = bundle.note
    assert (note["dependencies"], note["relations"]) == (2, 2)
    # The superseded version was not imported, nor m_gone, nor a_x: counted, not stored.
    assert note["links_skipped"] == {"action_missing": 1, "memory_missing": 1, "older_version": 1}
    assert note["ignored_keys"] == ["graphNodes"]


def test_a_dependency_cycle_is_refused_naming_the_edge() -> None:
    data = _export()
    data["actionEdges"].append(
        {"type": "requires", "sourceActionId": "a_impl", "targetActionId": "a_release"}
    )
    with pytest.raises(InvalidInput) as caught:
        agentmemory.parse(data, now=NOW)
    assert caught.value.field == "actionEdges[4]"
    assert "would make a cycle" in caught.value.rule


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda d: d["actions"][0].update(status="someday"), "actions[1].status"),
        (lambda d: d["actions"][1].pop("title"), "actions[2].title"),
        (lambda d: d["actions"][1].update(priority=2.5), "actions[2].priority"),
        (lambda d: d["relations"][1].update(type="Is Part Of!"), None),
        (lambda d: d["relations"][0].update(type=""), "relations[1].type"),
        (lambda d: d["relations"][1].update(type="sighted_in"), "relations[2].type"),
        (lambda d: d["actionEdges"][0].pop("targetActionId"), "actionEdges[1].targetActionId"),
    ],
)
def test_broken_work_items_name_the_field(change: Any, field: str | None) -> None:
    data = _export()
    change(data)
    if field is None:  # a type word with spaces reads as one kind (is_part_of)
        kinds = {x["kind"] for x in agentmemory.parse(data, now=NOW).tables["links"]}
        assert "is_part_of" in kinds
        return
    with pytest.raises(InvalidInput) as caught:
        agentmemory.parse(data, now=NOW)
    assert caught.value.field == field


def test_cli_import_brings_the_work_plan_and_its_dependencies(cli, tmp_path: Path) -> None:  # noqa: ANN001
    path = _write(tmp_path, _export())
    done = cli("import", str(path), "--json", now=T_NOW)
    assert done.code == 0, done.err
    report = done.json()
    assert report["added"]["actions"] == 3 and report["added"]["links"] == 4
    assert report["note"]["dependencies"] == 2 and report["note"]["relations"] == 2
    listed = {a["title"]: a for a in cli("--json", "action", "list").json()}
    docs, release = listed["Update the openapi docs"], listed["Release 2.4"]
    assert docs["after"] == [listed["Implement the sliding window"]["id"]]
    assert docs["workable"] is True  # what it waited for is done
    assert release["waiting_for"] == [docs["id"]] and release["workable"] is False
    context = cli("context", now=T_NOW).out
    assert "Update the openapi docs" in context and "Release 2.4" not in context
    lesson = next(
        x
        for x in cli("lesson", "list", "--all", "--json").json()
        if x["content"].startswith("Document every limit")
    )
    sliding = next(
        x["id"]
        for x in cli("lesson", "list", "--all", "--json").json()
        if x["content"].startswith("Rate limit with a sliding")
    )
    outgoing = cli("--json", "links", lesson["id"]).json()["outgoing"]
    assert [(x["kind"], x["to"]) for x in outgoing] == [("extends", sliding)]
    # The same file again: its records clash; skipping them leaves one link each.
    again = cli("import", str(path), now=T_NOW)
    assert again.code != 0 and "already exist" in again.err
    assert cli("import", str(path), "--on-conflict", "skip", now=T_NOW).code == 0
    assert len(cli("--json", "action", "list").json()) == 3
    assert len(cli("--json", "links", docs["id"]).json()["outgoing"]) == 1


def test_an_agents_import_of_actions_is_refused_while_review_is_on(
    cli, db: Path, tmp_path: Path
) -> None:  # noqa: ANN001
    assert cli("config", "set", "review", "on").code == 0
    data = _export()
    data["memories"] = []
    data["relations"] = []
    path = _write(tmp_path, data)
    before = folder_digest(db)
    done = cli("import", str(path), now=T_NOW)
    assert done.code == 2 and "review is on" in done.err and "--curator-key" in done.err
    assert "actions" in done.err
    assert folder_digest(db) == before
    done = cli(*curator_args(), "import", str(path), "--json", now=T_NOW)
    assert done.code == 0, done.err
    assert done.json()["added"]["actions"] == 3
