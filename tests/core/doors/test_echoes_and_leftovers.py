"""Echoes, internal errors and leftovers the red team found.

- ``--db`` errors never print the password; ``doctor`` on a Redis that wants a password,
  on a ``/²`` database, on a lesson whose confidence is "high", on a table file replaced
  by a folder: one line (or doctor's own report), never an internal error;
- MCP argument-type errors are memwork's one line, naming the field;
- a refused restore leaves no snapshot behind; the recall index forgets what the store
  forgot and never prints what was planted in it;
- ``--json`` output escapes C1 controls and bidirectional overrides, text output drops them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.services import checkpoints
from memwork.core.storage.store import Store
from tests.conftest import NOW, folded, folder_digest, python_env, resealed
from tests.core.doors.test_mcp_server import with_server
from tests.redis_server import RedisServer

HF = "".join(("hf_", "BnCKnnVMAJMrXynycgXBxMLVxQukLiQgJt"))


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture):  # noqa: ANN201
    """``memwork ARGS`` in-process without the fixture's ``--db``: (code, out, err)."""
    import io

    from memwork.core.doors.cli.main import main

    def go(*argv: str) -> tuple[int, str, str]:
        capsysbinary.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        code = main(list(argv))
        sys.stdout.flush()
        captured = capsysbinary.readouterr()
        return code, captured.out.decode(), captured.err.decode()

    return go


def _one_line(done: Any, code: int = 2) -> str:
    assert done.code == code, done
    assert done.err.startswith("memwork: ") and done.err.count("\n") == 1, done.err
    assert "internal error" not in done.err and "Traceback" not in done.err
    return str(done.err)


# -- echoes and internal errors -------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "redis:/:hunter2secret@localhost:6379/0",
        "rediss:hunter2secret@localhost/0",
        "redis:/user:hunter2secret@localhost/0",
    ],
)
def test_a_db_error_never_prints_the_password(run, url: str) -> None:  # noqa: ANN001
    for verb in (("context",), ("doctor",), ("lesson", "add", "x y")):
        code, out, err = run("--db", url, *verb)
        assert code == 2 and "hunter2secret" not in out + err and err.count("\n") == 1, err


def test_a_database_number_in_other_digits_is_refused(run) -> None:  # noqa: ANN001
    code, _, err = run("--db", "redis://localhost:6390/²", "doctor")
    assert code == 2 and "the database must be a number" in err and "internal" not in err


def test_doctor_on_a_redis_that_wants_a_password(tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", fsync="no", password="s3cretPW")
    server.start()
    try:
        for args in (("doctor",), ("doctor", "--json"), ("context",)):
            done = subprocess.run(
                [sys.executable, "-m", "memwork", "--db", f"redis://127.0.0.1:{server.port}/0"]
                + list(args),
                capture_output=True,
                text=True,
                env=python_env(),
            )
            assert done.returncode == 2, done.stderr
            assert done.stderr.count("\n") == 1 and "needs a password" in done.stderr
    finally:
        server.stop()


@pytest.mark.folder_only
def test_doctor_names_a_record_its_model_refuses(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("lesson", "add", "Canary every deploy").code == 0
    table = folded(db) / "lessons.json"
    data = json.loads(table.read_text())
    (lesson,) = data["documents"].values()
    lesson["confidence"] = "high"
    table.write_text(json.dumps(data))
    resealed(table)
    before = folder_digest(db)
    done = cli("doctor")
    assert done.code == 1 and "internal error" not in done.err
    assert "PROBLEM  table lessons" in done.out and lesson["id"] in done.out
    assert "confidence" in done.out and done.out.splitlines()[-1].startswith("problems found")
    assert folder_digest(db) == before


@pytest.mark.folder_only
def test_a_table_file_replaced_by_a_folder(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("lesson", "add", "Canary every deploy").code == 0
    (folded(db) / "lessons.json").unlink()
    (db / "lessons.json").mkdir()
    done = cli("doctor")
    assert done.code == 1 and "internal error" not in done.err
    assert "lessons.json is a folder" in done.out
    err = _one_line(cli("lesson", "list"))
    assert "lessons.json is a folder" in err


@pytest.mark.slow
def test_mcp_argument_type_errors_are_one_line(db: Path) -> None:
    async def body(client: Any) -> list[str]:
        out = []
        for name, args in (
            ("get_context", {"budget": "lots"}),
            ("search", {"query": "x", "limit": "ten"}),
            ("observe", {"session": "s1", "text": ["not", "text"]}),
            ("wm_set", {"session": "s1", "key": "k", "value": "v", "ttl": "soon"}),
        ):
            result = await client.call_tool(name, args)
            assert result.is_error
            out.append(result.content[0].text)
        return out

    for message, field in zip(
        with_server(db, body), ("budget", "limit", "text", "ttl"), strict=True
    ):
        assert message.startswith(f"memwork: {field}: ") and "\n" not in message, message
        assert "pydantic" not in message and "http" not in message


# -- leftovers ------------------------------------------------------------------------------
def _snapshot_folders(db: Path) -> list[str]:
    folder = db / "snapshots"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.mark.folder_only
def test_a_refused_restore_writes_no_snapshot(
    cli, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    assert cli("lesson", "add", "Canary every deploy").code == 0
    key = cli("checkpoint", "create", "--json").json()["id"]
    assert _snapshot_folders(db) == [key]
    monkeypatch.setenv("MEMWORK_AGENT", HF)  # an actor the audit log refuses
    done = cli("checkpoint", "restore", key)
    _one_line(done)
    assert _snapshot_folders(db) == [key]
    # The same refusal reached after the automatic checkpoint was taken (the core call).
    store = Store(db)
    with pytest.raises(InvalidInput):
        checkpoints.restore(store, key, now=NOW, actor=f"cli:{HF}")
    assert _snapshot_folders(db) == [key]
    monkeypatch.delenv("MEMWORK_AGENT")
    assert "snapshot" not in cli("doctor").out.lower().replace("snapshots: ok", "")


def _grep(db: Path, needle: str) -> list[str]:
    """Files of the store holding ``needle`` (the audit log aside: it records what
    happened, restores included, and is never rewound)."""
    return [
        str(p.relative_to(db))
        for p in db.rglob("*")
        if p.is_file() and not p.name.startswith("audit.") and needle.encode() in p.read_bytes()
    ]


@pytest.mark.folder_only
def test_the_recall_index_forgets_what_the_store_forgot(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("observe", "--session", "s1", "warm up the cache").code == 0
    key = cli("checkpoint", "create", "--json").json()["id"]
    assert cli("observe", "--session", "s1", "the launch word is PINEAPPLE").code == 0
    assert "PINEAPPLE" in cli("search", "launch word").out
    assert _grep(db, "PINEAPPLE")
    auto = cli("checkpoint", "restore", key, "--json").json()["id"]
    assert "PINEAPPLE" not in cli("search", "launch word").out
    for checkpoint in (key, auto):
        assert cli("checkpoint", "delete", checkpoint).code == 0
    assert _grep(db, "PINEAPPLE") == []


@pytest.mark.folder_only
def test_the_recall_index_forgets_a_deleted_session_without_a_search(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("observe", "--session", "s1", "the launch word is PINEAPPLE").code == 0
    assert "PINEAPPLE" in cli("search", "launch word").out
    key = cli("checkpoint", "create", "--json").json()["id"]
    assert cli("lesson", "add", "Another lesson").code == 0
    cli("checkpoint", "restore", key)
    for checkpoint in cli("checkpoint", "list", "--json").json():
        assert cli("checkpoint", "delete", checkpoint["id"]).code == 0
    observed = [p for p in _grep(db, "PINEAPPLE") if p.startswith("cache")]
    assert observed == []  # the observation is still in its table; no copy in the cache


@pytest.mark.folder_only
def test_a_token_planted_in_the_recall_index_is_never_printed(cli, db: Path) -> None:  # noqa: ANN001
    from memwork.core.services.recall import saved_file

    assert cli("observe", "--session", "s1", "the deploy finished cleanly").code == 0
    assert "deploy" in cli("search", "deploy finished").out
    saved = db / "cache" / "recall" / "index.bin"
    index = saved_file.read(saved.read_bytes())
    assert index is not None
    (slot,) = [i for i in range(len(index.titles)) if "deploy" in index.titles[i]]
    index.titles[slot] = f"observation: deploy finished {HF}"
    planted = saved.with_name("planted")
    planted.write_bytes(saved_file.to_bytes(index))
    planted.replace(saved)  # as memwork replaces it: never rewritten in place
    for args in (("search", "deploy finished"), ("search", "deploy finished", "--json")):
        out = cli(*args).out
        assert "deploy" in out and HF not in out


@pytest.mark.folder_only
def test_json_output_escapes_c1_controls_and_bidi_overrides(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("lesson", "add", "Canary every deploy").code == 0
    assert cli("slot", "set", "persona", "careful agent").code == 0
    planted = "Canary \x9b2J every \u202edeploy\u2066 x"
    folded(db)
    for table, field in (("lessons", "content"), ("slots", "content")):
        path = db / f"{table}.json"
        data = json.loads(path.read_text())
        for doc in data["documents"].values():
            doc[field] = planted
        path.write_text(json.dumps(data))
        resealed(path)
    outputs = [
        cli("lesson", "list", "--json"),
        cli("slot", "list", "--json"),
        cli("slot", "show", "persona", "--json"),
        cli("search", "canary", "--json"),
        cli("history", "--json"),
        cli("context", "--format", "json"),
        cli("export"),
        cli("lesson", "list"),
        cli("slot", "show", "persona"),
        cli("context"),
        cli("search", "canary"),
    ]
    for done in outputs:
        assert done.code == 0, done.err
        for bad in ("\x9b", "\u202e", "\u2066"):
            assert bad not in done.out and bad not in done.err
    document = json.loads(cli("lesson", "list", "--json").out)
    assert "\u202e" in document[0]["content"]  # escaped, not lost: the JSON value is the same
