"""Every operation through every door, on the same store and clock: the same answers.

One scenario calls every operation the registry declares (but the CLI's own
commands: import, export, doctor, copy, mcp, serve), each door on its own copy
of the same store with the same clock (``MEMWORK_NOW``) and the same agent id:
the CLI (in process, its arguments made from the declaration), the Python API,
MCP over stdio, MCP over streamable HTTP and the JSON routes. A door that does
not offer an operation (deciding proposals is for people: CLI and Python only)
has that step done through the Python API on its store, so every store goes
through the same writes. Ids are random per store and the audit actor names the
door, so both are normalised before the answers are compared; every answer also
keeps the output schema its operation declares.
"""

from __future__ import annotations

import functools
import io
import json
import re
import sys
import warnings
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx2
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from memwork import Memory
from memwork.core.base.errors import CoercionWarning, UserError
from memwork.core.ops.operations import GROUPS, OPERATIONS, Op, by_name
from memwork.core.ops.shapes import SHAPES
from tests.conftest import curator_args, python_env
from tests.http_server import Served

NOW = "2026-11-01T12:00:00Z"
AGENT = "tester"
CLI_ONLY = {op.name for op in OPERATIONS if op.doors == ("cli",)}
#: Operations only the store's curator may call (core/ledger/curator.py).
DECISIONS = {"approve_proposal", "reject_proposal", "merge_proposal"}
DOORS = ("cli", "api", "mcp", "mcp-http", "http")


class Ref(NamedTuple):
    """A value taken from an earlier step's answer (at this door): ``step`` then keys."""

    step: str
    path: tuple[Any, ...]


def ref(step: str, *path: Any) -> Ref:
    return Ref(step, path)


EPISODE = {
    "task_id": "deploy-api",
    "score": 0.3,
    "steps": 9,
    "summary": "Rolled back worker-25 after the canary failed",
    "mistakes": ["Skipped the canary stage"],
    "mistake_cards": [
        {"mistake_type": "no_canary", "correct_decision": "canary", "lesson": "Canary first"},
        {"mistake_type": "rushed", "correct_decision": "wait", "lesson": "Wait for health"},
    ],
}
GOOD = {**EPISODE, "score": 0.95, "mistakes": [], "successes": ["Canaried for fifteen minutes"]}

#: (label, operation, parameters). Every operation but the CLI's own appears at least once.
CRASH = {
    "error_class": "TimeoutError",
    "fingerprint": "upload-stall",
    "message": "upload to s3 stalled",
    "task": "deploy-api",
    "phase": "UPLOAD",
    "exit_code": 124,
}
SCENARIO: list[tuple[str, str, dict[str, Any]]] = [
    ("empty", "context", {}),
    ("ep1", "record_episode", {"episode": EPISODE}),
    ("ep2", "record_episode", {"episodes": [GOOD, EPISODE]}),
    ("bad_ep", "record_episode", {"episode": {**EPISODE, "score": 2}}),
    ("loose_ep", "record_episode", {"episode": {"task_id": "deploy-api", "score": "0.4"}}),
    ("crash", "record_failure", {"report": CRASH}),
    ("crash_again", "record_failure", {"report": CRASH}),
    ("ctx", "context", {"task": "deploy-api"}),
    ("ctx_json", "context", {"task": "deploy-api", "format": "json", "budget": 60}),
    ("ctx_episodic", "context", {"task": "deploy-api", "style": "episodic"}),
    (
        "ctx_episodic_knobs",
        "context",
        {"task": "deploy-api", "style": "episodic", "max_rules": 1, "max_recent": 1},
    ),
    ("ctx_bad_knob", "context", {"task": "deploy-api", "max_rules": 2}),
    ("ses", "start_session", {"project": "api", "title": "canary rollout"}),
    (
        "obs",
        "observe",
        {"session": ref("ses", "id"), "text": "checked the canary", "tags": ["ops"]},
    ),
    ("sessions", "list_sessions", {}),
    ("session", "get_session", {"session": ref("ses", "id")}),
    ("wm1", "wm_set", {"session": ref("ses", "id"), "key": "pods", "value": "3", "ttl": 60.0}),
    ("wm2", "wm_set", {"session": ref("ses", "id"), "key": "branch", "value": "main"}),
    ("wm_get", "wm_get", {"session": ref("ses", "id"), "key": "pods"}),
    ("wm_list", "wm_list", {"session": ref("ses", "id")}),
    ("wm_gone", "wm_get", {"session": ref("ses", "id"), "key": "nope"}),
    ("wm_dflt", "wm_get", {"session": ref("ses", "id"), "key": "nope", "default": "none"}),
    ("wm_no_del", "wm_delete", {"session": ref("ses", "id"), "key": "nope", "missing_ok": True}),
    ("task_skip", "wm_task", {"session": "run-own", "progress": 5.0, "if_exists": True}),
    ("ses_own", "start_session", {"project": "api", "session": "run-own"}),
    ("task_none", "wm_task", {"session": ref("ses", "id")}),
    (
        "task",
        "wm_task",
        {"session": ref("ses", "id"), "task_id": "deploy-api", "step": 2, "total": 4},
    ),
    ("scratch", "scratch_add", {"session": ref("ses", "id"), "text": "canary looks fine"}),
    ("scratches", "scratch_list", {"session": ref("ses", "id")}),
    ("wmcp", "create_wm_checkpoint", {"session": ref("ses", "id"), "description": "before"}),
    ("wm_del", "wm_delete", {"session": ref("ses", "id"), "key": "branch"}),
    ("wmcps", "list_wm_checkpoints", {"session": ref("ses", "id")}),
    (
        "wm_restore",
        "restore_wm_checkpoint",
        {"session": ref("ses", "id"), "checkpoint": ref("wmcp", "id")},
    ),
    (
        "wm_cp_del",
        "delete_wm_checkpoint",
        {"session": ref("ses", "id"), "checkpoint": ref("wmcp", "id")},
    ),
    ("wm_keys", "wm_keys", {"session": ref("ses", "id"), "pattern": "b*"}),
    ("wm_exists", "wm_exists", {"session": ref("ses", "id"), "key": "pods"}),
    ("wm_all", "wm_get_all", {"session": ref("ses", "id")}),
    ("wm_stats", "wm_stats", {"session": ref("ses", "id")}),
    ("wm_clear", "wm_clear", {"session": ref("ses", "id")}),
    ("scratch_clear", "scratch_clear", {"session": ref("ses", "id")}),
    ("wm_stats2", "wm_stats", {"session": ref("ses", "id")}),
    ("l1", "add_lesson", {"text": "Canary every deploy for fifteen minutes", "tags": ["ops"]}),
    ("l2", "add_lesson", {"text": "Canary each deploy", "on_duplicate": "keep-both"}),
    ("l3", "add_lesson", {"text": "Read the runbook before paging", "scope": "task:deploy-api"}),
    ("l_bad", "add_lesson", {"text": "x", "scope": "team:a"}),
    ("lessons", "list_lessons", {}),
    ("lesson", "get_lesson", {"lesson": ref("l1", "id")}),
    ("up", "reinforce_lesson", {"lesson": ref("l1", "id")}),
    ("down", "weaken_lesson", {"lesson": ref("l3", "id")}),
    ("pin", "pin_lesson", {"lesson": ref("l3", "id")}),
    ("unpin", "unpin_lesson", {"lesson": ref("l3", "id")}),
    ("forget", "forget_lesson", {"lesson": ref("l3", "id")}),
    ("restore", "restore_lesson", {"lesson": ref("l3", "id")}),
    ("forget_l3", "forget_lesson", {"lesson": ref("l3", "id")}),
    ("unforget", "unforget_lesson", {"lesson": ref("l3", "id")}),
    ("unforget_twice", "unforget_lesson", {"lesson": ref("l3", "id")}),
    ("l4", "add_lesson", {"text": "Say the pager code aloud on calls"}),
    ("l4_gone", "delete_lessons", {"lessons": [ref("l4", "id")]}),
    ("l4_again", "delete_lessons", {"lessons": [ref("l4", "id")]}),
    ("edit", "edit_lesson", {"lesson": ref("l1", "id"), "text": "Canary every deploy for 15 min"}),
    ("merge", "merge_lessons", {"keep": ref("l1", "id"), "absorb": [ref("l2", "id")]}),
    ("all_lessons", "list_lessons", {"all": True}),
    ("r1", "add_rule", {"text": "Watch the canary dashboard"}),
    ("r_off", "deactivate_rule", {"rule": ref("r1", "id")}),
    ("rules_all", "list_rules", {"all": True}),
    ("r_on", "activate_rule", {"rule": ref("r1", "id")}),
    ("rules", "list_rules", {"scope": "global"}),
    ("cards", "list_cards", {}),
    ("card", "get_card", {"card": ref("cards", 0, "id")}),
    ("card_edit", "edit_card", {"card": ref("cards", 0, "id"), "evidence": "pods 1-40"}),
    ("card_merge", "merge_cards", {"keep": ref("cards", 0, "id"), "absorb": ref("cards", 1, "id")}),
    ("s1", "set_slot", {"label": "persona", "text": "Be terse.", "description": "tone"}),
    ("s2", "append_slot", {"label": "persona", "text": "Cite files."}),
    ("s3", "replace_in_slot", {"label": "persona", "old": "terse", "new": "brief"}),
    ("s_new", "create_slot", {"label": "rules", "limit": 200}),
    ("s_move", "move_slot", {"label": "rules", "position": 0}),
    ("s_lock", "lock_slot", {"label": "persona"}),
    ("s_locked", "append_slot", {"label": "persona", "text": "More."}),
    ("s_unlock", "unlock_slot", {"label": "persona"}),
    ("slot", "get_slot", {"label": "persona"}),
    ("slots", "list_slots", {}),
    ("s_del", "delete_slot", {"label": "rules"}),
    # Actions before review: while it is on, an agent's action add waits for a person.
    ("a1", "action_create", {"title": "Write the runbook", "priority": 2, "project": "api"}),
    ("a2", "action_create", {"title": "Page the on-call", "after": [ref("a1", "id")]}),
    ("a_frontier", "frontier", {}),
    ("a_cycle", "action_update", {"action": ref("a1", "id"), "after": [ref("a2", "id")]}),
    ("a_done", "action_update", {"action": ref("a1", "id"), "status": "done", "note": "ok"}),
    ("a_list", "list_actions", {}),
    ("a_show", "get_action", {"action": ref("a2", "id")}),
    ("a_next", "frontier", {"project": "api", "limit": 1}),
    ("cp", "create_checkpoint", {"description": "before the review"}),
    ("consolidate", "consolidate", {}),
    (
        "obs_dec",
        "observe",
        {"session": ref("ses", "id"), "text": "Roll back when errors double", "kind": "decision"},
    ),
    ("reflect", "reflect", {"session": ref("ses", "id")}),
    ("crystal", "crystallize", {"session": ref("ses", "id")}),
    ("summ", "summarize_session", {"session": ref("ses", "id"), "summary": "rolled out"}),
    ("cfg_get", "get_config", {"key": "review"}),
    ("cfg", "list_config", {}),
    ("prof", "set_profile", {"project": "api", "text": "The API service, on Postgres."}),
    ("prof_big", "set_profile", {"project": "web", "text": "x" * 30, "limit": 20}),
    ("prof_show", "get_profile", {"project": "api"}),
    ("profs", "list_profiles", {}),
    ("tok", "issue_agent_token", {"agent": "helper"}),
    ("toks", "list_agent_tokens", {}),
    ("tok_revoke", "revoke_agent_token", {"agent": "helper"}),
    ("review_on", "set_config", {"key": "review", "value": "on"}),
    ("p4", "set_profile", {"project": "api", "text": "The API service, on Postgres 16."}),
    ("p1", "add_lesson", {"text": "Pin the image digest"}),
    ("p2", "append_slot", {"label": "persona", "text": "Ask first."}),
    ("p3", "edit_lesson", {"lesson": ref("l1", "id"), "text": "Never canary"}),
    ("pending", "list_proposals", {}),
    ("proposal", "get_proposal", {"proposal": ref("p1", "id")}),
    ("approve", "approve_proposal", {"proposal": ref("p2", "id"), "edit": "You ask first."}),
    ("reject", "reject_proposal", {"proposal": ref("p3", "id"), "why": "it contradicts"}),
    ("merge_p", "merge_proposal", {"proposal": ref("p1", "id"), "lesson": ref("l1", "id")}),
    ("decided", "list_proposals", {"all": True}),
    ("diff", "diff_checkpoint", {"checkpoint": ref("cp", "id")}),
    ("checkpoints", "list_checkpoints", {}),
    ("undo", "restore_checkpoint", {"checkpoint": ref("cp", "id")}),
    ("cp_del", "delete_checkpoint", {"checkpoint": ref("cp", "id")}),
    ("search", "search", {"query": "canary", "limit": 30}),
    ("search_kinds", "search", {"query": "canary", "kinds": ["lesson", "episode"]}),
    ("get", "get_record", {"id": ref("search", 0, "id")}),
    ("get_obs", "get_record", {"id": ref("session", "observations", 0, "id")}),
    ("link", "link", {"source": ref("l1", "id"), "target": "task:deploy-api"}),
    ("link_slot", "link", {"source": ref("l1", "id"), "target": "persona", "kind": "cites"}),
    ("links", "links", {"id": ref("l1", "id")}),
    ("rule_links", "links", {"id": ref("r1", "id")}),
    ("unlink", "unlink", {"source": ref("l1", "id"), "target": "persona"}),
    ("unlink_none", "unlink", {"source": ref("l1", "id"), "target": "persona"}),
    ("end", "end_session", {"session": ref("ses", "id"), "summary": "done"}),
    ("ses2", "start_session", {"title": "to forget"}),
    ("o2", "observe", {"session": ref("ses2", "id"), "text": "a token was here"}),
    ("o3", "observe", {"session": ref("ses2", "id"), "text": "and here"}),
    ("forget_obs", "delete_observations", {"observations": [ref("o2", "id")]}),
    ("forget_o3", "forget", {"kind": "observation", "id": ref("o3", "id")}),
    ("forget_ses", "delete_session", {"session": ref("ses2", "id")}),
    ("forget_again", "forget", {"kind": "session", "id": ref("ses2", "id")}),
    ("ctx_project", "context", {"project": "api", "task": "deploy-api", "format": "json"}),
    ("history", "history", {"limit": 200}),
    ("history_f", "history", {"table": "lessons", "record": ref("l1", "id"), "limit": 5}),
    ("lint", "lint", {}),
    ("stats", "stats", {}),
    ("timeline", "get_session", {"session": ref("ses", "id"), "order": "newest", "limit": 1}),
    ("doctor", "doctor", {}),
    ("export", "export", {}),
]


def test_the_scenario_calls_every_operation() -> None:
    called = {op for _, op, _ in SCENARIO}
    assert called == {op.name for op in OPERATIONS} - CLI_ONLY


# -- normalising what differs by design ------------------------------------------------------
_ID = re.compile(
    r"\b(?:les|ep|rule|card|slot|ses|prop|obs|aud|imp|act|lnk|prof)_[0-9A-Z]{26}\b"
    r"|\b[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\b"
    # A checkpoint's short id, in audit summaries and an automatic checkpoint's description.
    r"|(?:(?<=restoring )|(?<=checkpoint )|(?<=restore ))[0-9a-f]{8}\b"
    # An agent token: random, shown once.
    r"|\bmwa_[A-Za-z0-9_-]{43}"
)
_ACTOR = re.compile(rf"\b(?:cli|api|mcp|http):{AGENT}\b")


def normalise(value: Any) -> Any:
    """Ids numbered by first appearance (keys sorted), every door's actor as one."""
    seen: dict[str, str] = {}

    def text(s: str) -> str:
        s = _ACTOR.sub(f"<door>:{AGENT}", s)
        return _ID.sub(lambda m: seen.setdefault(m.group(0), f"<id{len(seen)}>"), s)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {text(k): walk(v[k]) for k in sorted(v)}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return text(v) if isinstance(v, str) else v

    return walk(value)


def _unplaced(value: Any, place: str) -> Any:
    """``value`` with the path of a door's store copy written ``<store>``."""
    if isinstance(value, dict):
        return {k: _unplaced(v, place) for k, v in value.items()}
    if isinstance(value, list):
        return [_unplaced(v, place) for v in value]
    return value.replace(place, "<store>") if isinstance(value, str) else value


# -- the doors ------------------------------------------------------------------------------
Call = Callable[[Op, dict[str, Any]], Any]


def _error(message: str) -> dict[str, str]:
    return {"error": message.strip()}


def cli_argv(op: Op, params: dict[str, Any]) -> list[str]:
    """The CLI's arguments for a call, spelled as the declaration says."""
    words = op.cli.split()
    group_flags = {name for n in range(1, len(words)) for name in GROUPS[" ".join(words[:n])][1]}
    head, tail = [words[0]], words[1:]
    args: list[str] = []
    for p in op.params:
        if p.name not in params or "cli" not in p.doors:
            continue
        value = params[p.name]
        positional = bool(p.cli) and not p.cli.startswith("-")
        flag = (p.cli.split() if p.cli else ["--" + p.name.replace("_", "-")])[-1]
        values = value if isinstance(value, list) else [value]
        if p.type.startswith("bool"):
            spelled = [flag] if value else []
        elif positional:
            spelled = [str(v) for v in values]
        else:
            spelled = [x for v in values for x in (flag, str(v))]
        if p.name in group_flags:
            head += spelled
        else:
            args += spelled
    return [*head, *tail, *args]


def cli_door(
    db: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[bytes]
) -> Call:
    from memwork.core.doors.cli.main import main

    monkeypatch.setenv("MEMWORK_NOW", NOW)
    monkeypatch.setenv("MEMWORK_AGENT", AGENT)

    def call(op: Op, params: dict[str, Any]) -> Any:
        argv = ["--db", str(db)]
        if op.name in DECISIONS:  # a person decides, with the store's curator key
            argv += list(curator_args())
        stdin = ""
        if op.name == "record_episode":
            stdin = json.dumps(params.get("episode") or params["episodes"])
            argv += ["--json", "record-episode"]
        elif op.name == "record_failure":
            stdin = json.dumps(params["report"])
            argv += ["--json", "record-failure"]
        elif op.name == "context" and params.get("format", "text") == "text":
            argv += cli_argv(op, params)
        else:
            argv += ["--json", *cli_argv(op, params)]
        monkeypatch.setattr(
            sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
        )
        capsys.readouterr()
        code = main(argv)
        sys.stdout.flush()
        captured = capsys.readouterr()
        out, err = captured.out.decode(), captured.err.decode()
        if code:
            return _error(err)
        if op.name == "record_episode":
            docs = json.loads(out)
            return {
                "ids": [doc["id"] for doc in docs],
                "warnings": [w for doc in docs for w in doc["warnings"]],
            }
        if op.name == "context" and params.get("format", "text") == "text":
            return out.removesuffix("\n")
        if op.name == "doctor":
            # The CLI also says how it found the store and the line that points an agent at it.
            found = json.loads(out)
            assert found.pop("origin") == "--db" and found.pop("agent_env")
            return found
        return json.loads(out)

    return call


def api_door(memory: Memory) -> Call:
    person: list[Memory] = []

    def call(op: Op, params: dict[str, Any]) -> Any:
        if op.name in DECISIONS:  # a person's script decides, with the curator key
            if not person:
                person.append(_memory(Path(memory.path), curator_key=curator_args()[1]))
            return _call(person[0], op, params)
        if op.name == "doctor":
            # The person's Memory is another writer on this store: a fold it runs in the
            # background would hold the lock, and doctor rightly say so. The other doors'
            # people are CLI calls, done before the next one starts.
            for other in person:
                other.store.settle()
        return _call(memory, op, params)

    return call


def _call(memory: Memory, op: Op, params: dict[str, Any]) -> Any:
    try:
        if op.name == "record_episode":
            # Memory returns the ids; what it read as the episodic library reads it
            # comes as warnings, worded as the CLI's stderr lines.
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", CoercionWarning)
                if "episode" in params:
                    ids = [memory.record_episode(params["episode"])]
                else:
                    ids = memory.record_episodes(params["episodes"])
            notes = [str(w.message).removeprefix("memwork: ") for w in said]
            return {"ids": ids, "warnings": notes}
        return getattr(memory, op.name)(**params)
    except UserError as exc:
        return _error(str(exc))  # Memory's errors read as the CLI's line


@functools.cache
def _validator(result: str, wrapped: bool = False) -> Any:
    """A validator for the output schema ``result`` (MCP wraps a non-object in
    ``{"result": ...}``). The schema is checked once here: ``jsonschema.validate`` checks
    it against the metaschema on every call, a third of this test's time."""
    shape = SHAPES[result]
    schema = {"type": "object", "properties": {"result": shape}} if wrapped else shape
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _unwrap(op: Op, result: Any) -> Any:
    if result.is_error:
        return _error(result.content[0].text)
    shape = SHAPES[op.result]
    _validator(op.result, shape["type"] != "object").validate(result.structured_content)
    content = result.structured_content
    return content if shape["type"] == "object" else content["result"]


def http_door(url: str, client: httpx2.Client) -> Call:
    def call(op: Op, params: dict[str, Any]) -> Any:
        answer = client.post(
            f"{url}/v1/{op.name}", json=params, headers={"X-Memwork-Agent": AGENT}, timeout=120
        )
        if answer.status_code != 200:
            assert 400 <= answer.status_code < 500, answer.text
            return _error(answer.json()["error"])
        value = answer.json()
        _validator(op.result).validate(value)
        return value

    return call


def _resolve(value: Any, answers: dict[str, Any]) -> Any:
    if isinstance(value, Ref):
        found = answers[value.step]
        for key in value.path:
            found = found[key]
        return found
    if isinstance(value, list):
        return [_resolve(v, answers) for v in value]
    return value


async def _run_mcp(client: Client, memory: Memory) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    fill = api_door(memory)
    for label, name, params in SCENARIO:
        op = by_name(name)
        given = {k: _resolve(v, answers) for k, v in params.items()}
        if "mcp" in op.doors:
            answers[label] = _unwrap(op, await client.call_tool(op.mcp or op.name, given))
        else:
            answers[label] = await anyio.to_thread.run_sync(fill, op, given)
    return answers


def _run(call: Call, door: str, memory: Memory) -> dict[str, Any]:
    answers: dict[str, Any] = {}
    fill = api_door(memory)
    for label, name, params in SCENARIO:
        op = by_name(name)
        given = {k: _resolve(v, answers) for k, v in params.items()}
        answers[label] = (call if door in op.doors else fill)(op, given)
    return answers


def _memory(db: Path, curator_key: str | None = None) -> Memory:
    clock = datetime.fromisoformat(NOW.replace("Z", "+00:00"))
    return Memory(db, agent=AGENT, clock=lambda: clock, curator_key=curator_key)


@pytest.mark.slow
def test_every_door_answers_every_operation_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    capsys = capsysbinary
    env = python_env(MEMWORK_NOW=NOW, MEMWORK_FSYNC="0", MEMWORK_AGENT=AGENT)
    monkeypatch.setenv("MEMWORK_NOW", NOW)
    answers: dict[str, dict[str, Any]] = {}
    answers["cli"] = _run(
        cli_door(tmp_path / "cli", monkeypatch, capsys), "cli", _memory(tmp_path / "cli")
    )
    answers["api"] = _run(api_door(_memory(tmp_path / "api")), "api", _memory(tmp_path / "api"))

    stdio = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "memwork",
            "--db",
            str(tmp_path / "mcp"),
            "mcp",
            "--tools",
            "all",
            "--agent",
            AGENT,
        ],
        env=env,
    )

    async def over_stdio() -> dict[str, Any]:
        async with Client(stdio, cache=None) as client:
            return await _run_mcp(client, _memory(tmp_path / "mcp"))

    answers["mcp"] = anyio.run(over_stdio)

    served = Served(tmp_path / "mcp-http", env, "--tools", "all")
    try:

        async def over_http() -> dict[str, Any]:
            http = httpx2.AsyncClient(headers={"X-Memwork-Agent": AGENT}, timeout=120)
            transport = streamable_http_client(f"{served.url}/mcp", http_client=http)
            async with http, Client(transport, cache=None) as client:
                return await _run_mcp(client, _memory(tmp_path / "mcp-http"))

        answers["mcp-http"] = anyio.run(over_http)
    finally:
        assert served.stop()[0] == 0
    served = Served(tmp_path / "http", env)
    try:
        # One client for the whole scenario: httpx's module functions build one, TLS
        # context included, per request.
        with httpx2.Client() as client:
            answers["http"] = _run(
                http_door(served.url, client), "http", _memory(tmp_path / "http")
            )
    finally:
        assert served.stop()[0] == 0

    # Each door has its own copy of the store: the copy's place is the same to every door.
    for door in DOORS:
        answers[door] = _unplaced(answers[door], str(tmp_path / door))
    expected = normalise(answers["cli"])
    # The scenario means something: failures where it expects them, answers elsewhere.
    errors = {
        label for label, value in expected.items() if isinstance(value, dict) and "error" in value
    }
    assert errors == {
        "bad_ep",
        "ctx_bad_knob",
        "wm_gone",
        "l_bad",
        "s_locked",
        "a_cycle",
        "unlink_none",
        "forget_again",
        "l4_again",
        "unforget_twice",
        "prof_big",
    }, errors
    assert expected["l4_gone"]["lessons"] == 1
    assert "would make a cycle" in expected["a_cycle"]["error"]
    assert expected["p1"]["proposed"] is True and expected["merge"]["wordings"]
    for door in DOORS[1:]:
        got = normalise(answers[door])
        for label, _, _ in SCENARIO:
            assert got[label] == expected[label], (door, label)
