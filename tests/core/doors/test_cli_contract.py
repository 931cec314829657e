"""The CLI contract: exit codes, one-line errors, JSON output, stats, doctor,
export/import round trip, and where the store lives.

Described in docs/CLI.md.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from memwork.core.doors.cli.main import main
from tests.conftest import folded, folder_digest

#: The CLI contract holds on a folder and on a Redis store alike (tests/conftest.py).
BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"


def _seed(cli) -> dict[str, str]:  # noqa: ANN001
    """A store with a bit of everything, made through the CLI."""
    session = cli("session", "start", "--agent", "coder", "--title", "fix login", now=T0)
    sid = session.out.strip()
    cli("observe", "--session", sid, "--kind", "tool", "ran pytest", now=T0)
    cli("wm", "--session", sid, "set", "branch", "main", now=T0)
    episodes = [
        {
            "task_id": "login",
            "score": 0.2,
            "steps": 5,
            "summary": "token expired",
            "mistakes": ["reused a stale token"],
            "mistake_cards": [
                {"mistake_type": "stale", "lesson": "Refresh first.", "evidence": "401"}
            ],
            "session_id": sid,
        },
        {"task_id": "login", "score": 0.9, "steps": 3, "summary": "refreshed", "successes": ["ok"]},
        {"task_id": "docs", "score": 0.6, "steps": 1, "summary": "typos"},
    ]
    cli("record-episode", stdin=json.dumps(episodes), now=T0)
    lesson = cli(
        "lesson", "add", "Refresh tokens before calls", "--tag", "auth", now=T0
    ).out.strip()
    cli("rule", "add", "Prefer small diffs", now=T0)
    cli("slot", "set", "persona", "I am terse.", now=T0)
    cli("checkpoint", "create", "-m", "seeded", now=T0)
    return {"session": sid, "lesson": lesson}


# -- exit codes and errors ---------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ("context",),
        ("context", "--task", "t", "--format", "json", "--style", "episodic"),
        ("stats",),
        ("lesson", "list"),
        ("rule", "list"),
        ("slot", "list"),
        ("session", "list"),
        ("checkpoint", "list"),
        ("consolidate",),
        ("export",),
        ("--version",),
    ],
)
def test_success_is_exit_0(cli, args: tuple[str, ...], db: Path) -> None:  # noqa: ANN001
    from memwork.core.storage.store import Store

    Store(db)  # read verbs need a store (they never create one)
    done = cli(*args)
    assert done.code == 0, done.err
    assert "Traceback" not in done.err


USER_ERRORS = [
    (("lesson", "show", "les_nope"), "memwork: lesson not found: les_nope"),
    (("lesson", "add", "x", "--confidence", "7"), "memwork: confidence: must be between"),
    (("slot", "show", "nope"), "memwork: "),
    (("slot", "replace", "persona", "absent text", "x"), "memwork: "),
    (("rule", "add", "x", "--scope", "bad"), "memwork: scope: must be"),
    (("checkpoint", "diff", "nope"), "memwork: checkpoint not found: nope"),
    (("session", "end", "ses_nope"), "memwork: "),
    (("observe", "--session", "../nope", "hello"), "memwork: session: a new session id must"),
    (("record-episode",), "memwork: input: is empty"),
    (("import", "/nonexistent/file.json"), "memwork: FILE: cannot read"),
    (("context", "--budget", "-5"), "memwork: budget: must be >= 0"),
    (("lesson", "frobnicate"), "memwork: argument ACTION: invalid choice"),
    (("no-such-verb",), "memwork: argument COMMAND: invalid choice"),
    (("context", "--budget", "lots"), "memwork: argument --budget: invalid int value"),
]


@pytest.mark.parametrize(("args", "message"), USER_ERRORS)
def test_user_errors_are_exit_2_one_line_and_change_nothing(
    cli,  # noqa: ANN001
    db: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    cli("slot", "set", "persona", "terse")
    before = folder_digest(db)
    done = cli(*args)
    assert done.code == 2
    assert done.out == ""
    assert done.err.startswith(message)
    assert done.err.endswith("\n") and done.err.count("\n") == 1
    assert "Traceback" not in done.err
    assert folder_digest(db) == before


def test_a_store_path_that_is_a_file_is_exit_2(run, tmp_path: Path) -> None:  # noqa: ANN001
    path = tmp_path / "file.json"
    path.write_text("{}")
    code, out, err = run("--db", str(path), "stats")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "is a file" in err
    assert path.read_text() == "{}"


def test_an_internal_error_is_exit_1_one_line(cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    from memwork.core.services import stats

    def broken(store):  # noqa: ANN001, ANN202
        raise RuntimeError("boom")

    monkeypatch.setattr(stats, "store_stats", broken)
    cli("consolidate")  # a store to read
    done = cli("stats")
    assert done.code == 1
    assert done.err == "memwork: internal error: RuntimeError: boom\n"


@pytest.mark.folder_only
def test_an_unreadable_table_stops_with_the_file_name(cli, db: Path) -> None:  # noqa: ANN001
    cli("rule", "add", "x")
    victim = next(p for p in folded(db).iterdir() if p.name.startswith("rules."))
    victim.write_text("{not json")
    before = folder_digest(db)
    done = cli("rule", "list")
    assert done.code == 2  # StoreUnreadable: a failed precondition, named
    assert victim.name in done.err and "left untouched" in done.err
    assert done.err.count("\n") == 1
    assert "Traceback" not in done.err
    assert folder_digest(db) == before


# -- JSON output -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "args",
    [
        ("lesson", "list"),
        ("lesson", "list", "--all"),
        ("rule", "list"),
        ("rule", "list", "--all"),
        ("slot", "list"),
        ("session", "list"),
        ("checkpoint", "list"),
    ],
)
def test_list_commands_print_a_json_array(cli, args: tuple[str, ...]) -> None:  # noqa: ANN001
    cli("consolidate")  # an empty store (read verbs never create one)
    assert cli(*args, "--json").json() == []
    _seed(cli)
    records = cli(*args, "--json").json()
    assert isinstance(records, list) and records
    assert all(isinstance(r, dict) and isinstance(r["id"], str) for r in records)


def test_stats_shape(cli, db: Path) -> None:  # noqa: ANN001
    from memwork.core.storage.store import Store

    Store(db)  # an empty store (read verbs never create one)
    empty = cli("stats").json()
    assert empty["tasks"] == {} and empty["top_mistake_cards"] == []
    assert all(n == 0 for n in empty["counts"].values())
    _seed(cli)
    cli(
        "record-episode",
        stdin=json.dumps({"task_id": "docs", "score": 0.35, "mistake_cards": [{}, {}]}),
    )
    stats = cli("stats").json()
    assert {"counts", "tasks", "top_mistake_cards"} <= set(stats)
    assert stats["counts"]["episodes"] == 4
    assert stats["counts"]["lessons"] == 1 and stats["counts"]["slots"] == 1
    assert stats["counts"]["sessions"] == 1 and stats["counts"]["checkpoints"] == 1
    assert stats["counts"]["mistake_cards"] == 2
    assert all(isinstance(v, int) for v in stats["counts"].values())
    assert {t: (v["episodes"], v["mean_score"]) for t, v in stats["tasks"].items()} == {
        "docs": (2, 0.475),
        "login": (2, 0.55),
    }
    top = stats["top_mistake_cards"]
    assert [(c["mistake_type"], c["seen_count"]) for c in top] == [
        ("unknown_mistake", 2),
        ("stale", 1),
    ]


# -- doctor ------------------------------------------------------------------------------
def test_doctor_on_a_healthy_store(cli) -> None:  # noqa: ANN001
    _seed(cli)
    done = cli("doctor")
    assert done.code == 0
    assert "PROBLEM" not in done.out
    report = cli("doctor", "--json").json()
    assert report["ok"] is True
    # A warning (a Redis server that does not fsync each write) is said, not called
    # healthy: the last line counts the warnings above it.
    warned = [c for c in report["checks"] if c["status"] == "warn"]
    assert len(warned) == done.out.count("\nwarning  ") + done.out.startswith("warning  ")
    last = done.out.splitlines()[-1]
    if warned:
        assert last == f"store is usable; {len(warned)} warning{'s' * (len(warned) > 1)} above"
    else:
        assert last == "store is healthy"
    assert {c["name"] for c in report["checks"]} >= {"store", "schema", "lock", "tables"}


@pytest.mark.folder_only
def test_doctor_on_a_damaged_store_reports_and_repairs_nothing(cli, db: Path) -> None:  # noqa: ANN001
    _seed(cli)
    victim = next(p for p in folded(db).iterdir() if p.name.startswith("lessons"))
    victim.write_bytes(b'{"truncated": ')
    before = folder_digest(db)
    done = cli("doctor")
    assert done.code == 1
    assert "PROBLEM  table lessons" in done.out
    assert done.out.splitlines()[-1] == "problems found; nothing was changed"
    report = cli("doctor", "--json").json()
    assert report["ok"] is False
    assert any(c["status"] == "problem" and victim.name in c["detail"] for c in report["checks"])
    assert folder_digest(db) == before


@pytest.mark.folder_only
def test_doctor_on_a_missing_store(cli, db: Path) -> None:  # noqa: ANN001
    done = cli("doctor")
    assert done.code == 2 and done.err == f"memwork: no memwork store at {db}\n"
    assert not db.exists()


# -- export / import --------------------------------------------------------------------
def test_export_import_export_is_lossless(cli, run, tmp_path: Path) -> None:  # noqa: ANN001
    _seed(cli)
    first = cli("export", now="2026-11-02T00:00:00Z")
    assert first.code == 0
    document = json.loads(first.out)
    assert document["format"] == "memwork-export"
    assert document["exported_at"] == "2026-11-02T00:00:00.000000Z"
    assert document["tables"]["episodes"] and document["tables"]["lessons"]
    assert "checkpoints" not in document["tables"]
    source = tmp_path / "export.json"
    assert cli("export", str(source)).code == 0
    assert json.loads(source.read_text())["tables"] == document["tables"]

    other = tmp_path / "other"
    code, _, err = run("--db", str(other), "import", str(source))
    assert code == 0, err
    code, out, _ = run("--db", str(other), "export")
    assert code == 0
    again = json.loads(out)
    document.pop("exported_at")
    again.pop("exported_at")
    # The history came from another store: each entry says which import brought it.
    marks = {entry.pop("imported") for entry in again["tables"]["audit"]}
    assert len(marks) == 1 and marks.pop().startswith("imp_")
    assert again == document


def test_import_into_a_store_with_the_same_records_is_refused(cli, tmp_path: Path) -> None:  # noqa: ANN001
    _seed(cli)
    source = tmp_path / "export.json"
    cli("export", str(source))
    done = cli("import", str(source))
    assert done.code == 2 and done.err.count("\n") == 1


def test_import_reports_counts_per_table(cli, tmp_path: Path) -> None:  # noqa: ANN001
    source = tmp_path / "agent_memory.json"
    source.write_text(
        json.dumps(
            {
                "version": 1,
                "total_episodes": 2,
                "last_consolidated_at": 0,
                "global_rules": ["g"],
                "task_rules": {"t": ["[AVOID] x"]},
                "episode_log": [
                    {"timestamp": T0, "task_id": "t", "score": 0.2, "steps": 1, "summary": "a"},
                    {"timestamp": T0, "task_id": "t", "score": 0.9, "steps": 2, "summary": "b"},
                ],
                "score_history": {"t": [0.2, 0.9]},
                "mistakes": ["x"],
                "successes": [],
                "mistake_cards": [],
            }
        )
    )
    done = cli("import", str(source))
    assert done.code == 0
    assert done.out.splitlines() == [
        f"imported {source} (episodic)",
        "  episodes: 2 added",
        "  rules: 2 added",
    ]


# -- where the store lives ------------------------------------------------------------
@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture):  # noqa: ANN201
    """``memwork ARGS`` in-process without the fixture's ``--db``: (code, out, err)."""

    def go(*argv: str) -> tuple[int, str, str]:
        capsysbinary.readouterr()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        code = main(list(argv))
        sys.stdout.flush()
        captured = capsysbinary.readouterr()
        return code, captured.out.decode(), captured.err.decode()

    return go


def _rules(run, *args: str) -> list[str]:  # noqa: ANN001
    code, out, err = run(*args, "rule", "list", "--json")
    assert code == 0, err
    return [r["text"] for r in json.loads(out)]


def test_store_location_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run) -> None:  # noqa: ANN001
    default = tmp_path / "xdg-data" / "memwork"
    from_env = tmp_path / "env-store"
    from_flag = tmp_path / "flag-store"
    # Nothing set: the platformdirs user data dir (XDG_DATA_HOME points into tmp).
    assert run("rule", "add", "in default")[0] == 0
    assert default.is_dir() and any(default.iterdir())
    # MEMWORK_DB beats the default.
    monkeypatch.setenv("MEMWORK_DB", str(from_env))
    assert run("rule", "add", "in env")[0] == 0
    # --db beats MEMWORK_DB.
    assert run("--db", str(from_flag), "rule", "add", "in flag")[0] == 0
    assert _rules(run, "--db", str(from_flag)) == ["in flag"]
    assert _rules(run) == ["in env"]
    monkeypatch.delenv("MEMWORK_DB")
    assert _rules(run) == ["in default"]
    assert _rules(run, "--db", str(default)) == ["in default"]
