"""A schema-2 store (tests/data/schema2: made before links) opens with today's code,
on a folder and on Redis: its relation fields become links, once, and every door reads
the same relations as before (superseded lessons, merged cards, a rule's episodes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from memwork.core.ledger import links
from memwork.core.storage import schema
from memwork.core.storage.store import Store
from tests.redis_server import client_for

BOTH_BACKENDS = True

DATA = Path(__file__).resolve().parents[2] / "data" / "schema2"
FIELDS = ("superseded_by", "supersedes", "merged_from", "episode_ids")


def _fixture_docs(db: Path | str, table: str) -> dict[str, dict[str, Any]]:
    """A table of the schema-2 fixture, as it was written (the folder's file, or the
    Redis hash: the two stores were made apart, so their ids differ)."""
    if isinstance(db, Path):
        docs: dict[str, dict[str, Any]] = json.loads(
            (DATA / "folder" / f"{table}.json").read_text()
        )["documents"]
        return docs
    raw = json.loads((DATA / "redis.json").read_text())[f"memwork:t:{table}"]["hash"]
    return {k: json.loads(v) for k, v in raw.items()}


def _install(db: Path | str) -> None:
    """Put the schema-2 store where ``db`` points: copy the folder, or load the keys."""
    if isinstance(db, Path):
        shutil.copytree(DATA / "folder", db)
        return
    client = client_for(db)
    for key, value in json.loads((DATA / "redis.json").read_text()).items():
        if "hash" in value:
            client.hset(key, mapping=value["hash"])
        else:
            client.sadd(key, *value["set"])


def _version(db: Path | str) -> int:
    if isinstance(db, Path):
        return int(json.loads((db / "store.json").read_text())["schema_version"])
    return int(client_for(db).hget("memwork:meta", "schema_version"))


def test_relation_fields_become_links_once(cli: Any, db: Path | str) -> None:
    _install(db)
    old_lessons = _fixture_docs(db, "lessons")
    old_cards = _fixture_docs(db, "mistake_cards")
    old_rules = _fixture_docs(db, "rules.task.deploy-api")
    superseded = {d["id"]: d["superseded_by"] for d in old_lessons.values() if d["superseded_by"]}
    merged = {d["id"]: d["merged_from"] for d in old_cards.values() if d.get("merged_from")}
    assert superseded and merged  # the fixture holds what is migrated

    # Read through the CLI: the relations are the same as the fields said.
    listed = cli("--json", "lesson", "list", "--all")
    assert listed.code == 0, listed.err
    by_id = {x["id"]: x for x in listed.json()}
    for old, new in superseded.items():
        assert by_id[old]["superseded_by"] == new
    supersedes = {d["id"]: d["supersedes"] for d in old_lessons.values() if d["supersedes"]}
    for new, old in supersedes.items():
        assert by_id[new]["supersedes"] == old
    cards = {c["id"]: c for c in cli("--json", "card", "list").json()}
    for card, absorbed in merged.items():
        assert sorted(cards[card]["merged_from"]) == sorted(absorbed)
        # A link per episode (the old list could name one twice: two merged sightings).
        assert sorted(cards[card]["episode_ids"]) == sorted(set(old_cards[card]["episode_ids"]))
    for absorbed_id in (a for group in merged.values() for a in group):
        found = cli("--json", "links", absorbed_id).json()
        assert [x["kind"] for x in found["outgoing"]] == ["merged_into"]

    assert _version(db) == schema.SCHEMA_VERSION == 4
    if isinstance(db, Path):  # documents changed: the folder was copied aside first
        assert len(list(db.parent.glob(f"{db.name}.backup-v2-*"))) == 1
    store = Store(db)
    with store.reading():
        for table in store.table_names():
            if table.split(".")[0] in ("lessons", "mistake_cards", "rules"):
                for doc in store.docs(table).values():
                    assert not set(FIELDS) & set(doc), (table, doc["id"])
        every = list(links.every_link(store))
    derived = sorted(x["to"] for x in every if x["kind"] == links.DERIVED_FROM)
    assert sorted(e for d in old_rules.values() for e in d.get("episode_ids", [])) == [
        e for e in derived if e in {e for d in old_rules.values() for e in d["episode_ids"]}
    ]
    # Once: opening again changes nothing.
    before = sorted(x["id"] for x in every)
    with Store(db).reading() as again:
        assert sorted(x["id"] for x in links.every_link(again)) == before

    # A checkpoint taken before links restores with its relations as links too.
    [checkpoint] = cli("--json", "checkpoint", "list").json()
    restored = cli("checkpoint", "restore", checkpoint["id"])
    assert restored.code == 0, restored.err
    relisted = {x["id"]: x for x in cli("--json", "lesson", "list", "--all").json()}
    for old, new in superseded.items():
        assert relisted[old]["superseded_by"] == new
    assert cli("--json", "lint").code == 0
    dangling = [f for f in cli("--json", "lint").json() if f["kind"] == "dangling_link"]
    assert dangling == []
