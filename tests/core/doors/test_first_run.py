"""A first run says where the store is and how to point an agent at it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memwork.core.doors.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_doctor_names_a_store_given_by_db_and_the_line_for_an_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "memory"
    assert run(capsys, "--db", str(db), "lesson", "add", "Canary every deploy")[0] == 0
    code, out, _ = run(capsys, "--db", str(db), "doctor")
    assert code == 0
    assert out.splitlines()[-2:] == [
        f"this store is named by --db; point an agent at it with MEMWORK_DB={db}",
        "store is healthy",
    ]
    code, out, _ = run(capsys, "--db", str(db), "doctor", "--json")
    report = json.loads(out)
    assert report["origin"] == "--db" and report["agent_env"] == f"MEMWORK_DB={db}"


def test_doctor_says_when_memwork_db_chose_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "agent-memory"
    monkeypatch.setenv("MEMWORK_DB", str(db))
    assert run(capsys, "lesson", "add", "Canary every deploy")[0] == 0
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    assert "this store is named by MEMWORK_DB" in out and f"MEMWORK_DB={db}" in out


def test_doctor_on_a_first_run_names_the_default_store_it_will_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # tests/conftest.py points the user data dir at tmp_path / "xdg-data".
    default = tmp_path / "xdg-data" / "memwork"
    code, out, err = run(capsys, "doctor")
    assert code == 0 and err == ""
    first, install, *rest = out.splitlines()
    assert first == f"ok       store: no store at {default} yet; the first write creates it there"
    # (this install's own check: tests/core/services/test_recall_compiled.py)
    assert install.startswith(("ok       recall scoring: ", "warning  recall scoring: "))
    assert rest == [
        f"this store is the default; point an agent at it with MEMWORK_DB={default}",
        "nothing to check yet",
    ]
    code, out, _ = run(capsys, "doctor", "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True and report["exists"] is False
    assert report["origin"] == "default" and report["agent_env"] == f"MEMWORK_DB={default}"
    assert not default.exists()  # doctor only looks
    assert run(capsys, "lesson", "add", "Canary every deploy")[0] == 0
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    assert f"this store is the default; point an agent at it with MEMWORK_DB={default}" in out


def test_doctor_on_a_path_named_by_db_that_does_not_exist_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo"
    code, out, err = run(capsys, "--db", str(missing), "doctor")
    assert (code, out) == (2, "")
    assert err == f"memwork: no memwork store at {missing}\n"


def test_the_agent_line_for_a_redis_store_never_shows_its_password(redis_url: str) -> None:
    from memwork.core.storage.paths import agent_setting

    secret_url = redis_url.replace("redis://", "redis://:hunter2-not-shown@")
    line = agent_setting(secret_url)
    assert line.startswith("MEMWORK_DB=redis://") and "hunter2" not in line


@pytest.mark.parametrize("demo", [False, True])
def test_no_command_without_a_terminal_is_refused_at_once(tmp_path: Path, demo: bool) -> None:
    """An agent or a script that leaves out its command gets one line and exit 2 at
    once: the workbench, drawn into a pipe, would wait for keys forever."""
    import subprocess
    import sys

    db = tmp_path / "memory"
    args = ["--demo"] if demo else ["--db", str(db)]
    done = subprocess.run(
        [sys.executable, "-m", "memwork", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,  # a bound for a hang, not a timing expectation
        cwd=tmp_path,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("memwork: the workbench needs a terminal")
    assert done.stderr.count("\n") == 1 and "memwork context" in done.stderr
    assert not db.exists()  # refused before any store is made
