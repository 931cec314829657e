"""``memwork slot …``: exit codes, one-line errors, human and JSON output."""

from __future__ import annotations

from pathlib import Path

import pytest

from memwork.core.domain import slots
from memwork.core.storage.store import Store
from tests.conftest import NOW, folder_digest, stored_text

#: The CLI contract holds on a folder and on a Redis store alike (tests/conftest.py).
BOTH_BACKENDS = True

T0 = "2026-11-01T12:00:00Z"


def test_set_prints_label_and_size(cli) -> None:  # noqa: ANN001
    done = cli("slot", "set", "persona", "I am terse.", now=T0)
    assert (done.code, done.out, done.err) == (0, "persona 11/2000\n", "")
    done = cli("slot", "set", "corrections/mistakes", "x", "--limit", "50", "--description", "d")
    assert (done.code, done.out) == (0, "corrections/mistakes 1/50\n")


def test_append_and_replace_print_the_new_size(cli) -> None:  # noqa: ANN001
    cli("slot", "set", "notes", "one", "--limit", "40")
    done = cli("slot", "append", "notes", "two two")
    assert (done.code, done.out) == (0, "notes 11/40\n")
    done = cli("slot", "replace", "notes", "two", "2")
    assert (done.code, done.out) == (0, "notes 7/40\n")
    assert done.err == "replaced 2 occurrences in slot notes\n"
    assert cli("slot", "show", "notes").out == "one\n2 2\n"


def test_show_prints_the_content_only(cli) -> None:  # noqa: ANN001
    cli("slot", "set", "p", "line 1\nline 2\n")
    done = cli("slot", "show", "p")
    assert (done.code, done.out, done.err) == (0, "line 1\nline 2\n", "")
    cli("slot", "set", "empty", "")
    assert cli("slot", "show", "empty").out == ""


def test_json_records_carry_computed_fields(cli) -> None:  # noqa: ANN001
    record = cli("slot", "set", "persona", "hello", "--limit", "10", "--json", now=T0).json()
    assert record["chars"] == 5 and record["over_limit"] is False
    assert record["label"] == "persona" and record["limit"] == 10
    assert record["created_at"] == "2026-11-01T12:00:00.000000Z"
    assert set(record) == {*slots.FIELDS, "chars", "over_limit"}
    shown = cli("slot", "show", "persona", "--json").json()
    assert shown == record
    appended = cli("slot", "append", "persona", "you", "--json").json()
    assert (appended["content"], appended["chars"]) == ("hello\nyou", 9)
    replaced = cli("slot", "replace", "persona", "you", "me", "--json").json()
    assert (replaced["content"], replaced["replaced"]) == ("hello\nme", 1)
    listed = cli("slot", "list", "--json").json()
    assert isinstance(listed, list) and [r["label"] for r in listed] == ["persona"]
    assert listed[0]["chars"] == 8 and listed[0]["over_limit"] is False
    assert cli("slot", "delete", "persona", "--json").json()["label"] == "persona"
    assert cli("slot", "list", "--json").json() == []


def test_list_shows_size_flags_and_description(cli, db: Path) -> None:  # noqa: ANN001
    cli("slot", "set", "persona", "hi", "--description", "who the agent is")
    cli("slot", "set", "plain", "x")
    store = Store(db)
    slots.put_imported_slot(
        store,
        {"label": "human", "content": "z" * 30, "limit": 20, "read_only": True},
        now=NOW,
        actor="test",
    )
    done = cli("slot", "list")
    assert done.code == 0
    lines = done.out.splitlines()
    assert len(lines) == 3
    assert lines[0].split() == ["persona", "2/2000", "who", "the", "agent", "is"]
    assert lines[1].split() == ["plain", "1/2000"]
    assert lines[2].startswith("human") and "30/20" in lines[2]
    assert "[over limit, read-only]" in lines[2]
    listed = cli("slot", "list", "--json").json()
    assert [r["over_limit"] for r in listed] == [False, False, True]
    assert listed[2]["chars"] == 30
    shown = cli("slot", "show", "human")
    assert shown.out == "z" * 30 + "\n"
    assert shown.err == "slot human is over its limit: 30/20 characters\n"


def _refused(cli, db: Path, args: list[str], field_and_rule: str) -> None:  # noqa: ANN001
    before = folder_digest(db)
    done = cli(*args)
    assert done.code == 2, done
    assert done.out == ""
    assert done.err.count("\n") == 1 and done.err.startswith("memwork: ")
    assert field_and_rule in done.err
    assert folder_digest(db) == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["slot", "set", "p", "x" * 2104],
            "content: would be 2104 characters, over the slot's limit of 2000",
        ),
        (["slot", "set", "p", "abc", "--limit", "0"], "limit: must be at least 1 (got 0)"),
        (["slot", "set", "has space", "x"], "label: must use letters, digits and _ - . /"),
        (["slot", "set", "émoji", "x"], "label: must use letters, digits and _ - . /"),
        (["slot", "set", "", "x"], "label: must use letters, digits and _ - . /"),
        (["slot", "append", "p", "x" * 2000], "content: would be 2006 characters"),
        (["slot", "replace", "p", "zzz", "y"], "old: 'zzz' does not occur in slot p"),
        (["slot", "replace", "p", "", "y"], "old: must not be empty"),
        (["slot", "set", "p", "short", "--limit", "3"], "content: would be 5 characters"),
        (["slot", "set", "p", "hello", "--limit", "3"], "limit: 3 is below the slot's current 5"),
        (["slot", "show", "missing"], "slot not found: missing"),
        (["slot", "delete", "missing"], "slot not found: missing"),
        (["slot", "append", "missing", "x"], "slot not found: missing"),
    ],
)
def test_refusals_exit_2_with_one_line_and_change_nothing(
    cli,  # noqa: ANN001
    db: Path,
    args: list[str],
    message: str,
) -> None:
    cli("slot", "set", "p", "hello")
    _refused(cli, db, args, message)


def test_non_numeric_limit_is_a_usage_error(cli, db: Path) -> None:  # noqa: ANN001
    cli("slot", "set", "p", "hello")
    before = folder_digest(db)
    result = cli("slot", "set", "p", "x", "--limit", "ten")
    assert result.code == 2
    assert "argument --limit: invalid int value: 'ten'" in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert folder_digest(db) == before


def test_read_only_refusals(cli, db: Path) -> None:  # noqa: ANN001
    store = Store(db)
    slots.set_slot(store, "locked", "fixed text", now=NOW, actor="test", read_only=True)
    for args in (
        ["slot", "set", "locked", "new"],
        ["slot", "append", "locked", "more"],
        ["slot", "replace", "locked", "fixed", "new"],
        ["slot", "delete", "locked"],
    ):
        _refused(cli, db, args, "slot locked is read-only")
    assert cli("slot", "show", "locked").out == "fixed text\n"


def test_delete_prints_and_removes(cli) -> None:  # noqa: ANN001
    cli("slot", "set", "a", "1")
    cli("slot", "set", "b", "2")
    done = cli("slot", "delete", "a")
    assert (done.code, done.out) == (0, "deleted a\n")
    assert [(r["label"], r["position"]) for r in cli("slot", "list", "--json").json()] == [("b", 0)]


def test_cli_actor_and_scrubbing_reach_the_store(cli, db: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("MEMWORK_AGENT", "agent-7")
    done = cli("slot", "set", "contacts", "ping ops@example.com, DB_PASSWORD=S3cr3t!x", "--json")
    assert done.json()["content"] == "ping ops@example.com, DB_PASSWORD=[redacted:password]"
    store = Store(db)
    from memwork.core.ledger import audit

    with store.reading():
        entry = next(audit.entries(store))
    assert (entry["actor"], entry["action"], entry["table"]) == ("cli:agent-7", "create", "slots")
    assert "S3cr3t!x" not in stored_text(db)
