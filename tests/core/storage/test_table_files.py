"""Table files: a fold (of the log, or of a commit too big for it) keeps unchanged
documents' bytes, and the file reads exactly as a full encoding would; recording one
episode never imports orjson.

Described in core/storage/codec.py and core/storage/folder_backend.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memwork.core.storage import codec
from memwork.core.storage.manifest import table_file
from memwork.core.storage.store import Store
from tests.conftest import python_env


@pytest.fixture(autouse=True)
def _no_safety_net(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests compare the files themselves."""
    monkeypatch.delenv("MEMWORK_VERIFY_WRITES", raising=False)


@pytest.fixture
def folder_store(tmp_path: Path) -> Store:
    """A folder store: the one backend with table files."""
    return Store(tmp_path / "store")


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every commit goes to the table files at once (a log of no room): the commit's own
    documents are what the file is spliced from."""
    monkeypatch.setenv("MEMWORK_LOG_BYTES", "0")


def _committed(store: Store, name: str) -> bytes:
    return (store.path / table_file(name)).read_bytes()


def _assert_canonical(store: Store) -> None:
    """Once the log is folded, every table file holds the store's documents, byte for byte
    as encoding them whole gives."""
    store.fold_log()
    with store.reading():
        for name in store.table_names():
            raw = _committed(store, name)
            assert json.loads(raw)["documents"] == store.docs(name), name
            assert raw == codec.dumps(json.loads(raw)), name


def _doc(n: int, **extra: object) -> dict:
    return {"id": f"d{n:03d}", "n": n, "score": n / 7, "tiny": n * 1e-7, "text": f"é{n}", **extra}


def _edit_then_put(store: Store, doc_id: str) -> None:
    doc = store.docs("t")[doc_id]
    doc["edited"] = True  # documents are read-only; a put still makes it count
    store.put("t", doc_id, doc)


@pytest.mark.parametrize("fold", ["every commit at once", "after each commit", "at the end"])
def test_files_read_as_a_full_encoding_after_any_mix_of_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fold: str
) -> None:
    if fold == "every commit at once":
        monkeypatch.setenv("MEMWORK_LOG_BYTES", "0")
    store = Store(tmp_path / "store")
    with store.transaction():
        store.put_many("t", {d["id"]: d for d in (_doc(n) for n in range(200))})
        store.put("u", "x", {"id": "x", "nested": {"b": [1, 2.5e-6, None], "a": {}}})
    steps = [
        lambda: store.put("t", "d005", _doc(5, changed=True)),  # one document replaced
        lambda: store.delete("t", ["d000", "d199", "d100"]),  # first, last, middle
        lambda: store.put("t", "d000", _doc(0)),  # back, as it was
        lambda: store.put("t", "a-first", {"id": "a-first", "text": 'quote " \\ \n'}),
        lambda: store.put("t", "zzz", {"id": "zzz", "big": 2**60, "neg": -0.0}),
        lambda: store.put("t", "d050", dict(store.docs("t")["d050"])),  # same content
        lambda: _edit_then_put(store, "d060"),  # the very object, changed, then put
        lambda: store.table("t").update({"via": "tinydb"}, doc_ids=["d070"]),  # edits in place
        lambda: store.drop("u"),  # dropped, then written again below
        lambda: store.put_many("t", {d["id"]: d for d in (_doc(n, v=2) for n in range(150))}),
        lambda: store.delete("t", list(store.docs("t"))),  # empty
        lambda: store.put("t", "d001", _doc(1)),
    ]
    for step in steps:
        with store.transaction():
            step()
            store.put("u", "x", {"id": "x", "nested": {"b": [3], "a": {}}})
        if fold != "at the end":
            _assert_canonical(store)
    _assert_canonical(store)
    _assert_canonical(Store(tmp_path / "store"))  # and as another process reads them


def test_a_file_laid_out_differently_is_rewritten_whole(tmp_path: Path, direct: None) -> None:
    store = Store(tmp_path / "s")
    with store.transaction():
        store.put_many("t", {d["id"]: d for d in (_doc(n) for n in range(5))})
    path = store.path / table_file("t")
    # The same documents and version, written by hand without indentation.
    path.write_bytes(json.dumps(json.loads(path.read_bytes())).encode())
    with store.transaction():
        store.put("t", "d002", _doc(2, changed=True))
    _assert_canonical(store)
    with store.reading():
        assert store.docs("t")["d002"]["changed"] is True


@pytest.mark.parametrize(
    "edit",
    [
        lambda docs: {**docs, "d999": {"id": "d999"}},  # one more entry
        lambda docs: {("e" + k[1:] if k == "d001" else k): v for k, v in docs.items()},  # renamed
    ],
    ids=["an entry added", "an entry renamed"],
)
def test_a_file_that_no_longer_matches_its_documents_is_rewritten_whole(
    tmp_path: Path, edit: object, direct: None
) -> None:
    """Edited by hand in memwork's own layout, version and all: the commit does not splice
    bytes into a file whose entries are not the documents it read."""
    store = Store(tmp_path / "s")
    with store.transaction():
        store.put_many("t", {d["id"]: d for d in (_doc(n) for n in range(5))})
    path = store.path / table_file("t")
    data = json.loads(path.read_bytes())
    data["documents"] = edit(data["documents"])  # type: ignore[operator]
    path.write_bytes(codec.dumps(data))
    with store.transaction():
        store.put("t", "d004", _doc(4, changed=True))
    _assert_canonical(store)


def test_a_file_rewritten_by_another_program_is_rewritten_whole(
    tmp_path: Path, direct: None
) -> None:
    """Not the version this process read: its bytes are nobody's to keep."""
    store = Store(tmp_path / "s")
    with store.transaction():
        store.put_many("t", {d["id"]: d for d in (_doc(n) for n in range(5))})
    path = store.path / table_file("t")
    data = json.loads(path.read_bytes())
    data["documents"]["d001"]["text"] = "edited elsewhere"
    data["version"] += 5
    path.write_bytes(codec.dumps(data))
    with store.transaction():
        store.put("t", "d004", _doc(4, changed=True))
    _assert_canonical(store)


@pytest.mark.parametrize("backend", ["memory", "folder", "redis"])
def test_a_document_changed_in_place_is_caught_by_the_check(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    """Documents from ``store.docs`` are read-only; the test suite checks every commit,
    on every backend."""
    monkeypatch.setenv("MEMWORK_VERIFY_WRITES", "1")
    location = {"memory": "memory:", "folder": str(tmp_path / "s")}.get(backend)
    store = Store(location or request.getfixturevalue("redis_url"))
    with store.transaction():
        store.put_many("t", {"a": {"id": "a", "v": 1}, "b": {"id": "b", "v": 1}})
    with pytest.raises(AssertionError, match="differs from a full encoding"):
        with store.transaction():
            store.docs("t")["a"]["v"] = 2  # against the rules: no put
            store.put("t", "b", {"id": "b", "v": 2})


PROBE = """
import sys
from memwork.core.doors.cli.main import main
code = main(["--db", sys.argv[1], "record-episode", *sys.argv[2:]])
print(code, sorted({m.split(".")[0] for m in sys.modules} & {"orjson", "dataclasses", "pydantic"}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("flags", [[], ["--json"]])
def test_recording_one_episode_imports_no_orjson(tmp_path: Path, flags: list[str]) -> None:
    """orjson's import costs more than the rest of recording an episode beyond the context."""
    store = tmp_path / "s"
    for n in range(25):  # the 20th consolidates; task rules come and go from the archive
        episode = {
            "task_id": "deploy",
            "score": 0.9 if n % 2 else 0.3,
            "summary": f"Rolled back — the canary failed ({n})",
            "mistakes": [f"skipped check {n % 13}"],
            "successes": [f"kept it small {n % 12}"],
            "metadata": {"cost": 1.5e-5, "tags": ["é", "ü"]},
        }
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(store), *flags],
            input=json.dumps(episode),
            capture_output=True,
            text=True,
            env=python_env(MEMWORK_VERIFY_WRITES=""),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip().splitlines()[-1] == "0 []"
    _assert_canonical(Store(store))
