"""The registry of operations holds together: every declaration names real code, and what
is generated from it (Memory's methods, the table of operations in docs/CLI.md) is current."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.ops import codegen
from memwork.core.ops import runner as invoke
from memwork.core.ops.operations import DOORS, ERRORS, GROUPS, OPERATIONS, TYPES, by_name
from memwork.core.ops.shapes import SHAPES

ROOT = Path(__file__).resolve().parents[3]


def _function(target: str, package: str) -> object:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(f"{package}.{module}"), name)


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_each_declaration_names_real_code_that_takes_its_parameters(op) -> None:  # noqa: ANN001
    assert op.summary and op.doc, op.name
    assert set(op.doors) <= set(DOORS) and set(op.errors) <= set(ERRORS)
    assert op.result in SHAPES
    for p in op.params:
        assert p.type.rstrip("?") in TYPES and len(p.help) > 5, (op.name, p.name)
        assert set(p.doors) <= set(op.doors) or p.doors == DOORS, (op.name, p.name)
    if op.cli:
        words = op.cli.split()
        assert all(" ".join(words[:n]) in GROUPS for n in range(1, len(words))), op.cli
    for target in (op.cli_run, op.cli_print):
        if target:
            assert callable(_function(target, "memwork.core.doors.cli")), target
    if op.doors == ("cli",) and op.cli_run:
        return  # a command of the CLI's own: its handler is the implementation
    run = _function(op.run, "memwork.core")
    accepted = inspect.signature(run).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    for p in op.params:
        if p.doors == ("cli",) and op.cli_run:
            continue
        assert takes_all or (p.arg or p.name) in accepted, (op.name, p.name)


def test_names_are_unique_at_every_door() -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) == len(set(names))
    tools = [op.mcp or op.name for op in OPERATIONS if "mcp" in op.doors]
    assert len(tools) == len(set(tools))
    verbs = [op.cli for op in OPERATIONS if op.cli]
    assert len(verbs) == len(set(verbs))


def test_memory_methods_are_generated_from_the_registry() -> None:
    current = codegen.MEMORY_OPS.read_text()
    assert current == codegen.memory_source(), "stale: run `make generate`"


def test_the_table_of_operations_is_generated_from_the_registry() -> None:
    assert codegen.OPERATIONS_DOC == ROOT / "docs" / "CLI.md"
    doc = codegen.OPERATIONS_DOC.read_text()
    assert codegen.BEGIN in doc and codegen.END in doc
    assert doc == codegen.operations_doc_text(doc), "stale: run `make generate`"
    for op in OPERATIONS:  # every verb has its row, spelled as the CLI takes it
        assert f"| {codegen.cli_usage(op).replace('|', chr(92) + '|')} |" in doc, op.cli
    assert "| `wm [--session S] set KEY VALUE [--ttl SECONDS] [--scope SCOPE]` |" in doc


def test_the_readme_points_at_the_table_of_operations() -> None:
    readme = (ROOT / "README.md").read_text()
    assert codegen.BEGIN not in readme  # the table lives in docs/CLI.md, made once
    assert "docs/CLI.md" in readme


def test_a_json_door_names_the_field_of_a_wrong_type_in_one_line() -> None:
    op = by_name("search")
    cases = [
        ({"query": 3}, "query: must be a string (got 3)"),
        ({"query": "x", "limit": "ten"}, "limit: must be an integer (got 'ten')"),
        ({"query": "x", "limit": True}, "limit: must be an integer (got True)"),
        ({"query": "x", "limit": 0}, "limit: must be >= 1 (got 0)"),
        ({"query": "x", "kinds": "lesson"}, "kinds: must be a list of strings (got 'lesson')"),
        ({"query": "x", "nope": 1}, "nope: is not a parameter of search (it takes: kinds, "),
        ({}, "query: is required"),
    ]
    for given, message in cases:
        with pytest.raises(InvalidInput) as caught:
            invoke.check(op, "mcp", given)
        assert str(caught.value).startswith(message), given
    checked = invoke.check(op, "mcp", {"query": "x", "limit": 5.0})
    assert checked == {
        "query": "x",
        "kinds": None,
        "limit": 5,
        "since": None,
        "until": None,
        "session": None,
    }


def test_a_null_is_taken_where_null_is_allowed_and_named_where_it_is_not() -> None:
    """A JSON null for a parameter that may be null passes as it is (most of a search's
    are), and for one that may not is refused naming the field, at every door."""
    op = by_name("search")
    for door in ("mcp", "http", "api"):
        checked = invoke.check(op, door, {"query": "x", "kinds": None, "since": None})
        assert checked["kinds"] is None and checked["since"] is None
        with pytest.raises(InvalidInput) as caught:
            invoke.check(op, door, {"query": None})
        assert str(caught.value).startswith("query: must be a string (got None)")
        with pytest.raises(InvalidInput) as caught:
            invoke.check(op, door, {"query": "x", "limit": None})
        assert str(caught.value).startswith("limit: must be an integer (got None)")


def test_an_operation_whose_function_is_replaced_gets_what_the_new_one_takes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each function is given the caller's ``now`` and ``actor`` only when it takes
    them, worked out per function: replacing an operation's function between calls
    (as a test or a plugin may) gives the new one its own keywords."""
    from memwork import Memory
    from memwork.core.services.recall import search as recall_search

    memory = Memory(tmp_path / "store")
    seen: list[dict[str, object]] = []

    def plain(store: object, query: str, **rest: object) -> list[dict[str, object]]:
        seen.append({"query": query, **rest})
        return []

    def with_actor(store: object, query: str, *, actor: str, **rest: object) -> list:
        seen.append({"query": query, "actor": actor, **rest})
        return []

    monkeypatch.setattr(recall_search, "search_op", plain)
    memory.search("first")
    monkeypatch.setattr(recall_search, "search_op", with_actor)
    memory.search("second")
    assert "actor" not in seen[0] and "now" not in seen[0]
    assert seen[1]["actor"] == memory.actor and "now" not in seen[1]
    assert seen[0]["limit"] == seen[1]["limit"] == 10
