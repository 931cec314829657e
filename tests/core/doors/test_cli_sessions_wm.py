"""``memwork session|observe|wm`` through the CLI: output, exit codes, refusals."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.conftest import folder_digest, stored_text

#: The CLI contract holds on a folder and on a Redis store alike (tests/conftest.py).
BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"


@pytest.fixture
def sid(cli) -> str:  # noqa: ANN001
    result = cli("session", "start", "--agent", "coder", "--title", "fix it", now=T0)
    assert result.code == 0, result.err
    return result.out.strip()


def _refused(cli, db: Path, *args: str, field: str, now: str = T0) -> str:  # noqa: ANN001
    """Run a command that must fail with exit 2, one stderr line naming ``field``, no writes."""
    before = folder_digest(db)
    result = cli(*args, now=now)
    assert result.code == 2, (result.out, result.err)
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("memwork: ") and field in lines[0]
    assert folder_digest(db) == before
    return lines[0]


# -- sessions -------------------------------------------------------------------------
def test_session_start_prints_the_id(cli, sid: str) -> None:  # noqa: ANN001
    assert sid.startswith("ses_") and "\n" not in sid
    shown = cli("session", "show", sid, "--json").json()
    assert shown["id"] == sid
    assert shown["agent_id"] == "coder" and shown["title"] == "fix it"
    assert shown["status"] == "active" and shown["observations"] == []


def test_session_start_json_and_agent_from_env(cli, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MEMWORK_AGENT", "bot-7")
    result = cli("session", "start", "--project", "p", "--json", now=T0)
    assert result.code == 0
    record = result.json()
    assert record["agent_id"] == "bot-7" and record["project"] == "p"
    assert record["started_at"] == "2026-11-01T12:00:00.000000Z"
    assert record["total_observed"] == 0 and record["duration_seconds"] == 0.0


def test_session_list_human_and_json(cli) -> None:  # noqa: ANN001
    first = cli("session", "start", "--title", "one", now=T0).out.strip()
    second = cli("session", "start", "--title", "two", now="2026-11-01T13:00:00Z").out.strip()
    human = cli("session", "list")
    assert human.code == 0
    lines = human.out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(second) and "two" in lines[0]
    assert lines[1].startswith(first) and "active" in lines[1]
    rows = cli("session", "list", "--json", now="2026-11-01T14:00:00Z").json()
    assert [r["id"] for r in rows] == [second, first]
    assert rows[1]["duration_seconds"] == 7200.0
    assert {"observation_count", "dropped_observations", "total_observed"} <= set(rows[0])


def test_session_list_empty(cli) -> None:  # noqa: ANN001
    cli("consolidate")  # an empty store (read verbs never create one)
    assert cli("session", "list").out == ""
    assert cli("session", "list", "--json").json() == []


def test_session_end(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    result = cli("session", "end", sid[:12], "--summary", "all green", now="2026-11-01T12:10:00Z")
    assert result.code == 0 and result.out.strip() == sid
    shown = cli("session", "show", sid, "--json").json()
    assert shown["status"] == "ended" and shown["summary"] == "all green"
    assert shown["duration_seconds"] == 600.0
    line = _refused(cli, db, "session", "end", sid, field="already ended")
    assert sid in line


def test_session_end_and_show_unknown(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    _refused(cli, db, "session", "end", "ses_nope", field="session not found: ses_nope")
    _refused(cli, db, "session", "show", "ses_nope", field="session not found")


def test_ambiguous_prefix_is_refused(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    cli("session", "start", now=T0)
    _refused(cli, db, "observe", "--session", "ses_", "x", field="session: 'ses_' matches 2")


# -- observe --------------------------------------------------------------------------
def test_observe_prints_the_id_and_show_lists_it(cli, sid: str) -> None:  # noqa: ANN001
    result = cli("observe", "--session", sid, "--kind", "tool", "--tag", "ci", "ran pytest", now=T0)
    assert result.code == 0 and result.err == ""
    obs_id = result.out.strip()
    assert obs_id.startswith("obs_")
    shown = cli("session", "show", sid, "--json").json()
    assert [o["id"] for o in shown["observations"]] == [obs_id]
    assert shown["observations"][0]["kind"] == "tool"
    assert shown["observations"][0]["tags"] == ["ci"]
    assert shown["observation_count"] == 1
    human = cli("session", "show", sid)
    assert "ran pytest" in human.out and "#1" in human.out


def test_observe_json_is_scrubbed(cli, sid: str) -> None:  # noqa: ANN001
    record = cli("observe", "--session", sid, "mail bob@example.com", "--json", now=T0).json()
    assert record["content"] == "mail [redacted:email]"
    assert record["seq"] == 1 and record["dropped"] == 0 and record["after_end"] is False


def test_observe_after_end_is_kept_with_a_note(cli, sid: str) -> None:  # noqa: ANN001
    cli("session", "end", sid, now=T0)
    result = cli("observe", "--session", sid, "late line", now=T0)
    assert result.code == 0
    assert "has ended" in result.err
    shown = cli("session", "show", sid, "--json").json()
    assert shown["observations"][0]["after_end"] is True


def test_observe_refusals(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    _refused(cli, db, "observe", "--session", "a/b", "x", field="session")
    _refused(cli, db, "observe", "--session", sid, "   ", field="content")
    _refused(cli, db, "observe", "--session", sid, "--kind", "k" * 60, "x", field="kind")


# -- wm keys --------------------------------------------------------------------------
def test_wm_set_get_list_delete(cli, sid: str) -> None:  # noqa: ANN001
    assert cli("wm", "--session", sid, "set", "plan", "step one", now=T0).out.strip() == "plan"
    get = cli("wm", "--session", sid, "get", "plan")
    assert get.code == 0 and get.out == "step one\n"
    assert cli("wm", "--session", sid, "list").out.splitlines() == ["plan = step one"]
    rows = cli("wm", "--session", sid, "list", "--json").json()
    assert rows == [
        {
            "key": "plan",
            "value": "step one",
            "set_at": "2026-11-01T12:00:00.000000Z",
            "expires_at": None,
            "ttl_remaining": None,
            "scope": "session",
        }
    ]
    assert cli("wm", "--session", sid, "delete", "plan").out.strip() == "plan"
    assert cli("wm", "--session", sid, "list", "--json").json() == []


def test_wm_values_are_kept_as_typed(cli, sid: str) -> None:  # noqa: ANN001
    for value in ('{"a": 1}', "007", "true", "1e3"):
        cli("wm", "--session", sid, "set", "k", value, now=T0)
        assert cli("wm", "--session", sid, "get", "k").out == value + "\n"
        assert cli("wm", "--session", sid, "get", "k", "--json").json()["value"] == value


def test_wm_ttl_countdown_and_expiry(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    cli("wm", "--session", sid, "set", "lease", "x", "--ttl", "60", now=T0)
    entry = cli("wm", "--session", sid, "get", "lease", "--json", now="2026-11-01T12:00:45Z")
    assert entry.json()["expires_at"] == "2026-11-01T12:01:00.000000Z"
    assert entry.json()["ttl_remaining"] == 15.0
    listed = cli("wm", "--session", sid, "list", now="2026-11-01T12:00:45Z").out
    assert "expires in 15s" in listed
    late = "2026-11-01T12:01:00Z"
    _refused(cli, db, "wm", "--session", sid, "get", "lease", now=late, field="lease")
    assert cli("wm", "--session", sid, "list", "--json", now=late).json() == []
    # The next write purges it from the stored document.
    cli("wm", "--session", sid, "set", "other", "y", now=late)
    state = stored_text(db, f"working_memory.{sid}")
    assert "lease" not in state and "other" in state


def test_wm_refusals(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    line = _refused(cli, db, "wm", "--session", sid, "set", "_secret", "v", field="key")
    assert line == "memwork: key: keys starting with '_' are reserved"
    _refused(cli, db, "wm", "--session", sid, "set", "", "v", field="key")
    _refused(cli, db, "wm", "--session", sid, "set", "k", "v", "--ttl", "0", field="ttl")
    _refused(cli, db, "wm", "--session", sid, "set", "k", "v", "--ttl", "-3", field="ttl")
    _refused(cli, db, "wm", "--session", sid, "get", "nope", field="nope")
    _refused(cli, db, "wm", "--session", sid, "delete", "nope", field="nope")
    _refused(cli, db, "wm", "--session", "../up", "list", field="session")
    _refused(cli, db, "wm", "--session", "a/b", "set", "k", "v", field="session")


# -- wm task --------------------------------------------------------------------------
def test_wm_task_show_and_update(cli, sid: str) -> None:  # noqa: ANN001
    empty = cli("wm", "--session", sid, "task")
    assert empty.code == 0 and empty.out == "" and "no task" in empty.err
    assert cli("wm", "--session", sid, "task", "--json").json() is None
    made = cli("wm", "--session", sid, "task", "--id", "t1", "--step", "1", "--total", "4", now=T0)
    assert made.code == 0 and made.out.startswith("t1  in_progress  25%")
    later = "2026-11-01T12:05:00Z"
    updated = cli("wm", "--session", sid, "task", "--status", "blocked", "--json", now=later)
    task = updated.json()
    assert task["status"] == "blocked" and task["progress_percent"] == 25.0
    assert task["current_step"] == 1 and task["total_steps"] == 4
    assert task["started_at"] == "2026-11-01T12:00:00.000000Z"
    assert task["updated_at"] == "2026-11-01T12:05:00.000000Z"
    assert cli("wm", "--session", sid, "task", "--json").json() == task


def test_wm_task_progress_is_clamped_with_a_note(cli, sid: str) -> None:  # noqa: ANN001
    result = cli("wm", "--session", sid, "task", "--progress", "150", "--json", now=T0)
    assert result.code == 0
    assert result.json()["progress_percent"] == 100.0
    assert "clamped" in result.err


def test_wm_task_refusals(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    cli("wm", "--session", sid, "task", "--id", "t", now=T0)
    _refused(cli, db, "wm", "--session", sid, "task", "--step", "-1", field="current_step")
    _refused(cli, db, "wm", "--session", sid, "task", "--total", "0", field="total_steps")
    _refused(cli, db, "wm", "--session", sid, "task", "--progress", "nan", field="progress")


# -- scratchpad -----------------------------------------------------------------------
def test_wm_scratchpad(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    added = cli("wm", "--session", sid, "scratch", "add", "look at auth.py", now=T0)
    assert added.code == 0 and added.out.strip() == "2026-11-01T12:00:00.000000Z"
    cli("wm", "--session", sid, "scratch", "add", "then tests", now="2026-11-01T12:00:05Z")
    assert cli("wm", "--session", sid, "scratch", "list").out.splitlines() == [
        "2026-11-01T12:00:00Z  look at auth.py",
        "2026-11-01T12:00:05Z  then tests",
    ]
    rows = cli("wm", "--session", sid, "scratch", "list", "--json").json()
    assert [r["text"] for r in rows] == ["look at auth.py", "then tests"]
    _refused(cli, db, "wm", "--session", sid, "scratch", "add", " ", field="text")


# -- wm checkpoints -------------------------------------------------------------------
def test_wm_checkpoints(cli, db: Path, sid: str) -> None:  # noqa: ANN001
    wm = ("wm", "--session", sid)
    cli(*wm, "set", "a", "1", now=T0)
    created = cli(*wm, "checkpoint", "create", "-m", "first", now=T0)
    assert created.code == 0
    first = created.out.strip()
    assert uuid.UUID(first).version == 4 and str(uuid.UUID(first)) == first
    cli(*wm, "set", "a", "2", now=T0)
    cli(*wm, "set", "b", "3", now=T0)
    second = cli(*wm, "checkpoint", "create", now=T0).out.strip()
    rows = cli(*wm, "checkpoint", "list", "--json").json()
    assert [r["id"] for r in rows] == [first, second]
    assert rows[0]["description"] == "first" and rows[0]["keys"] == 1
    human = cli(*wm, "checkpoint", "list").out.splitlines()
    assert human[0].startswith(first) and "first" in human[0]

    restored = cli(*wm, "checkpoint", "restore", first[:8], now=T0)
    assert restored.code == 0 and restored.out.strip() == first
    assert cli(*wm, "list", "--json").json()[0]["value"] == "1"
    assert [r["key"] for r in cli(*wm, "list", "--json").json()] == ["a"]

    assert cli(*wm, "checkpoint", "delete", second, now=T0).out.strip() == second
    assert [r["id"] for r in cli(*wm, "checkpoint", "list", "--json").json()] == [first]
    _refused(cli, db, *wm, "checkpoint", "restore", second, field="checkpoint not found")
    _refused(cli, db, *wm, "checkpoint", "delete", "zzzz", field="checkpoint not found")


def test_wm_checkpoint_create_json(cli, sid: str) -> None:  # noqa: ANN001
    record = cli("wm", "--session", sid, "checkpoint", "create", "-m", "x", "--json", now=T0)
    body = record.json()
    assert body["kind"] == "checkpoint" and body["description"] == "x"
    assert body["session_id"] == sid and body["state"]["kv"] == {}


# -- any session id an agent names ------------------------------------------------------
def test_wm_with_a_session_id_nobody_started_creates_it(
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_AGENT", "coder-7")
    done = cli("wm", "--session", "run-42", "set", "k", "v", now=T0)
    assert done.code == 0 and done.out == "k\n" and done.err == ""
    assert cli("wm", "--session", "run-42", "get", "k").out == "v\n"
    rows = cli("session", "list", "--json").json()
    assert [(r["id"], r["implicit"], r["status"]) for r in rows] == [("run-42", True, "active")]
    assert rows[0]["agent_id"] == "coder-7"
    assert "(implicit)" in cli("session", "list").out


def test_observe_with_a_session_id_nobody_started_creates_it(cli) -> None:  # noqa: ANN001
    done = cli("observe", "--session", "worker_3.job-9", "--kind", "tool", "ran ls", now=T0)
    assert done.code == 0, done.err
    shown = cli("session", "show", "worker_3.job-9", "--json").json()
    assert shown["implicit"] is True
    assert [o["content"] for o in shown["observations"]] == ["ran ls"]


def test_started_sessions_are_not_implicit(cli, sid: str) -> None:  # noqa: ANN001
    cli("wm", "--session", "run-1", "task", "--id", "t", now=T0)
    rows = {r["id"]: r["implicit"] for r in cli("session", "list", "--json").json()}
    assert rows == {sid: False, "run-1": True}


def test_reading_an_unknown_session_id_is_empty_and_writes_nothing(cli, db: Path) -> None:  # noqa: ANN001
    cli("session", "start", now=T0)
    before = folder_digest(db)
    listed = cli("wm", "--session", "run-9", "list", "--json")
    assert listed.code == 0 and listed.json() == []
    assert cli("wm", "--session", "run-9", "task", "--json").json() is None
    missing = cli("wm", "--session", "run-9", "get", "k")
    assert missing.code == 2 and missing.err == "memwork: working-memory key not found: k\n"
    assert folder_digest(db) == before


# -- wm task partial updates --------------------------------------------------------------
def test_wm_task_step_alone_keeps_a_progress_the_agent_set(cli, sid: str) -> None:  # noqa: ANN001
    args = ("wm", "--session", sid, "task")
    cli(*args, "--id", "t", "--total", "10", "--progress", "75", now=T0)
    done = cli(*args, "--step", "2", "--json", now=T0)
    assert done.code == 0
    task = done.json()
    assert (task["current_step"], task["total_steps"], task["progress_percent"]) == (2, 10, 75.0)
    assert task["progress_given"] is True
    assert cli(*args).out.startswith("t  in_progress  75%  step 2/10")


def test_wm_task_progress_follows_steps_until_the_agent_sets_it(cli, sid: str) -> None:  # noqa: ANN001
    args = ("wm", "--session", sid, "task")
    assert (
        cli(*args, "--step", "1", "--total", "4", "--json", now=T0).json()["progress_percent"]
        == 25.0
    )
    assert cli(*args, "--step", "3", "--json").json()["progress_percent"] == 75.0
    assert cli(*args, "--progress", "60", "--json").json()["progress_percent"] == 60.0
    task = cli(*args, "--step", "4", "--status", "review", "--json").json()
    assert (task["current_step"], task["status"], task["progress_percent"]) == (4, "review", 60.0)


# -- the working-memory library's answers, in the CLI's closest forms ---------------------
def test_wm_get_with_a_default_answers_it_for_a_missing_key(cli, db: Path) -> None:  # noqa: ANN001
    cli("wm", "--session", "run-1", "set", "plan", "ship", now=T0)
    got = cli("wm", "--session", "run-1", "get", "nope", "--default", "none yet", now=T0)
    assert (got.code, got.out, got.err) == (0, "none yet\n", "")
    answer = cli("--json", "wm", "--session", "run-1", "get", "nope", "--default", "0").json()
    assert answer == {"key": "nope", "value": "0", "found": False, "scope": None}
    live = cli("--json", "wm", "--session", "run-1", "get", "plan", "--default", "x").json()
    assert (live["value"], live["found"], live["scope"]) == ("ship", True, "session")
    # Without a default a missing key is still not found (exit 2), as before.
    _refused(cli, db, "wm", "--session", "run-1", "get", "nope", field="working-memory key")


def test_wm_delete_missing_ok_says_nothing_was_deleted(cli, db: Path) -> None:  # noqa: ANN001
    cli("wm", "--session", "run-2", "set", "a", "1", now=T0)
    before = folder_digest(db)
    gone = cli("wm", "--session", "run-2", "delete", "nope", "--missing-ok", now=T0)
    assert (gone.code, gone.out) == (0, "")
    assert gone.err == "no key 'nope' here: nothing deleted\n"
    assert folder_digest(db) == before
    answer = cli("--json", "wm", "--session", "run-2", "delete", "nope", "--missing-ok").json()
    assert answer == {"key": "nope", "deleted": False, "scope": None}
    done = cli("--json", "wm", "--session", "run-2", "delete", "a", "--missing-ok").json()
    assert (done["key"], done["deleted"], done["scope"]) == ("a", True, "session")
    _refused(cli, db, "wm", "--session", "run-2", "delete", "a", field="working-memory key")


def test_wm_task_if_exists_never_starts_an_unknown_task(cli, db: Path) -> None:  # noqa: ANN001
    cli("wm", "--session", "run-3", "set", "a", "1", now=T0)
    before = folder_digest(db)
    skipped = cli("wm", "--session", "run-3", "task", "--progress", "50", "--if-exists", now=T0)
    assert (skipped.code, skipped.out) == (0, "")
    assert skipped.err == "no task state in this session: nothing updated (--if-exists)\n"
    assert folder_digest(db) == before
    assert cli("--json", "wm", "--session", "run-3", "task").json() is None
    cli("wm", "--session", "run-3", "task", "--id", "build", "--total", "4", now=T0)
    moved = cli("--json", "wm", "--session", "run-3", "task", "--step", "2", "--if-exists")
    assert (moved.json()["task_id"], moved.json()["progress_percent"]) == ("build", 50.0)


def test_a_session_id_of_your_own_can_have_a_project(cli, db: Path) -> None:  # noqa: ANN001
    cli("wm", "set", "deploy", "friday", "--scope", "project:web", now=T0)
    # Working memory made the session first (implicit, no project): it sees no project key.
    cli("wm", "--session", "run-42", "set", "plan", "ship", now=T0)
    assert cli("wm", "--session", "run-42", "get", "deploy").code == 2
    started = cli("--json", "session", "start", "--id", "run-42", "--project", "web", now=T0)
    assert started.code == 0, started.err
    record = started.json()
    assert (record["id"], record["project"], record["implicit"]) == ("run-42", "web", False)
    assert cli("wm", "--session", "run-42", "get", "deploy").out == "friday\n"
    assert cli("wm", "--session", "run-42", "get", "plan").out == "ship\n"  # kept
    # The same start again is no error; another project is refused, the store untouched.
    again = cli("session", "start", "--id", "run-42", "--project", "web", now=T0)
    assert (again.code, again.out) == (0, "run-42\n")
    _refused(cli, db, "session", "start", "--id", "run-42", "--project", "api", field="project")
    # A new id of your own starts a session with it.
    fresh = cli("--json", "session", "start", "--id", "run-43", "--project", "web").json()
    assert (fresh["id"], fresh["implicit"]) == ("run-43", False)
    assert cli("wm", "--session", "run-43", "get", "deploy").out == "friday\n"
    _refused(cli, db, "session", "start", "--id", "bad id!", field="session")
