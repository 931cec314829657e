"""The workbench writes as every door does: the same operation, the same record, the
same audit entry.

One scenario of the writes the workbench makes (sessions, working memory, lessons,
rules, slots, checkpoints, review and its decisions, work items, forgetting) runs on
three copies of one empty store at one clock: through the workbench's service (no
screen: what a pane's write runs), through the Python API and through the CLI, each
as the person holding the curator key. Every answer, every stored record and every
audit entry must match, once ids are numbered and the door's own name (``tui``,
``api``, ``cli``) is read as one.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memwork import Memory
from memwork.core.base.clock import parse_instant
from memwork.core.base.errors import MemworkError, UserError
from memwork.core.ops.operations import by_name
from memwork.core.storage.store import Store
from memwork.tui.service import MemoryService
from tests.conftest import curator_args
from tests.core.ops.test_door_parity import Ref, cli_argv, normalise, ref
from tests.tui.conftest import DEMO_NOW

Call = Callable[[str, dict[str, Any]], Any]
DOOR_NAMES = ("tui", "api", "cli")

#: (label, operation, parameters): the writes the workbench's panes make.
SCENARIO: list[tuple[str, str, dict[str, Any]]] = [
    ("ses", "start_session", {"agent": "coder", "project": "api", "title": "canary"}),
    ("obs", "observe", {"session": ref("ses", "id"), "text": "checked it", "tags": ["ops"]}),
    ("obs2", "observe", {"session": ref("ses", "id"), "text": "late note", "kind": "decision"}),
    ("wm", "wm_set", {"session": ref("ses", "id"), "key": "pods", "value": "3", "ttl": 60.0}),
    ("task", "wm_task", {"session": ref("ses", "id"), "task_id": "deploy", "step": 1, "total": 4}),
    ("scratch", "scratch_add", {"session": ref("ses", "id"), "text": "try the canary"}),
    ("wmc", "create_wm_checkpoint", {"session": ref("ses", "id"), "description": "before"}),
    ("wm_del", "wm_delete", {"session": ref("ses", "id"), "key": "pods"}),
    ("wmr", "restore_wm_checkpoint", {"session": ref("ses", "id"), "checkpoint": ref("wmc", "id")}),
    ("shared", "wm_set", {"session": None, "key": "region", "value": "eu", "scope": "project:api"}),
    ("shared_del", "wm_delete", {"session": None, "key": "region", "scope": "project:api"}),
    ("end", "end_session", {"session": ref("ses", "id"), "summary": "rolled out"}),
    ("l1", "add_lesson", {"text": "Canary every deploy", "tags": ["ops"], "confidence": 0.6}),
    ("l2", "add_lesson", {"text": "Roll back on a failed health check"}),
    ("l_again", "add_lesson", {"text": "canary every deploy"}),
    ("up", "reinforce_lesson", {"lesson": ref("l1", "id")}),
    ("down", "weaken_lesson", {"lesson": ref("l2", "id")}),
    ("pin", "pin_lesson", {"lesson": ref("l2", "id")}),
    ("unpin", "unpin_lesson", {"lesson": ref("l2", "id")}),
    ("forget", "forget_lesson", {"lesson": ref("l2", "id")}),
    ("unforget", "unforget_lesson", {"lesson": ref("l2", "id")}),
    ("unforget_twice", "unforget_lesson", {"lesson": ref("l2", "id")}),
    ("edit", "edit_lesson", {"lesson": ref("l1", "id"), "text": "Canary every deploy first"}),
    ("rule", "add_rule", {"text": "[AVOID] skipping the canary"}),
    ("rule_off", "deactivate_rule", {"rule": ref("rule", "id")}),
    ("rule_on", "activate_rule", {"rule": ref("rule", "id")}),
    ("persona", "create_slot", {"label": "persona", "limit": 200, "description": "who"}),
    ("notes", "create_slot", {"label": "notes"}),
    ("set", "set_slot", {"label": "persona", "text": "A careful deployer"}),
    ("too_long", "set_slot", {"label": "persona", "text": "x" * 201}),
    ("limit", "set_slot", {"label": "persona", "text": "A careful deployer", "limit": 100}),
    ("move", "move_slot", {"label": "notes", "position": 0}),
    ("lock", "lock_slot", {"label": "persona"}),
    ("locked", "set_slot", {"label": "persona", "text": "changed"}),
    ("unlock", "unlock_slot", {"label": "persona"}),
    ("point", "create_checkpoint", {"description": "by hand"}),
    ("del_slot", "delete_slot", {"label": "notes"}),
    ("work", "action_create", {"title": "Ship the canary", "priority": 2}),
    ("work_done", "action_update", {"action": ref("work", "id"), "status": "done"}),
    ("review_on", "set_config", {"key": "review", "value": "on"}),
    ("own", "add_lesson", {"text": "Watch the error budget"}),
    ("proposal", "agent:add_lesson", {"text": "Agents propose this"}),
    ("proposal2", "agent:add_lesson", {"text": "Agents propose that too"}),
    ("proposal3", "agent:add_lesson", {"text": "Agents propose a third"}),
    ("approve", "approve_proposal", {"proposal": ref("proposal", "id")}),
    ("reject", "reject_proposal", {"proposal": ref("proposal2", "id"), "why": "vague"}),
    ("merge_p", "merge_proposal", {"proposal": ref("proposal3", "id"), "lesson": ref("l1", "id")}),
    ("review_off", "set_config", {"key": "review", "value": "off"}),
    (
        "merge",
        "merge_lessons",
        {"keep": ref("l1", "id"), "absorb": [ref("own", "id")]},
    ),
    ("forget_obs", "delete_observations", {"observations": [ref("obs2", "id")]}),
    ("forget_ses", "delete_session", {"session": ref("ses", "id")}),
    ("doomed", "add_lesson", {"text": "Say the pager code aloud on calls"}),
    ("del_lesson", "delete_lessons", {"lessons": [ref("doomed", "id")]}),
    ("undo_point", "restore_checkpoint", {"checkpoint": ref("point", "id")}),
    ("del_point", "delete_checkpoint", {"checkpoint": ref("point", "id")}),
]

#: What each store holds afterwards, read the same way from every copy.
READS: list[tuple[str, dict[str, Any]]] = [
    ("list_lessons", {"all": True}),
    ("list_rules", {"all": True}),
    ("list_slots", {}),
    ("list_sessions", {}),
    ("list_checkpoints", {}),
    ("list_proposals", {"all": True}),
    ("list_actions", {}),
    ("list_config", {}),
    ("history", {"limit": 500}),
]


def _resolve(value: Any, answers: dict[str, Any]) -> Any:
    if isinstance(value, Ref):
        found = answers[value.step]
        for key in value.path:
            found = found[key]
        return found
    if isinstance(value, list):
        return [_resolve(v, answers) for v in value]
    return value


def _observation(answers: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """``delete_observations`` names ``session/observation``."""
    if "observations" in params:
        session = answers["ses"]["id"]
        return {"observations": [f"{session}/{o}" for o in params["observations"]]}
    return params


def _agent(db: Path) -> Memory:
    """An agent on its own door, without the key: its writes wait for review."""
    clock = parse_instant(DEMO_NOW)
    return Memory(db, agent="coder", clock=lambda: clock)


def workbench_door(db: Path) -> Call:
    service = MemoryService(Store(db))

    def call(name: str, params: dict[str, Any]) -> Any:
        try:
            return service.write(name, **params)
        except MemworkError as exc:
            return {"error": str(exc)}

    return call


def api_door(db: Path) -> Call:
    clock = parse_instant(DEMO_NOW)
    person = Memory(db, clock=lambda: clock, curator_key=curator_args()[1])

    def call(name: str, params: dict[str, Any]) -> Any:
        try:
            return getattr(person, name)(**params)
        except UserError as exc:
            return {"error": str(exc)}

    return call


def cli_door(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[bytes]
) -> Call:
    from memwork.core.doors.cli.main import main

    def call(name: str, params: dict[str, Any]) -> Any:
        argv = ["--db", str(db), *curator_args(), "--json", *cli_argv(by_name(name), params)]
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b""), encoding="utf-8"))
        capsys.readouterr()
        code = main(argv)
        sys.stdout.flush()
        captured = capsys.readouterr()
        if code:
            return {"error": captured.err.decode().strip()}
        return json.loads(captured.out.decode())

    return call


def _run(call: Call, db: Path) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    for label, name, params in SCENARIO:
        given = _observation(answers, {k: _resolve(v, answers) for k, v in params.items()})
        if name.startswith("agent:"):
            answers[label] = getattr(_agent(db), name.removeprefix("agent:"))(**given)
        else:
            answers[label] = call(name, given)
    # The stores afterwards, read alike from each copy.
    clock = parse_instant(DEMO_NOW)
    reader = Memory(db, clock=lambda: clock, curator_key=curator_args()[1])
    stored = {name: getattr(reader, name)(**params) for name, params in READS}
    return {"answers": answers, "stored": stored}


def _one_door(value: Any) -> Any:
    """Each door's own name (the audit's actor, a decision's maker) read as one."""
    if isinstance(value, dict):
        return {k: _one_door(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_one_door(v) for v in value]
    if isinstance(value, str) and value in DOOR_NAMES:
        return "<door>"
    return value


def _error_text(value: Any) -> Any:
    """An error as its message (the API and the CLI say ``memwork:`` first; the CLI may
    add a hint line)."""
    if isinstance(value, dict) and set(value) == {"error"}:
        return {"error": value["error"].splitlines()[0].removeprefix("memwork: ")}
    return value


def test_the_workbench_writes_as_the_api_and_the_cli_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    results = {
        "tui": _run(workbench_door(tmp_path / "tui"), tmp_path / "tui"),
        "api": _run(api_door(tmp_path / "api"), tmp_path / "api"),
        "cli": _run(cli_door(tmp_path / "cli", monkeypatch, capsysbinary), tmp_path / "cli"),
    }
    seen = {door: normalise(_one_door(result)) for door, result in results.items()}
    for door in ("api", "cli"):
        for label, _, _ in SCENARIO:
            assert _error_text(seen[door]["answers"][label]) == _error_text(
                seen["tui"]["answers"][label]
            ), (door, label)
        for name, _ in READS:
            assert seen[door]["stored"][name] == seen["tui"]["stored"][name], (door, name)
    # The scenario means something: refusals where it expects them, writes elsewhere.
    answers = results["tui"]["answers"]
    refused = {label for label, value in answers.items() if "error" in (value or {})}
    assert refused == {"unforget_twice", "too_long", "locked"}
    assert answers["proposal"]["proposed"] and not answers["own"].get("proposed")
    audit = results["tui"]["stored"]["history"]
    assert {entry["actor"] for entry in audit} == {"tui", "api:coder"}
