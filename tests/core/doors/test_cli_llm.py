"""``consolidate``, ``reflect`` and ``crystallize`` through the CLI with a model endpoint
(a real chat-completions server on a loopback port) and without one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chat_server import ChatServer, Reply, completion
from tests.conftest import curator_args, folder_digest, stored_text

NOW = "2026-11-01T12:00:00Z"
KEY = "gsk_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98765432AbCdEf"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    """A chat server the store's CLI is pointed at, with a Groq-style key in the
    environment; failing calls retry once without waiting long."""
    served = ChatServer()
    monkeypatch.setenv("MEMWORK_LLM_URL", served.url.removesuffix("/chat/completions"))
    monkeypatch.setenv("MEMWORK_LLM_MODEL", "llama-test")
    monkeypatch.setenv("GROQ_API_KEY", KEY)
    monkeypatch.setenv("MEMWORK_LLM_RETRIES", "1")
    monkeypatch.setenv("MEMWORK_LLM_TIMEOUT", "0.5")
    monkeypatch.setattr("memwork.core.services.llm.client.BACKOFF", 0.01)
    yield served
    served.close()


def _record(cli, n: int) -> None:  # noqa: ANN001
    episodes = [
        {"task_id": f"t{i}", "score": 0.9, "summary": f"shipped {i}", "mistakes": [f"m{i}"]}
        for i in range(n)
    ]
    assert cli("record-episode", stdin=json.dumps(episodes), now=NOW).code == 0


def _session(cli, *observations: tuple[str, str], project: str = "") -> str:  # noqa: ANN001
    args = ["session", "start", "--title", "rollout"] + (["--project", project] if project else [])
    sid = cli(*args, now=NOW).out.strip()
    for kind, text in observations:
        assert cli("observe", "--session", sid, "--kind", kind, text, now=NOW).code == 0
    return sid


def _global_rules(cli) -> list[str]:  # noqa: ANN001
    return [r["text"] for r in cli("--json", "rule", "list", "--scope", "global", now=NOW).json()]


# -- consolidate --------------------------------------------------------------------------
def test_consolidate_asks_the_model_about_the_last_30_episodes(cli, server: ChatServer) -> None:  # noqa: ANN001
    _record(cli, 35)
    server.script(completion('["Run the tests first", "Keep diffs small"]'))
    result = cli("consolidate", now=NOW)
    assert result.code == 0, result.err
    assert result.out == (
        "llm consolidation: 2 new global rules\n"
        "  + [CONSOLIDATED] Run the tests first\n"
        "  + [CONSOLIDATED] Keep diffs small\n"
    )
    asked = server.requests[0]["body"]["messages"][-1]["content"]
    # The episodic library's prompt over the last 30 episodes (t5 to t34).
    assert asked.startswith("You are analyzing an AI agent's performance")
    assert "task=t4 " not in asked and "task=t5 " in asked and "task=t34 " in asked
    assert _global_rules(cli)[-2:] == [
        "[CONSOLIDATED] Run the tests first",
        "[CONSOLIDATED] Keep diffs small",
    ]
    server.script(completion('["Run the tests first"]'))
    again = cli("--json", "consolidate", now=NOW).json()
    assert again == {
        "added": [],
        "engine": "llm",
        "fallback_reason": None,
        "proposed": [],
        "source": "llm",
    }


def test_without_an_endpoint_consolidate_is_the_heuristic_and_says_so(cli) -> None:  # noqa: ANN001
    _record(cli, 1)
    report = cli("--json", "consolidate", now=NOW).json()
    assert (report["engine"], report["source"]) == ("heuristic", "heuristic")
    assert cli("consolidate", now=NOW).out.startswith("heuristic consolidation: ")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("replies", "said"),
    [
        ([Reply(503, "down")], "answered HTTP 503: down (2 attempts)"),
        ([Reply(400, '{"error": {"message": "unknown model"}}')], "HTTP 400: unknown model"),
        ([Reply(200, "", delay=2.0)], "timed out after 0.5 s (2 attempts)"),
        ([completion('{"summary": 3}')], "answered malformed"),  # no rules nor summary
        ([Reply(200, "{}")], "answered malformed"),
    ],
)
def test_a_failing_endpoint_is_a_clear_error_and_writes_nothing(
    cli,
    db: Path,
    server: ChatServer,
    replies: list[Reply],
    said: str,  # noqa: ANN001
) -> None:
    _record(cli, 3)
    sid = _session(cli, ("decision", "Canary each deploy"))
    server.script(*replies)
    before = folder_digest(db)
    for verb in (("consolidate",), ("reflect", sid), ("crystallize", sid)):
        result = cli(*verb, now=NOW)
        assert result.code == 1 and result.out == "", verb
        (line,) = result.err.strip().splitlines()
        assert line.startswith("memwork: model endpoint http://127.0.0.1:") and said in line
        assert line.endswith("nothing was written") and KEY not in line
    assert folder_digest(db) == before


def test_the_key_is_never_stored_printed_or_exported(
    cli,
    db: Path,
    server: ChatServer,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    _record(cli, 2)
    sid = _session(cli, ("decision", "Canary each deploy"))
    # A model (or a proxy) that echoes the key back in what it writes.
    server.script(completion(json.dumps([f"Use key {KEY} for deploys"])))
    outputs = [cli("consolidate", now=NOW)]
    server.script(completion(json.dumps([{"text": f"Auth with {KEY}"}])))
    outputs.append(cli("--json", "reflect", sid, now=NOW))
    server.script(completion(f"Deployed with {KEY}."))
    outputs.append(cli("crystallize", sid, now=NOW))
    server.script(Reply(401, json.dumps({"error": {"message": f"bad key {KEY}"}})))
    outputs.append(cli("consolidate", now=NOW))
    assert [r.code for r in outputs] == [0, 0, 0, 1]
    outputs.append(cli("export", str(tmp_path / "all.json"), now=NOW))
    outputs.append(cli("--json", "history", "--limit", "100", now=NOW))
    for result in outputs:
        assert KEY not in result.out and KEY not in result.err
    assert KEY not in (tmp_path / "all.json").read_text()
    assert KEY not in stored_text(db)
    assert all(KEY not in json.dumps(r["body"]) for r in server.requests)


# -- reflect ------------------------------------------------------------------------------
def test_reflect_writes_the_models_lessons(cli, server: ChatServer) -> None:  # noqa: ANN001
    sid = _session(
        cli, ("note", "deploy failed twice"), ("note", "canary caught it"), project="api"
    )
    server.script(completion('[{"text": "Canary every deploy", "confidence": 0.8}]'))
    result = cli("--json", "reflect", sid, now=NOW).json()
    assert (result["engine"], result["fallback_reason"], result["session"]) == ("llm", None, sid)
    (lesson,) = result["lessons"]
    assert (lesson["text"], lesson["proposed"]) == ("Canary every deploy", False)
    shown = cli("--json", "lesson", "show", lesson["id"], now=NOW).json()
    assert (shown["scope"], shown["tags"], shown["confidence"]) == (
        "project:api",
        ["reflected"],
        0.8,
    )
    asked = server.requests[0]["body"]["messages"][-1]["content"]
    assert "- [note] deploy failed twice\n- [note] canary caught it" in asked


def test_reflect_without_an_endpoint_uses_the_heuristic_and_says_so(cli) -> None:  # noqa: ANN001
    sid = _session(cli, ("decision", "Canary each deploy"), ("error", "timeout on push"))
    result = cli("reflect", sid, now=NOW)
    assert result.code == 0
    assert result.err == (
        "memwork: no model endpoint configured (MEMWORK_LLM_URL is not set); used the heuristic\n"
    )
    lines = result.out.splitlines()
    assert lines[0] == f"heuristic reflection on {sid}: 2 lessons"
    assert lines[1].endswith("Canary each deploy") and lines[2].endswith("Avoid: timeout on push")


def test_reflect_needs_observations(cli, db: Path, server: ChatServer) -> None:  # noqa: ANN001
    sid = _session(cli)
    before = folder_digest(db)
    for verb in ("reflect", "crystallize"):
        result = cli(verb, sid, now=NOW)
        assert result.code == 2 and "has no observations" in result.err
        missing = cli(verb, "ses_nope", now=NOW)
        assert missing.code == 2 and "not found" in missing.err
    assert folder_digest(db) == before and server.requests == []


def test_under_review_what_a_model_writes_waits_for_a_person(cli, server: ChatServer) -> None:  # noqa: ANN001
    _record(cli, 2)
    sid = _session(cli, ("note", "deploy failed"), ("note", "rolled back"))
    cli("config", "set", "review", "on", now=NOW)
    rules_before = _global_rules(cli)
    server.script(completion('["Roll back fast"]'))
    consolidated = cli("--json", "consolidate", now=NOW).json()
    assert consolidated["added"] == [] and len(consolidated["proposed"]) == 1
    server.script(completion('["Roll back fast when errors double"]'))
    reflected = cli("--json", "reflect", sid, now=NOW).json()
    assert [lesson["proposed"] for lesson in reflected["lessons"]] == [True]
    server.script(completion("The deploy failed and was rolled back."))
    crystal = cli("--json", "crystallize", sid, now=NOW).json()
    assert crystal["proposed"] is True
    assert cli("--json", "session", "show", sid, now=NOW).json()["summary"] == ""
    assert _global_rules(cli) == rules_before
    assert cli("--json", "lesson", "list", now=NOW).json() == []

    pending = {p["id"]: p for p in cli("--json", "review", "list", now=NOW).json()}
    assert set(pending) == {
        consolidated["proposed"][0],
        reflected["lessons"][0]["id"],
        crystal["proposal"],
    }
    for proposal in pending:
        approved = cli(*curator_args(), "review", "approve", proposal, now=NOW)
        assert approved.code == 0, approved.err
    assert "[CONSOLIDATED] Roll back fast" in _global_rules(cli)
    lessons = cli("--json", "lesson", "list", now=NOW).json()
    assert [lesson["content"] for lesson in lessons] == ["Roll back fast when errors double"]
    shown = cli("--json", "session", "show", sid, now=NOW).json()
    assert (shown["summary"], shown["status"]) == (
        "The deploy failed and was rolled back.",
        "active",
    )


# -- crystallize --------------------------------------------------------------------------
def test_crystallize_writes_the_summary_and_keeps_the_session_as_it_was(
    cli,
    server: ChatServer,  # noqa: ANN001
) -> None:
    sid = _session(cli, ("note", "started the rollout"), ("decision", "canary first"))
    cli("session", "end", sid, now=NOW)
    server.script(completion("```\nRolled out with a canary first.\n```"))
    result = cli("crystallize", sid, now=NOW)
    assert result.code == 0, result.err
    assert result.out == f"llm summary of {sid}:\nRolled out with a canary first.\n"
    shown = cli("--json", "session", "show", sid, now=NOW).json()
    assert (shown["summary"], shown["status"]) == ("Rolled out with a canary first.", "ended")
    entry = cli("--json", "history", "--record", sid, "--limit", "1", now=NOW).json()[0]
    assert entry["action"] == "summarize"


def test_crystallize_without_an_endpoint_summarises_plainly(cli) -> None:  # noqa: ANN001
    sid = _session(cli, ("decision", "canary first"), ("error", "push timed out"))
    result = cli("--json", "crystallize", sid, now=NOW).json()
    assert result["engine"] == "heuristic" and "MEMWORK_LLM_URL" in result["fallback_reason"]
    assert result["summary"] == (
        "2 observations (1 decision, 1 error). Decided: canary first. "
        "Errors: push timed out. Last: push timed out"
    )


def test_session_summarize_sets_a_summary_by_hand(cli, db: Path) -> None:  # noqa: ANN001
    sid = _session(cli)
    assert cli("session", "summarize", sid, "Nothing happened.", now=NOW).code == 0
    assert cli("--json", "session", "show", sid, now=NOW).json()["summary"] == "Nothing happened."
    before = folder_digest(db)
    empty = cli("session", "summarize", sid, "  ", now=NOW)
    assert empty.code == 2 and "summary: must not be empty" in empty.err
    assert folder_digest(db) == before


# -- the other doors ----------------------------------------------------------------------
def test_the_python_api_asks_the_model_too(tmp_path: Path, server: ChatServer) -> None:
    from memwork import Memory

    memory = Memory(tmp_path / "api")
    session = memory.start_session(title="rollout")["id"]
    memory.observe(session, "rolled back after the canary failed")
    server.script(completion('[{"text": "Watch the canary", "confidence": 0.7}]'))
    assert memory.reflect(session)["engine"] == "llm"
    server.script(completion("Rolled back."))
    assert memory.crystallize(session)["summary"] == "Rolled back."
    assert memory.get_session(session)["summary"] == "Rolled back."


@pytest.mark.slow
def test_the_http_door_reports_a_failing_model_without_the_key(
    tmp_path: Path, server: ChatServer
) -> None:
    import httpx

    from tests.conftest import python_env
    from tests.http_server import Served

    env = python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0", MEMWORK_LLM_RETRIES="0")
    served = Served(tmp_path / "db", env)
    try:
        server.script(completion('["Canary first"]'))
        ok = httpx.post(f"{served.url}/v1/consolidate", json={}, timeout=30)
        assert ok.status_code == 200 and ok.json()["added"] == ["[CONSOLIDATED] Canary first"]
        server.script(Reply(403, json.dumps({"error": f"key {KEY} is not allowed"})))
        failed = httpx.post(f"{served.url}/v1/consolidate", json={}, timeout=30)
        assert failed.status_code == 503 and failed.json()["kind"] == "unavailable"
        assert "HTTP 403: key [key] is not allowed" in failed.json()["error"]
        assert KEY not in failed.text
    finally:
        code, rest = served.stop()
    assert code == 0 and KEY not in served.banner + rest
