"""A value under a key that names a secret is redacted whatever it looks like, at any depth,
at every door: episode metadata and extra keys, working-memory values (the CLI's string,
MCP's JSON), imported records, and the export of a store that holds one already."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memwork.core.ops.memory import Memory
from memwork.core.privacy import scrub_value
from tests.conftest import NOW, stored_text
from tests.core.doors.test_mcp_server import call, with_server


def _k(*parts: str) -> str:
    return "".join(parts)


PASSWORD = "Tr0ub4dor-3-horse"
GITLAB = _k("glpat-", "jdhvf426cphd9z1gk9re")
PLAIN = "hunter2"  # looks like nothing: only its key says it is a secret
VALUE = {
    "password": PASSWORD,
    "env": {"GITLAB_TOKEN": GITLAB, "DB_PASSWORD": PLAIN, "REGION": "eu-west-1"},
    "headers": [{"Authorization": "Basic czNjcjN0"}, {"Accept": "application/json"}],
    "apiKey": 12345678,
    "session_id": "run-42",
    "use_token": True,
}
SECRETS = (PASSWORD, GITLAB, PLAIN, "czNjcjN0", "12345678")


def _clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, secret


@pytest.mark.parametrize(
    ("key", "kind"),
    [
        ("password", "password"),
        ("DB_PASSWORD", "password"),
        ("passwd", "password"),
        ("token", "secret"),
        ("GITLAB_TOKEN", "secret"),
        ("api_key", "secret"),
        ("apiKey", "secret"),
        ("X-Api-Key", "secret"),
        ("client_secret", "secret"),
        ("Authorization", "secret"),
        ("cookie", "secret"),
        ("Set-Cookie", "secret"),
        ("credentials", "secret"),
        ("private_key", "secret"),
        ("key", None),
        ("sort_key", None),
        ("token_count", None),
        ("max_tokens", None),
        ("session_id", None),
        ("private_key_id", None),
        ("auth_provider", None),
        ("password_hash", None),
        ("region", None),
    ],
)
def test_which_keys_name_a_secret(key: str, kind: str | None) -> None:
    from memwork.core.privacy import names_secret

    assert names_secret(key) == kind


def test_scrub_value_redacts_under_secret_keys_at_any_depth() -> None:
    out = scrub_value(VALUE)
    assert out == {
        "password": "[redacted:password]",
        "env": {
            "GITLAB_TOKEN": "[redacted:secret]",
            "DB_PASSWORD": "[redacted:password]",
            "REGION": "eu-west-1",
        },
        "headers": [{"Authorization": "[redacted:secret]"}, {"Accept": "application/json"}],
        "apiKey": "[redacted:secret]",
        "session_id": "run-42",
        "use_token": True,
    }
    assert scrub_value({"credentials": {"user": "bob", "pin": 4321}}) == {
        "credentials": {"user": "[redacted:secret]", "pin": "[redacted:secret]"}
    }
    assert scrub_value({"password": None, "token": ""}) == {"password": None, "token": ""}


def test_cli_episode_metadata_and_extra_keys(cli, db: Path) -> None:  # noqa: ANN001
    episode = {"task_id": "t", "score": 0.5, "metadata": VALUE, **{"extra": VALUE}}
    done = cli("record-episode", stdin=json.dumps(episode))
    assert done.code == 0, done.err
    _clean(stored_text(db))
    exported = cli("export")
    _clean(exported.out)
    assert "eu-west-1" in exported.out and "run-42" in exported.out


def test_api_episode_metadata(tmp_path: Path) -> None:
    memory = Memory(tmp_path / "db", clock=lambda: NOW)
    memory.record_episode({"task_id": "t", "score": 0.5, "password": PASSWORD, "env": VALUE})
    _clean(stored_text(tmp_path / "db"))


def test_cli_wm_value_under_a_secret_key(cli, db: Path) -> None:  # noqa: ANN001
    assert cli("wm", "--session", "s1", "set", "db_password", PLAIN).code == 0
    got = cli("wm", "--session", "s1", "get", "db_password", "--json").json()
    assert got["value"] == "[redacted:password]"
    assert cli("wm", "--session", "s1", "set", "notes", json.dumps(VALUE)).code == 0
    _clean(stored_text(db))


@pytest.mark.slow
def test_mcp_wm_set_with_a_json_string(db: Path) -> None:
    # MCP clients send objects as JSON strings; the SDK parses them into objects, and
    # every string under a secret-named key is redacted there as the CLI's text is.
    async def body(client: Any) -> Any:
        await call(client, "wm_set", session="s1", key="config", value=json.dumps(VALUE))
        await call(client, "wm_set", session="s1", key="api_token", value="abcdefgh12")
        return await call(client, "wm_get", session="s1", key="api_token")

    got = with_server(db, body)
    assert got["value"] == "[redacted:secret]"
    _clean(stored_text(db))


def test_import_and_export_redact_under_secret_keys(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    source = tmp_path / "in.json"
    assert cli("record-episode", stdin='{"task_id": "t", "score": 0.5}').code == 0
    document = cli("export").json()
    episode = document["tables"]["episodes"][0]
    episode["metadata"] = VALUE
    for table in ("episodes", "audit", "task_stats", "meta", "distinct", "counters"):
        document["tables"].pop(table, None)
    document["tables"]["episodes"] = [episode]
    source.write_text(json.dumps(document))
    other = tmp_path / "other"
    from memwork.core.doors.cli.main import main

    assert main(["--db", str(other), "import", str(source)]) == 0
    _clean(stored_text(other))
