"""The archive of inactive rules: chunks in arrival order, the index of their texts,
and the move from the hash buckets of schema 1.

Described in core/domain/rule_archive.py and docs/MEMORY.md, Rules.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memwork.core.domain import rule_archive, rules
from memwork.core.services import checkpoints
from memwork.core.services.interop import export, importer, memwork_format
from memwork.core.storage import schema
from memwork.core.storage.manifest import MANIFEST_NAME, Manifest
from memwork.core.storage.store import Store
from memwork.core.storage.tables import rule_scope_slug

ACTOR = "test"


def _forget_caches() -> None:
    """What a new process knows of the archive: nothing but the store's files."""
    rule_archive._SCOPES.clear()
    rule_archive._CHUNKS.clear()


def _propose(store: Store, scope: str, text: str, now: datetime) -> tuple[str, str]:
    """What recording does with one rule text: upsert it, then keep the window."""
    doc, outcome = rules.upsert(store, text, scope, polarity="works", source="derived", now=now)
    rules.enforce_window(store, scope, now)
    if doc is None:
        doc = next(r for r in rules.in_scope(store, scope) if r["text"] == text)
    return outcome, doc["id"]


def _state(store: Store, scope: str) -> tuple[list[str], dict[str, str]]:
    """(active texts, oldest first), {archived text: id}."""
    with store.reading():
        active = [r["text"] for r in rules.in_scope(store, scope)]
        archived = {
            r["text"]: r["id"]
            for r in rules.in_scope(store, scope, active_only=False)
            if not r["active"]
        }
    return active, archived


def _index_matches_chunks(store: Store, scope: str) -> None:
    """Each full chunk but the newest is sealed: its index document lists one digest per
    rule it holds; the newest has none (it is read whole)."""
    with store.reading():
        tables = rule_archive.tables(store, scope)
        for table in tables:
            number = rule_archive.chunk_number(table)
            group = rule_archive.index_table(scope, (number - 1) // rule_archive.GROUP + 1)
            doc = store.docs(group).get(f"{number:06d}")
            if table == tables[-1] and len(store.docs(table)) < rule_archive.CHUNK:
                assert doc is None, table
                continue
            width = rule_archive.WIDTH
            run = doc["digests"]
            listed = sorted(run[i : i + width] for i in range(0, len(run), width))
            held = sorted(rule_archive.digest(r["text"]) for r in store.docs(table).values())
            assert listed == held, table


# -- behaviour: the window and reactivation, whatever the chunks -----------------------------
@pytest.mark.slow
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("propose"), st.integers(0, 13)),
            st.tuples(st.just("new process"), st.just(0)),
            st.tuples(st.just("failed batch"), st.integers(0, 13)),
        ),
        max_size=80,
    )
)
def test_an_active_rule_is_not_added_again_and_an_archived_one_returns_as_the_newest(
    steps: list[tuple[str, int]], now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compared with the rule itself, step by step: tiny chunks and one-character digests
    (so texts collide) must change nothing a user sees."""
    monkeypatch.setattr(rule_archive, "CHUNK", 3)
    monkeypatch.setattr(rule_archive, "WIDTH", 1)
    _forget_caches()
    store = Store.in_memory()
    scope, limit = "task:t", rules.ACTIVE_PER_TASK
    active: list[str] = []  # the model: oldest first
    archived: set[str] = set()
    first_id: dict[str, str] = {}
    for op, n in steps:
        text = f"[WORKS] step {n}"
        if op == "new process":
            _forget_caches()
            continue
        if op == "failed batch":
            with pytest.raises(RuntimeError), store.transaction():
                _propose(store, scope, text, now)
                raise RuntimeError("the batch failed half-way")
            continue
        with store.transaction():
            outcome, rule_id = _propose(store, scope, text, now)
        if text in active:
            assert outcome == "unchanged"
        elif text in archived:
            assert outcome == "reactivated"
            archived.discard(text)
            active.append(text)
        else:
            assert outcome == "added"
            active.append(text)
            first_id[text] = rule_id
        assert rule_id == first_id[text]  # a returning rule keeps its id
        while len(active) > limit:
            archived.add(active.pop(0))
        assert _state(store, scope) == (active, {t: first_id[t] for t in archived})
    _index_matches_chunks(store, scope)


def test_a_manual_switch_moves_a_rule_between_the_window_and_the_archive(
    store: Store, now: datetime
) -> None:
    for n in range(25):
        rules.add_rule(store, f"rule {n}", now=now, actor=ACTOR)
    active, archived = _state(store, "global")
    assert len(active) == rules.ACTIVE_GLOBAL and set(archived) == {f"rule {n}" for n in range(5)}
    rules.set_active(store, archived["rule 2"], True, now=now, actor=ACTOR)
    rules.set_active(store, archived["rule 0"], False, now=now, actor=ACTOR)  # already off
    active, archived = _state(store, "global")
    assert active[-1] == "rule 2" and "rule 5" in archived and "rule 2" not in archived
    _forget_caches()
    doc, outcome = rules.add_rule(store, "rule 0", now=now, actor=ACTOR)
    assert outcome == "reactivated"
    _index_matches_chunks(store, "global")


def test_a_digest_found_across_two_others_is_not_taken_for_one(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Digests sit end to end in a chunk's index: removing one must find it at its own
    place, not where the end of one digest and the start of the next spell it."""
    monkeypatch.setattr(rule_archive, "WIDTH", 2)
    monkeypatch.setattr(rule_archive, "CHUNK", 3)  # the three fill a chunk: it is sealed
    _forget_caches()
    texts = [f"[WORKS] step {n}" for n in range(400)]
    digests = {rule_archive.digest(t): t for t in texts}
    first, second, third = next(
        (a, b, digests[da[1] + db[0]])
        for da, a in digests.items()
        for db, b in digests.items()
        if a != b and da[1] + db[0] in digests and digests[da[1] + db[0]] not in (a, b)
    )
    fillers = [f"[WORKS] filler {n}" for n in range(rules.ACTIVE_PER_TASK)]
    with store.transaction():
        for text in (first, second, third, *fillers):  # the three leave the window in order
            _propose(store, "task:t", text, now)
        assert _propose(store, "task:t", third, now)[0] == "reactivated"
    _index_matches_chunks(store, "task:t")
    _forget_caches()
    with store.transaction():
        assert _propose(store, "task:t", first, now)[0] == "reactivated"
        assert _propose(store, "task:t", second, now)[0] == "reactivated"


def test_two_texts_with_one_digest_in_one_chunk_are_both_found(
    store: Store, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule_archive, "WIDTH", 1)
    monkeypatch.setattr(rule_archive, "CHUNK", 2)  # the two fill a chunk: it is sealed
    _forget_caches()
    texts = [f"[WORKS] step {n}" for n in range(40)]
    first = texts[0]
    second = next(t for t in texts[1:] if rule_archive.digest(t) == rule_archive.digest(first))
    fillers = [f"[WORKS] filler {n}" for n in range(rules.ACTIVE_PER_TASK)]
    with store.transaction():
        for text in (first, second, *fillers):
            _propose(store, "task:t", text, now)
    with store.transaction():
        assert _propose(store, "task:t", first, now)[0] == "reactivated"
        assert _propose(store, "task:t", second, now)[0] == "reactivated"


def test_a_failed_batch_leaves_the_archive_as_it_was(store: Store, now: datetime) -> None:
    for n in range(25):
        rules.add_rule(store, f"rule {n}", now=now, actor=ACTOR)
    before = _everything(store)
    with pytest.raises(RuntimeError), store.transaction():
        for n in range(5):  # all five come back, pushing five others out
            assert _propose(store, "global", f"rule {n}", now)[0] == "reactivated"
        raise RuntimeError("the batch failed half-way")
    assert _everything(store) == before
    with store.transaction():
        for n in range(5):
            assert _propose(store, "global", f"rule {n}", now)[0] == "reactivated"
    _index_matches_chunks(store, "global")


CHILD = """
import sys
from datetime import UTC, datetime
from memwork.core.domain import rule_archive, rules
from memwork.core.storage.store import Store
rule_archive.CHUNK, rule_archive.GROUP = 2, 1
now = datetime(2026, 11, 1, tzinfo=UTC)
with Store(sys.argv[1]).transaction() as store:
    for n in range(30, 36):
        rules.upsert(store, f"rule {n}", "global", polarity="note", source="manual", now=now)
        rules.enforce_window(store, "global", now)
"""


def test_rules_another_process_archived_are_found(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This process knows the archive's index; another one adds chunks (and index tables)."""
    import subprocess
    import sys

    from tests.conftest import python_env

    monkeypatch.setattr(rule_archive, "CHUNK", 2)
    monkeypatch.setattr(rule_archive, "GROUP", 1)
    store = Store(tmp_path / "s")
    for n in range(30):
        rules.add_rule(store, f"rule {n}", now=now, actor=ACTOR)
    with store.reading():  # rules 0-9 fill chunks 1-5, each with an index table of its own
        assert rule_archive.copies(store, "global", "rule 3")
    subprocess.run(
        [sys.executable, "-c", CHILD, str(store.path)], check=True, env=python_env(), timeout=60
    )
    # Rules 10-15 left the window in the other process, into chunks 6-8: new index tables.
    assert rules.add_rule(store, "rule 14", now=now, actor=ACTOR)[1] == "reactivated"
    assert len(_everything(store)) == 36


# -- cost: a batch writes the newest chunk, a lookup reads what the index points at ----------
def _versions(folder: Path) -> dict[str, int]:
    """Every table's version as the store has it now (its log included)."""
    store = Store(folder)
    with store.reading():
        return {n: v for n in store.table_names() if (v := store.table_version(n)) is not None}


def test_recording_rewrites_only_the_newest_archive_chunk(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule_archive, "CHUNK", 10)
    monkeypatch.setattr(rule_archive, "GROUP", 4)
    store = Store(tmp_path / "s")
    with store.transaction():
        for n in range(300):
            _propose(store, "global", f"[HIGH SCORE 0.90] summary {n}", now)
    before = _versions(store.path)
    chunks = [t for t in before if t.startswith("rules.archive.")]
    assert len(chunks) == 28  # 280 archived rules, 10 a chunk
    with store.transaction():
        for n in range(300, 305):
            _propose(store, "global", f"[HIGH SCORE 0.90] summary {n}", now)
    after = _versions(store.path)
    changed = sorted(t for t in after if after[t] != before.get(t) and "rule" in t)
    assert changed == ["rules.archive.000029.global", "rules.global"]
    with store.transaction():  # the 10th rule fills chunk 29: it is sealed, its index written
        for n in range(305, 310):
            _propose(store, "global", f"[HIGH SCORE 0.90] summary {n}", now)
    latest = _versions(store.path)
    changed = sorted(t for t in latest if latest[t] != after.get(t) and "rule" in t)
    assert changed == ["rule_index.0008.global", "rules.archive.000029.global", "rules.global"]


def test_a_new_process_finds_an_archived_rule_reading_only_its_chunk(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule_archive, "CHUNK", 10)
    folder = tmp_path / "s"
    with Store(folder).transaction() as store:
        for n in range(100):
            _propose(store, "global", f"[WORKS] summary {n}", now)
    _forget_caches()
    store = Store(folder)
    with store.transaction():
        outcome, _ = _propose(store, "global", "[WORKS] summary 35", now)  # in chunk 4
        assert outcome == "reactivated"
        assert _propose(store, "global", "[WORKS] never seen", now)[0] == "added"
        loaded = [t for t in store.table_names("rules.archive") if store.is_loaded(t)]
    # The chunk that held the rule, and a new one (chunk 8 is full) for the window's overflow.
    assert loaded == ["rules.archive.000004.global", "rules.archive.000009.global"]


def test_two_stores_in_one_process_keep_their_own_archive_index(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Alternating stores (a benchmark's sizes, an agent's store and a copy) used to
    # rebuild the scope's whole digest index on every switch: 0.1 s a batch at 1M.
    monkeypatch.setattr(rule_archive, "CHUNK", 5)
    _forget_caches()
    built: list[str] = []
    real_init = rule_archive._ScopeIndex.__init__

    def counting_init(self, store: Store, scope: str) -> None:  # noqa: ANN001
        built.append(str(store.path))
        real_init(self, store, scope)

    monkeypatch.setattr(rule_archive._ScopeIndex, "__init__", counting_init)
    one, two = Store(tmp_path / "one"), Store(tmp_path / "two")
    for round_ in range(4):
        for store, name in ((one, "one"), (two, "two")):
            with store.transaction():
                for n in range(30):
                    _propose(store, "global", f"[WORKS] {name} {round_} {n}", now)
    assert sorted(built) == [str(one.path), str(two.path)]  # once each, not once a batch
    with one.transaction():  # and each finds its own archived rules, not the other's
        assert _propose(one, "global", "[WORKS] one 0 3", now)[0] == "reactivated"
        assert _propose(one, "global", "[WORKS] two 0 3", now)[0] == "added"


# -- schema 1: hash buckets -------------------------------------------------------------------
def _legacy_bucket(scope: str, text: str) -> str:
    """Where schema 1 kept an inactive rule: one of 16 buckets by the text's hash."""
    bucket = hashlib.sha1(text.encode("utf-8")).hexdigest()[0]
    return f"rules.archive.{bucket}.{rule_scope_slug(scope)}"


def _to_schema_1(store: Store) -> None:
    """Lay the archive out as schema 1 did (same records, hash-bucket tables, no index)."""
    with store.transaction():
        moved = [r for n in store.table_names("rules.archive") for r in store.docs(n).values()]
        for name in store.table_names():
            if name.startswith(("rules.archive.", "rule_index.")):
                store.drop(name)
        for rule in moved:
            store.put(_legacy_bucket(rule["scope"], rule["text"]), rule["id"], rule)


def _mark_schema_1(folder: Path) -> None:
    Store(folder).fold_log()
    manifest = Manifest.read(folder / MANIFEST_NAME)
    manifest.schema_version = 1
    (folder / MANIFEST_NAME).write_bytes(manifest.to_bytes())


def _everything(store: Store) -> list[dict]:
    with store.reading():
        return sorted(rules.all_rules(store), key=lambda r: r["id"])


def _schema_1_store(folder: Path, now: datetime) -> list[dict]:
    """A store whose rules went through history, laid out as schema 1; its rules."""
    store = Store(folder)
    with store.transaction():
        for n in range(60):
            _propose(store, "global", f"[HIGH SCORE 0.91] summary {n}", now)
            _propose(store, "task:deploy", f"[AVOID] mistake {n % 15}", now)
    _to_schema_1(store)
    return _everything(store)


def test_a_schema_1_store_moves_its_archive_into_chunks_after_a_backup(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule_archive, "CHUNK", 16)  # 40 archived global rules: 2 chunks sealed
    folder = tmp_path / "s"
    before = _schema_1_store(folder, now)
    assert any(
        n.startswith("rules.archive.") and len(n.split(".")[2]) == 1 for n in _versions(folder)
    )
    _mark_schema_1(folder)
    _forget_caches()
    store = Store(folder)
    [backup] = tmp_path.glob("s.backup-v1-*")
    assert (backup / f"{_legacy_bucket('global', '[HIGH SCORE 0.91] summary 0')}.json").exists()
    assert Manifest.read(folder / MANIFEST_NAME).schema_version == schema.SCHEMA_VERSION
    names = set(_versions(folder))
    assert not [n for n in names if rule_archive.is_legacy(n)]
    assert {"rules.archive.000003.global", "rule_index.0001.global"} <= names
    assert _everything(store) == before  # every rule, field for field
    _index_matches_chunks(store, "global")
    _index_matches_chunks(store, "task:deploy")
    # Migrated once: opening the store again neither backs it up nor rewrites a file.
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".lock"}
    _forget_caches()
    store = Store(folder)
    assert _everything(store) == before
    assert len(list(tmp_path.glob("s.backup-v1-*"))) == 1
    assert {
        p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != ".lock"
    } == files
    with store.transaction():
        assert _propose(store, "global", "[HIGH SCORE 0.91] summary 3", now)[0] == "reactivated"
        assert _propose(store, "task:deploy", "[AVOID] mistake 0", now)[0] == "reactivated"
    ids_by_text = {r["text"]: r["id"] for r in before}
    active, _ = _state(store, "global")
    assert active[-1] == "[HIGH SCORE 0.91] summary 3"
    assert len(_everything(store)) == len(before)
    assert {r["text"]: r["id"] for r in _everything(store)} == ids_by_text


def test_a_schema_1_redis_store_moves_its_archive_once(
    redis_url: str, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.redis_server import client_for

    monkeypatch.setattr(rule_archive, "CHUNK", 16)
    store = Store(redis_url)
    with store.transaction():
        for n in range(60):
            _propose(store, "global", f"[HIGH SCORE 0.91] summary {n}", now)
    _to_schema_1(store)
    before = _everything(store)
    store.close()
    client = client_for(redis_url)
    client.hset("memwork:meta", "schema_version", 1)
    _forget_caches()
    store = Store(redis_url)
    assert client.hget("memwork:meta", "schema_version") == str(schema.SCHEMA_VERSION).encode()
    with store.reading():
        names = store.table_names()
    assert not [n for n in names if rule_archive.is_legacy(n)]
    assert "rule_index.0001.global" in names
    assert _everything(store) == before
    _index_matches_chunks(store, "global")
    backups = set(client.keys("memwork:backup:v1-*"))
    assert backups
    store.close()
    _forget_caches()
    store = Store(redis_url)  # migrated once: no second backup
    assert set(client.keys("memwork:backup:v1-*")) == backups
    with store.transaction():
        assert _propose(store, "global", "[HIGH SCORE 0.91] summary 3", now)[0] == "reactivated"
    assert _everything(store) != before
    store.close()


def test_a_checkpoint_taken_before_the_move_restores_into_chunks(
    tmp_path: Path, now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rule_archive, "CHUNK", 16)
    folder = tmp_path / "s"
    before = _schema_1_store(folder, now)
    store = Store(folder)
    old = checkpoints.create(store, "schema 1", now=now, actor=ACTOR)
    _mark_schema_1(folder)
    store = Store(folder)  # migrated; the checkpoint's files still hold hash buckets
    with store.transaction():
        _propose(store, "global", "[HIGH SCORE 0.91] after the move", now)
    checkpoints.restore(store, old["id"], now=now, actor=ACTOR)
    _forget_caches()
    store = Store(folder)
    assert not [n for n in _versions(folder) if rule_archive.is_legacy(n)]
    assert _everything(store) == before
    _index_matches_chunks(store, "global")
    with store.transaction():
        assert _propose(store, "global", "[HIGH SCORE 0.91] summary 1", now)[0] == "reactivated"


# -- export and import ------------------------------------------------------------------------
def test_an_export_leaves_the_index_out_and_an_import_rebuilds_it(
    tmp_path: Path, now: datetime
) -> None:
    source = Store(tmp_path / "a")
    with source.transaction():
        for n in range(40):
            _propose(source, "global", f"[WORKS] summary {n}", now)
    document = export.export_store(source, now=now)
    assert "rule_index" not in document["tables"]
    target = Store(tmp_path / "b")
    importer.apply_bundle(
        target,
        memwork_format.parse(document, now=now),
        on_conflict=None,
        now=now,
        actor=ACTOR,
        source="x",
    )
    assert _everything(target) == _everything(source)
    _forget_caches()
    _index_matches_chunks(target, "global")
    with target.transaction():
        assert _propose(target, "global", "[WORKS] summary 2", now)[0] == "reactivated"
