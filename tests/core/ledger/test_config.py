"""Store settings: ``memwork config set|get|list``, kept in the store itself."""

from __future__ import annotations

from pathlib import Path

from memwork.core.ledger import config
from memwork.core.storage.store import Store
from tests.conftest import curator_args, folder_digest

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True


def test_defaults_set_get_list(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "x")  # a store exists
    assert cli("config", "get", "review").out == "off\n"
    assert cli("config", "get", "context_log").out == "off\n"
    listed = cli("config", "list", "--json").json()
    assert [(r["key"], r["value"], r["set"]) for r in listed] == [
        ("context_log", "off", False),
        ("embedder", "off", False),
        ("isolation", "shared", False),
        ("review", "off", False),
        ("wm_default_ttl", "off", False),
    ]
    done = cli("config", "set", "review", "on")
    assert done.code == 0 and done.out == "review: off -> on\n"
    assert cli("config", "get", "review").out == "on\n"
    assert cli("--json", "config", "get", "review").json() == {"key": "review", "value": "on"}
    assert cli("config", "set", "review", "ON").out == "review is already on\n"
    text = cli("config", "list").out
    assert "review          on  " in text and "context_log     off (default)  " in text


def test_config_list_lines_up_its_columns(cli, db: Path) -> None:  # noqa: ANN001
    cli("lesson", "add", "x")
    cli("config", "set", "wm_default_ttl", "3600")
    lines = cli("config", "list").out.splitlines()
    listed = cli("config", "list", "--json").json()
    assert len(lines) == len(listed) == 5
    # Each row's value and help text start at the same column as every other row's.
    rows = list(zip(lines, listed, strict=True))
    value_at = {line.index(row["value"], len(row["key"])) for line, row in rows}
    help_at = {line.index(row["help"]) for line, row in rows}
    assert len(value_at) == 1 and len(help_at) == 1, lines


def test_the_setting_lives_in_the_store(cli, db: Path) -> None:  # noqa: ANN001
    cli("config", "set", "review", "on")
    store = Store(db, create=False)
    assert config.get(store, "review") == "on"
    with store.reading():
        assert store.docs("meta")["config"]["review"] == "on"
    # A checkpoint carries it: restoring one taken before brings "off" back (the
    # curator's decision: core/ledger/curator.py).
    cli(*curator_args(), "config", "set", "review", "off")
    checkpoint = cli("checkpoint", "create").out.strip()
    cli("config", "set", "review", "on")
    assert cli(*curator_args(), "checkpoint", "restore", checkpoint).code == 0
    assert cli("config", "get", "review").out == "off\n"


def test_bad_keys_and_values_are_refused_and_change_nothing(cli, db: Path) -> None:  # noqa: ANN001
    cli("config", "set", "review", "on")
    before = folder_digest(db)
    done = cli("config", "set", "reveiw", "on")
    assert done.code == 2
    assert done.err == (
        "memwork: key: must be one of context_log, embedder, isolation, review, "
        "wm_default_ttl (got 'reveiw')\n"
    )
    done = cli("config", "set", "review", "maybe")
    assert done.code == 2
    assert done.err == "memwork: value: review must be one of on, off (got 'maybe')\n"
    assert cli("config", "get", "nope").code == 2
    assert folder_digest(db) == before


def test_a_change_is_audited(cli, db: Path) -> None:  # noqa: ANN001
    from memwork.core.ledger import audit

    cli("config", "set", "review", "on")
    cli("config", "set", "review", "on")  # no change: no entry
    store = Store(db, create=False)
    with store.reading():
        entries = list(audit.entries(store, newest_first=False))
    assert [(e["action"], e["table"], e["record_id"], e["summary"]) for e in entries] == [
        # Someone must be able to decide: turning review on registers the user's key.
        ("curator", "meta", "curator", "registered the curator key that decides for this store"),
        ("config", "meta", "config", "config review: off -> on"),
    ]
