"""Bulk writes in bounded memory: a transaction's changed tables past a threshold are
staged beside their targets and switched in by the commit (core/storage/cache.py,
core/storage/folder_backend.py), input and output are spooled (core/base/spool.py), and it
all still lands whole or not at all."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memwork.core.base import ids
from memwork.core.base.spool import Spool
from memwork.core.domain import episodes
from memwork.core.doors.cli.output import emit_json, emit_json_items
from memwork.core.ledger import audit
from memwork.core.storage.folder_backend import FolderBackend
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest, python_env


def _episodes(n: int) -> list[dict]:
    return [
        {
            "task_id": f"task-{k % 4}",
            "score": (k % 10) / 10,
            "summary": f"attempt {k}",
            "mistakes": [f"mistake {k % 7}"],
            "successes": [f"success {k % 5}"],
        }
        for k in range(n)
    ]


@pytest.fixture
def small_memory(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stage past 300 documents and spool past 2 KB; the names of the tables staged."""
    monkeypatch.setenv("MEMWORK_STAGE_DOCUMENTS", "300")
    monkeypatch.setenv("MEMWORK_SPOOL_BYTES", "2000")
    staged: list[str] = []
    real = FolderBackend.stage

    def counted(self: FolderBackend, name: str, docs: dict) -> object | None:
        staged.append(name)
        return real(self, name, docs)

    monkeypatch.setattr(FolderBackend, "stage", counted)
    return staged


#: The limit the bulk records below run under. It sits above what recording one episode
#: touches (an episode shard of 500, an audit shard of 1000, the small aggregates), so
#: the shards a record has filled are staged and stay staged, as a record bigger than
#: memory runs for real; a limit below that (300) restaged the shard in use on every
#: episode and made each test quadratic in its size without proving more (a table
#: staged and then written again has its own test below). 2600 episodes still write
#: more than three times the limit, and every filled shard is staged.
BULK_STAGE = "1600"


def _export(folder: Path) -> dict:
    from memwork.core.services.interop.export import export_store

    store = Store(folder)
    with store.reading():
        return export_store(store, now=NOW)


@pytest.mark.slow
def test_a_bulk_record_bigger_than_memory_lands_whole_and_as_it_would_in_memory(
    tmp_path: Path, small_memory: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_STAGE_DOCUMENTS", BULK_STAGE)
    items = _episodes(2600)
    ids.seed(7)
    recorded = episodes.record_episodes(Store(tmp_path / "staged"), items, now=NOW, actor="t")
    shards = {name for name in small_memory if name.startswith(("episodes.", "audit."))}
    assert {"episodes.000001", "episodes.000005", "audit.000001"} <= shards, shards
    assert len(recorded) == 2600 and [d["index"] for d in recorded] == list(range(1, 2601))
    monkeypatch.setenv("MEMWORK_STAGE_DOCUMENTS", "10000000")
    ids.seed(7)
    episodes.record_episodes(Store(tmp_path / "in-memory"), items, now=NOW, actor="t")
    assert _export(tmp_path / "staged") == _export(tmp_path / "in-memory")
    assert not [p for p in (tmp_path / "staged").iterdir() if ".tmp-" in p.name]
    store = Store(tmp_path / "staged")
    with store.reading():
        assert len(list(episodes.iter_all(store))) == 2600


@pytest.mark.slow
def test_a_bulk_record_that_fails_after_staging_leaves_the_store_as_it_was(
    tmp_path: Path, small_memory: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_STAGE_DOCUMENTS", BULK_STAGE)
    folder = tmp_path / "s"
    store = Store(folder)
    episodes.record_episodes(store, _episodes(10), now=NOW, actor="t")
    store.fold_log()
    before = folder_digest(folder)
    real_record = audit.record
    calls = {"n": 0}

    def fails_late(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 2000:
            raise RuntimeError("the machine ran out of something")
        return real_record(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(audit, "record", fails_late)
    with pytest.raises(RuntimeError, match="ran out"):
        episodes.record_episodes(store, _episodes(2600), now=NOW, actor="t")
    assert [name for name in small_memory if name.startswith("episodes.")]
    assert folder_digest(folder) == before  # no staged file left, nothing switched in
    with store.reading():
        assert len(list(episodes.iter_all(store))) == 10


def test_a_staged_table_written_again_comes_back_whole(
    tmp_path: Path, small_memory: list[str]
) -> None:
    store = Store(tmp_path / "s")
    with store.transaction():
        store.put_many("big", {f"b{n:04d}": {"id": f"b{n:04d}"} for n in range(400)})
        for n in range(400):  # enough other writes to stage "big"
            store.put(f"other.{n % 3}", f"o{n}", {"id": f"o{n}"})
        assert "big" in small_memory
        store.put("big", "late", {"id": "late"})  # back from where it was staged
        store.delete("big", ["b0000"])
        assert len(store.docs("big")) == 400
    with Store(tmp_path / "s").reading() as other:
        assert len(other.docs("big")) == 400 and "late" in other.docs("big")


def test_a_table_dropped_written_again_and_staged_is_committed_not_dropped(
    tmp_path: Path, small_memory: list[str]
) -> None:
    # A restore drops every table and writes the checkpoint's back: past the threshold
    # the tables written first are staged, and the commit must switch those in, not
    # count them among the drops (a 100k-record restore lost 384 sessions that way).
    folder = tmp_path / "s"
    store = Store(folder)
    with store.transaction():
        for t in range(4):
            store.put_many(f"kept.{t}", {f"k{t}-{n}": {"n": n} for n in range(120)})
    with store.transaction():
        for t in range(4):
            store.drop(f"kept.{t}")
        for t in range(4):
            store.put_many(f"kept.{t}", {f"k{t}-{n}": {"n": n, "again": True} for n in range(120)})
        assert "kept.0" in small_memory  # written first, staged by the later writes
    for reader in (store, Store(folder)):
        with reader.reading():
            assert reader.table_names() == [f"kept.{t}" for t in range(4)]
            for t in range(4):
                docs = reader.docs(f"kept.{t}")
                assert len(docs) == 120 and all(d["again"] for d in docs.values())


# The child stages at BULK_STAGE too, and waits until four staged tables are on disk.
KILLED_CHILD = """
import os, sys
os.environ["MEMWORK_STAGE_DOCUMENTS"] = "1600"
from datetime import UTC, datetime
from memwork.core.domain import episodes
from memwork.core.storage.store import Store
from memwork.core.storage.folder_backend import FolderBackend
real = FolderBackend.stage
def stage(self, name, docs):
    handle = real(self, name, docs)
    if len([p for p in os.listdir(self.path) if ".tmp-stage" in p]) >= 4:
        print("staged", flush=True)
        import time; time.sleep(60)
    return handle
FolderBackend.stage = stage
items = [{"task_id": "t", "score": 0.5, "summary": f"s{n}"} for n in range(5000)]
episodes.record_episodes(Store(sys.argv[1]), items, now=datetime.now(UTC), actor="t")
"""


@pytest.mark.slow
def test_a_bulk_record_killed_after_staging_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    store = Store(folder)
    episodes.record_episodes(store, _episodes(3), now=NOW, actor="t")
    store.close()
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, str(folder)],
        stdout=subprocess.PIPE,
        env=python_env(),
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == b"staged"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert [p for p in folder.iterdir() if ".tmp-stage" in p.name]
    store = Store(folder)  # the next open removes what a killed commit staged
    assert not [p for p in folder.iterdir() if ".tmp-" in p.name]
    with store.reading():
        assert len(list(episodes.iter_all(store))) == 3


def test_the_cli_prints_a_bulk_record_as_it_prints_a_small_one(
    cli,  # noqa: ANN001
    db: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_SPOOL_BYTES", "500")  # input and output go through files
    source = tmp_path / "episodes.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in _episodes(40)))
    done = cli("record-episode", str(source), "--json")
    assert done.code == 0, done.err
    printed = done.json()
    assert [d["summary"] for d in printed] == [f"attempt {k}" for k in range(40)]
    ids_only = cli("record-episode", str(source))
    assert len(ids_only.out.split()) == 40


@pytest.mark.parametrize(
    "value",
    [[], [{}], [{"a": [1, {"b": "x\ny"}], "c": None}, {"d": 2.5e-6}], [[1, 2], "s", 3, None]],
)
def test_json_printed_item_by_item_is_the_json_of_the_list(
    value: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    def printed(write: object) -> bytes:
        buffer = io.BytesIO()
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer, encoding="utf-8"))
        write()  # type: ignore[operator]
        sys.stdout.flush()
        return buffer.getvalue()

    assert printed(lambda: emit_json_items(iter(value))) == printed(lambda: emit_json(value))


def test_a_spool_reads_back_what_it_was_given_from_memory_or_a_file() -> None:
    items = [os.urandom(n % 700) for n in range(3000)] + [b"x" * (3 << 20), b""]
    for limit in (0, 5000, 10**9):
        spool = Spool(limit)
        for item in items:
            spool.append(item)
        assert spool.on_disk == (limit < 10**9)
        assert list(spool) == items and list(spool) == items  # read twice
        spool.append(b"one more")
        assert len(spool) == len(items) + 1 and list(spool)[-1] == b"one more"
        spool.close()
