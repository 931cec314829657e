"""``memwork copy SRC DST``: whole stores between folders and Redis, all or nothing,
never over existing data; folder → Redis → folder exports byte-identically."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

from memwork.core.doors.cli.main import main
from tests.conftest import folder_digest
from tests.redis_server import client_for

T0 = "2026-11-01T12:00:00Z"
LATER = "2026-11-03T08:00:00Z"


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture):  # noqa: ANN201
    def go(*argv: str, stdin: str = "", now: str = T0) -> tuple[int, str, str]:
        monkeypatch.setenv("MEMWORK_NOW", now)
        capsysbinary.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), "utf-8"))
        code = main(list(argv))
        sys.stdout.flush()
        captured = capsysbinary.readouterr()
        return code, captured.out.decode(), captured.err.decode()

    return go


def _seed(run, db: str) -> str:  # noqa: ANN001
    """A store with every kind of record and two checkpoints; returns the first's id."""
    assert run("--db", db, "session", "start", "--agent", "a", "--title", "t")[0] == 0
    run("--db", db, "observe", "--session", "run-1", "--kind", "tool", "ran pytest")
    run("--db", db, "wm", "--session", "run-1", "set", "branch", "main", "--ttl", "3600")
    run("--db", db, "wm", "--session", "run-1", "scratch", "add", "look at the logs")
    episodes = [
        {
            "task_id": "login",
            "score": 0.2,
            "summary": "token expired",
            "mistakes": ["stale"],
            "mistake_cards": [{"mistake_type": "stale", "lesson": "Refresh first."}],
        },
        {"task_id": "login", "score": 0.93, "summary": "refreshed", "successes": ["refresh"]},
    ]
    assert run("--db", db, "record-episode", stdin=json.dumps(episodes))[0] == 0
    run("--db", db, "lesson", "add", "Refresh tokens before calls", "--tag", "auth")
    run("--db", db, "slot", "set", "persona", "I am terse.")
    code, first, _ = run("--db", db, "checkpoint", "create", "-m", "seeded")
    run("--db", db, "rule", "add", "Prefer small diffs")
    run("--db", db, "checkpoint", "create", "-m", "later")
    return first.strip()


def test_folder_to_redis_to_folder_exports_byte_identically(
    run, tmp_path: Path, redis_url: str
) -> None:
    source, back = str(tmp_path / "src"), str(tmp_path / "back")
    first = _seed(run, source)
    code, out, err = run("copy", source, redis_url)
    assert code == 0, err
    assert out.startswith(f"copied {source} to {redis_url}: ")
    assert run("copy", redis_url, back)[0] == 0
    exports = [run("--db", db, "export", now=LATER)[1] for db in (source, redis_url, back)]
    assert exports[0] == exports[1] == exports[2]
    assert json.loads(exports[0])["tables"]["episodes"]
    # Checkpoints came along: they list, diff and restore on the copies.
    listed = [
        run("--db", db, "checkpoint", "list", "--json")[1] for db in (source, redis_url, back)
    ]
    assert listed[0] == listed[1] == listed[2]
    for db in (source, redis_url, back):
        code, out, err = run("--db", db, "checkpoint", "diff", first, "--json")
        assert code == 0, err
        assert json.loads(out)["tables"]["rules"]["added"]
        assert run("--db", db, "checkpoint", "restore", first)[0] == 0
    restored = [run("--db", db, "rule", "list", "--json")[1] for db in (source, redis_url, back)]
    assert restored[0] == restored[1] == restored[2]
    assert "Prefer small diffs" not in restored[0]


def test_redis_to_redis_and_folder_to_folder(run, tmp_path: Path, redis_server) -> None:  # noqa: ANN001
    a, b = redis_server.fresh_db(), redis_server.fresh_db()
    _seed(run, a)
    assert run("copy", a, b)[0] == 0
    folder, other = str(tmp_path / "f1"), str(tmp_path / "f2")
    assert run("copy", b, folder)[0] == 0
    os.mkdir(other)  # an empty folder is a fine target
    code, out, err = run("copy", folder, other, "--json")
    assert code == 0, err
    assert json.loads(out)["checkpoints"] == 2
    exports = {run("--db", db, "export", now=LATER)[1] for db in (a, b, folder, other)}
    assert len(exports) == 1


def test_a_target_with_data_is_refused_untouched(run, tmp_path: Path, redis_server) -> None:  # noqa: ANN001
    source = str(tmp_path / "src")
    _seed(run, source)
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes.txt").write_text("mine")
    code, _, err = run("copy", source, str(full))
    assert code == 2 and "already holds files" in err and err.count("\n") == 1
    assert os.listdir(full) == ["notes.txt"]
    store = redis_server.fresh_db()
    run("--db", store, "rule", "add", "theirs")
    before = folder_digest(store)
    code, _, err = run("copy", source, store)
    assert code == 2 and "already holds a memwork store" in err
    assert folder_digest(store) == before
    foreign = redis_server.fresh_db()
    client_for(foreign).set("cache:1", "x")
    code, _, err = run("copy", source, foreign)
    assert code == 2 and "holds keys that are not memwork's" in err
    assert client_for(foreign).keys() == [b"cache:1"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_missing_source_creates_nothing(run, tmp_path: Path, redis_url: str) -> None:
    code, _, err = run("copy", str(tmp_path / "nope"), str(tmp_path / "dst"))
    assert code == 2 and err == f"memwork: no memwork store at {tmp_path / 'nope'}\n"
    assert not (tmp_path / "nope").exists() and not (tmp_path / "dst").exists()
    code, _, err = run("copy", redis_url, str(tmp_path / "dst"))
    assert code == 2 and "no memwork store at" in err
    assert client_for(redis_url).dbsize() == 0
    code, _, err = run("copy", redis_url, redis_url)
    assert code == 2 and "DST: is the same store as SRC" in err


def test_a_copy_that_fails_leaves_an_empty_database(run, tmp_path: Path, redis_url: str) -> None:
    source = str(tmp_path / "src")
    _seed(run, source)
    big = [{"task_id": "t", "score": 0.5, "summary": "x" * 50_000} for _ in range(40)]
    assert run("--db", source, "record-episode", stdin=json.dumps(big))[0] == 0
    client = client_for(redis_url)
    used = client.info("memory")["used_memory"]
    client.config_set("maxmemory", used + 300_000)  # the copy needs ~2 MB
    try:
        code, _, err = run("copy", source, redis_url)
    finally:
        client.config_set("maxmemory", 0)
    assert code == 2, err
    assert "out of memory" in err and err.count("\n") == 1
    assert client.dbsize() == 0
    assert run("copy", source, redis_url)[0] == 0  # with room, it goes through whole
