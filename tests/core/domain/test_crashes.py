"""``memwork record-failure``: crash reports become failed episodes, once per fingerprint.

Described in docs/MEMORY.md, Failure memory.
"""

from __future__ import annotations

import json
from pathlib import Path

from memwork import Memory
from tests.conftest import folder_digest

BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"
T1 = "2026-11-01T12:30:00Z"
REPORT = {
    "error_class": "AssertionError",
    "friction_kind": "test_failure",
    "stack_signature": "test_api.py::test_upload",
    "fingerprint": "a1b2c3",
    "message": "expected 200, got 503",
    "task": "api",
    "phase": "VERIFY",
    "exit_code": 1,
}


def _block(cli, now: str) -> list[str]:  # noqa: ANN001
    lines = cli("context", now=now).out.splitlines()
    if "## Past failures to avoid" not in lines:
        return []
    return lines[lines.index("## Past failures to avoid") + 1 :]


def test_a_crash_report_is_a_failed_episode_with_its_metadata(cli) -> None:  # noqa: ANN001
    done = cli("--json", "record-failure", stdin=json.dumps(REPORT), now=T0)
    assert done.code == 0, done.err
    result = done.json()
    assert (result["task_id"], result["error_type"], result["count"]) == (
        "api",
        "AssertionError",
        1,
    )
    (episode,) = [
        e
        for e in cli("--json", "export").json()["tables"]["episodes"]
        if e["id"] == result["episode_id"]
    ]
    assert episode["outcome"] == "failure" and episode["score"] == 0.0
    assert episode["errors"] == [
        {"error_type": "AssertionError", "message": "expected 200, got 503", "resolution": ""}
    ]
    meta = episode["metadata"]
    assert (meta["phase"], meta["exit_code"], meta["friction_kind"]) == (
        "VERIFY",
        1,
        "test_failure",
    )
    assert meta["stack_signature"] == "test_api.py::test_upload" and meta["occurrences"] == 1
    assert _block(cli, T0) == ["- AssertionError: expected 200, got 503"]


def test_the_same_fingerprint_is_counted_and_brought_back_to_the_top(cli) -> None:  # noqa: ANN001
    first = cli("--json", "record-failure", stdin=json.dumps(REPORT), now=T0).json()
    other = {**REPORT, "fingerprint": "zz", "error_class": "OSError", "message": "disk full"}
    cli("record-failure", stdin=json.dumps(other), now="2026-11-01T12:10:00Z")
    assert _block(cli, T0.replace("12:00", "12:20"))[0] == "- OSError: disk full"
    again = cli("record-failure", stdin=json.dumps(REPORT), now=T1)
    assert again.out.strip() == first["episode_id"]
    assert again.err == (
        f"memwork: crash seen again (2x): counted on {first['episode_id']}, not recorded twice\n"
    )
    assert _block(cli, T1) == [
        "- AssertionError: expected 200, got 503 (seen 2x)",
        "- OSError: disk full",
    ]
    stats = cli("stats").json()
    assert stats["total_episodes"] == 2 and stats["tasks"]["api"]["episodes"] == 2
    history = cli("--json", "history", "--record", first["episode_id"]).json()
    assert [e["action"] for e in history] == ["repeat", "record"]


def test_reports_without_a_fingerprint_are_each_a_failure(cli) -> None:  # noqa: ANN001
    bare = {"error_type": "KeyError", "message": "'user'", "task_id": "api"}  # the aliases
    ids = {cli("record-failure", stdin=json.dumps(bare), now=T0).out.strip() for _ in range(2)}
    assert len(ids) == 2


def test_a_bad_report_is_refused_and_nothing_is_written(cli, db: Path) -> None:  # noqa: ANN001
    cli("record-failure", stdin=json.dumps(REPORT), now=T0)
    before = folder_digest(db)
    for body, needle in (
        ({"message": "no class"}, "memwork: error_class: is required"),
        ({**REPORT, "exit_code": "1"}, "memwork: exit_code: must be a whole number"),
        ([REPORT, REPORT], "memwork: input: must be one crash report (got 2 records)"),
        ({**REPORT, "task": "PASSWORD=hunter2rocks"}, "memwork: task_id:"),
    ):
        done = cli("record-failure", stdin=json.dumps(body), now=T1)
        assert done.code == 2 and done.err.startswith(needle), done.err
    assert folder_digest(db) == before


def test_memory_and_the_cli_count_the_same_fingerprint(cli, db: Path) -> None:  # noqa: ANN001
    via_cli = cli("--json", "record-failure", stdin=json.dumps(REPORT), now=T0).json()
    memory = Memory(db, clock=lambda: __import__("datetime").datetime.fromisoformat(T1))
    again = memory.record_failure(REPORT)
    assert again["episode_id"] == via_cli["episode_id"]
    assert again["repeated"] is True and again["count"] == 2


def test_counting_survives_an_export_and_import(cli, tmp_path: Path) -> None:  # noqa: ANN001
    first = cli("--json", "record-failure", stdin=json.dumps(REPORT), now=T0).json()
    dump = tmp_path / "store.json"
    assert cli("export", str(dump)).code == 0
    fresh = tmp_path / "fresh"
    from memwork.core.doors.cli.main import main

    assert main(["--db", str(fresh), "import", str(dump)]) == 0
    memory = Memory(fresh, clock=lambda: __import__("datetime").datetime.fromisoformat(T1))
    again = memory.record_failure(REPORT)
    assert again["episode_id"] == first["episode_id"] and again["count"] == 2
