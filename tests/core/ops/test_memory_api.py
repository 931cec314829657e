"""`from memwork import Memory`: the Python API prints what the CLI prints, on the same store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memwork import Memory
from memwork.core.base import ids
from memwork.core.base.errors import CoercionWarning, InvalidInput, NotFound
from tests.conftest import folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOW = "2026-11-01T12:00:00Z"
EPISODE = {
    "task_id": "deploy-api",
    "score": 0.3,
    "steps": 9,
    "summary": "Rolled back worker-25 after failed health checks",
    "mistakes": ["Skipped the canary stage"],
    "mistake_cards": [{"mistake_type": "no_canary", "lesson": "Canary first.", "evidence": "5xx"}],
}
GOOD = {**EPISODE, "score": 0.95, "successes": ["Canaried for fifteen minutes"], "mistakes": []}

# One agent's day, twice: (CLI argv, stdin, what the CLI prints -> comparable, Memory call).
Step = tuple[list[str], Any, Callable[[str], Any], Callable[[Memory], Any]]


def _text(out: str) -> str:
    return out


def _line(out: str) -> str:
    return out.strip()


def _json(out: str) -> Any:
    return json.loads(out)


STEPS: list[Step] = [
    (["record-episode"], EPISODE, _line, lambda m: m.record_episode(EPISODE)),
    (["record-episode"], [GOOD, EPISODE], str.split, lambda m: m.record_episodes([GOOD, EPISODE])),
    (["context", "--task", "deploy-api"], None, _text, lambda m: m.context("deploy-api") + "\n"),
    (
        ["context", "--task", "deploy-api", "--format", "json", "--budget", "40"],
        None,
        _json,
        lambda m: m.context("deploy-api", budget=40, format="json"),
    ),
    (
        ["--json", "lesson", "add", "Canary every deploy", "--scope", "project:api", "--tag", "x"],
        None,
        _json,
        lambda m: m.add_lesson("Canary every deploy", scope="project:api", tags=["x"]),
    ),
    (["--json", "lesson", "add", "Canary every deploy!", "--scope", "project:api"], None, _json,
     lambda m: m.add_lesson("Canary every deploy!", scope="project:api")),
    (["context", "--project", "api"], None, _text, lambda m: m.context(project="api") + "\n"),
    (["--json", "lesson", "list"], None, _json, lambda m: m.list_lessons()),
    (["--json", "lesson", "list", "--all"], None, _json, lambda m: m.list_lessons(all=True)),
    (["--json", "session", "start", "--agent", "a1", "--project", "api"], None, _json,
     lambda m: m.start_session(agent="a1", project="api")),
    (["--json", "slot", "set", "persona", "Be terse.", "--description", "tone"], None, _json,
     lambda m: m.set_slot("persona", "Be terse.", description="tone")),
    (["--json", "slot", "append", "persona", "Cite files."], None, _json,
     lambda m: m.append_slot("persona", "Cite files.")),
    (["--json", "slot", "replace", "persona", "terse", "brief"], None, _json,
     lambda m: m.replace_in_slot("persona", "terse", "brief")),
    (["--json", "slot", "show", "persona"], None, _json, lambda m: m.get_slot("persona")),
    (["--json", "slot", "list"], None, _json, lambda m: m.list_slots()),
    (["--json", "search", "worker-25", "--limit", "3"], None, _json,
     lambda m: m.search("worker-25", limit=3)),
    (["--json", "search", "canary", "--kind", "lesson", "--kind", "card"], None, _json,
     lambda m: m.search("canary", kinds=["lesson", "card"])),
    (["stats"], None, _json, lambda m: m.stats()),
]  # fmt: skip


def _wm_steps(sid: str) -> list[Step]:
    s = ["wm", "--session", sid]
    return [
        (["--json", *s, "set", "branch", "main", "--ttl", "60"], None, _json,
         lambda m: m.wm_set(sid, "branch", "main", ttl=60)),
        (["--json", *s, "get", "branch"], None, _json, lambda m: m.wm_get(sid, "branch")),
        (["--json", *s, "list"], None, _json, lambda m: m.wm_list(sid)),
        (["--json", *s, "task", "--id", "deploy-api", "--step", "1", "--total", "4"], None, _json,
         lambda m: m.wm_task(sid, task_id="deploy-api", step=1, total=4)),
        (["--json", *s, "task"], None, _json, lambda m: m.wm_task(sid)),
        (["--json", *s, "scratch", "add", "check canary"], None, _json,
         lambda m: m.scratch_add(sid, "check canary")),
        (["--json", *s, "scratch", "list"], None, _json, lambda m: m.scratch_list(sid)),
        (["--json", *s, "delete", "branch"], None, _json, lambda m: m.wm_delete(sid, "branch")),
        (["--json", "observe", "--session", sid, "--kind", "tool", "ran it"], None, _json,
         lambda m: m.observe(sid, "ran it", kind="tool")),
        (["--json", "session", "end", sid, "--summary", "done"], None, _json,
         lambda m: m.end_session(sid, summary="done")),
        (["--json", "history", "--table", "lessons"], None,
         lambda o: [{**e, "actor": "?"} for e in json.loads(o)],
         lambda m: [{**e, "actor": "?"} for e in m.history(table="lessons")]),
    ]  # fmt: skip


def _run_cli(cli, steps: list[Step]) -> list[Any]:  # noqa: ANN001
    results = []
    for argv, stdin, parse, _ in steps:
        done = cli(*argv, stdin=json.dumps(stdin) if stdin is not None else None, now=NOW)
        assert done.code == 0, (argv, done.err)
        results.append(parse(done.out))
    return results


def _run_api(memory: Memory, steps: list[Step]) -> list[Any]:
    return [call(memory) for _, _, _, call in steps]


def test_memory_returns_what_the_cli_prints_for_the_same_store_and_clock(
    tmp_path: Path,
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The same day twice from the same seed: once through the CLI, once through Memory.
    ids.seed(7)
    by_cli = _run_cli(cli, STEPS)
    cli_sid = by_cli[9]["id"]
    by_cli += _run_cli(cli, _wm_steps(cli_sid))

    monkeypatch.setenv("MEMWORK_NOW", NOW)
    ids.seed(7)
    memory = Memory(tmp_path / "api")
    by_api = _run_api(memory, STEPS)
    assert by_api[9]["id"] == cli_sid  # same seed, same ids
    by_api += _run_api(memory, _wm_steps(cli_sid))

    for step, (got, expected) in enumerate(zip(by_api, by_cli, strict=True)):
        assert got == expected, (step, got, expected)
    # Sanity: the day did what it says.
    assert "## Recent deploy-api episodes" in by_api[2]
    assert by_api[5]["action"] == "kept-both"  # a near-duplicate: kept, never folded in
    assert "Canary every deploy" in by_api[6]
    assert by_api[15][0]["title"].endswith("Rolled back worker-25 after failed health checks")


def test_memory_sees_cli_writes_and_the_cli_sees_memory_writes(
    db: Path,
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", NOW)
    memory = Memory(db, agent="agent-7")
    assert memory.context("deploy-api") == ""
    cli("record-episode", stdin=json.dumps(EPISODE), now=NOW)
    assert "Rolled back worker-25" in memory.context("deploy-api")  # no reopening needed
    lesson = memory.add_lesson("Read the runbook first")
    assert lesson["id"] in cli("lesson", "list", now=NOW).out
    actors = {e["actor"] for e in cli("--json", "history", now=NOW).json()}
    assert actors == {"cli", "api:agent-7"}


def test_memory_finds_the_store_like_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMWORK_DB", str(tmp_path / "from-env"))
    assert Memory().path == tmp_path / "from-env"
    monkeypatch.delenv("MEMWORK_DB")
    assert Memory().path == tmp_path / "xdg-data" / "memwork"  # the user data dir
    monkeypatch.setenv("MEMWORK_AGENT", "planner")
    assert Memory(tmp_path / "x").actor == "api:planner"


def test_bad_input_raises_the_clis_message_and_writes_nothing(
    db: Path,
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMWORK_NOW", NOW)
    memory = Memory(db)
    memory.set_slot("persona", "Be terse.")
    before = folder_digest(db)
    bad = {**EPISODE, "score": 1.5}
    expected = cli("record-episode", stdin=json.dumps(bad), now=NOW).err.strip()
    with pytest.raises(InvalidInput) as caught:
        memory.record_episode(bad)
    assert str(caught.value) == expected
    with pytest.raises(NotFound) as missing:
        memory.reinforce_lesson("les_nope")
    assert str(missing.value) == cli("lesson", "reinforce", "les_nope").err.strip()
    with pytest.raises(InvalidInput):
        memory.search("x", kinds=["bogus"])
    with pytest.raises(InvalidInput):
        memory.context(format="xml")
    assert folder_digest(db) == before


def test_the_context_path_stays_light(tmp_path: Path) -> None:
    """Memory.context imports no pydantic, rich or textual: an agent's step stays cheap."""
    import subprocess
    import sys

    from tests.conftest import python_env

    probe = (
        "import sys; from memwork import Memory; "
        f"Memory({str(tmp_path / 's')!r}).context('t'); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'pydantic', 'rich'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_agent_writes_through_the_api_wait_for_review(tmp_path: Path) -> None:
    from memwork.core.ledger import config

    memory = Memory(tmp_path / "db", agent="harness")
    memory.set_slot("persona", "You are terse.")
    config.set_value(memory.store, "review", "on", now=memory.now(), actor="tui")
    proposed = memory.add_lesson("Pin the image digest")
    assert proposed["proposed"] is True and proposed["proposed_by"] == "api:harness"
    replaced = memory.replace_in_slot("persona", "terse", "brief")
    assert replaced["proposed"] is True and replaced["after"] == "You are brief."
    assert memory.get_slot("persona")["content"] == "You are terse."
    assert memory.list_lessons() == []
    assert "Pin the image digest" not in memory.context()
    config.set_value(memory.store, "review", "off", now=memory.now(), actor="tui")
    assert memory.replace_in_slot("persona", "terse", "brief")["replaced"] == 1


def test_the_api_context_records_injections_when_asked(tmp_path: Path) -> None:
    from memwork.core.ledger import audit, config

    memory = Memory(tmp_path / "db")
    memory.set_slot("persona", "You are terse.")
    config.set_value(memory.store, "context_log", "on", now=memory.now(), actor="tui")
    assert "You are terse." in memory.context()
    with memory.store.reading():
        entries = [e for e in audit.entries(memory.store) if e["action"] == "inject"]
    assert [(e["table"], e["actor"]) for e in entries] == [("slots", "api")]


def test_what_the_episodic_library_accepts_is_recorded_with_a_warning(db: Path) -> None:  # noqa: ANN001
    memory = Memory(db)
    with pytest.warns(CoercionWarning) as said:
        (eid,) = memory.record_episodes([{"task_id": "t", "mistake_cards": ["oops"]}])
    assert [str(w.message) for w in said if w.category is CoercionWarning] == [
        "memwork: item 1: score: missing; recorded as 0.0, as the episodic library reads it",
        "memwork: item 1: mistake_cards.0: not an object (a str); skipped, as the episodic "
        "library skips it",
    ]
    assert eid.startswith("ep_") and memory.stats()["tasks"]["t"]["mean_score"] == 0.0


def test_every_operation_is_a_typed_documented_method(tmp_path: Path) -> None:
    import inspect

    from memwork.core.ops.operations import door_ops

    for op in door_ops("api"):
        method = getattr(Memory, "record_episodes" if op.name == "record_episode" else op.name)
        assert method.__doc__ and len(method.__doc__) > 20, op.name
        hints = inspect.signature(method)
        assert hints.return_annotation is not inspect.Signature.empty, op.name
    memory = Memory(tmp_path / "s")
    memory.add_lesson("Canary every deploy")
    # Argument types are checked as every JSON door checks them: one line naming the field.
    with pytest.raises(InvalidInput, match=r"^memwork: limit: must be an integer \(got '3'\)$"):
        memory.search("canary", limit="3")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"^memwork: budget: must be >= 0 \(got -1\)$"):
        memory.context(budget=-1)
    hit = memory.search("canary")[0]
    assert memory.get_record(hit["id"])["record"]["content"] == "Canary every deploy"
