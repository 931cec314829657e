"""One rule for every identifier, whichever door it comes through: at most 200 characters
(the name in a ``task:``/``project:`` scope and the agent in an actor counted alone), no
control character, no secret. An identifier is stored as given, and a task id even names
a file (``task_stats.<task>``): one that breaks the rule is refused (exit 2, the field
named, the store byte-identical), never stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.ops.memory import Memory
from tests.conftest import NOW, folder_digest
from tests.core.doors.test_mcp_server import fails, with_server

HF = "".join(("hf_", "BnCKnnVMAJMrXynycgXBxMLVxQukLiQgJt"))
LONG = "b" * 201
HUGE = "c" * 1_000_000


def _refused(done: Any, field: str) -> None:
    assert done.code == 2, done
    assert done.err.startswith("memwork: ") and done.err.count("\n") == 1, done.err
    assert field in done.err
    assert HF not in done.err and HUGE[:300] not in done.err


@pytest.mark.slow
def test_a_task_id_holding_a_token_is_refused_at_every_door(cli, db: Path, tmp_path: Path) -> None:  # noqa: ANN001
    assert cli("session", "start").code == 0
    before = folder_digest(db)
    _refused(cli("record-episode", stdin=json.dumps({"task_id": HF, "score": 0.2})), "task_id")
    _refused(cli("wm", "--session", "s1", "task", "--id", HF), "task_id")
    _refused(cli("lesson", "add", "Canary first", "--scope", f"task:{HF}"), "scope")
    _refused(cli("rule", "add", "Canary first", "--scope", f"task:{HF}"), "scope")
    assert folder_digest(db) == before
    assert not any(HF in p.name for p in Path(db).glob("*"))

    memory = Memory(tmp_path / "api", clock=lambda: NOW)
    with pytest.raises(InvalidInput) as err:
        memory.record_episode({"task_id": HF, "score": 0.2})
    assert err.value.field == "task_id"

    async def body(client: Any) -> str:
        return await fails(client, "record_episode", episode={"task_id": HF, "score": 0.2})

    message = with_server(tmp_path / "mcp", body)
    assert "task_id" in message and HF not in message


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("lesson", "add", "Canary first", "--scope", f"task:{LONG}"), "scope"),
        (("lesson", "add", "Canary first", "--scope", f"project:{LONG}"), "scope"),
        (("rule", "add", "Canary first", "--scope", f"task:{HUGE}"), "scope"),
        (("lesson", "add", "Canary first", "--scope", f"task:{HUGE}"), "scope"),
        (("wm", "--session", "s1", "set", LONG, "v"), "key"),
        (("wm", "--session", "s1", "task", "--id", LONG), "task_id"),
        (("slot", "set", LONG, "text"), "label"),
    ],
)
def test_every_identifier_is_capped_at_200(
    cli, db: Path, args: tuple[str, ...], field: str
) -> None:  # noqa: ANN001
    assert cli("session", "start").code == 0
    before = folder_digest(db)
    done = cli(*args)
    _refused(done, field)
    assert "200" in done.err
    assert folder_digest(db) == before


def test_a_task_id_of_200_characters_is_fine(cli) -> None:  # noqa: ANN001
    task = "t" * 200
    assert cli("record-episode", stdin=json.dumps({"task_id": task, "score": 0.9})).code == 0
    assert cli("lesson", "add", "Canary first", "--scope", f"task:{task}").code == 0
    assert cli("rule", "add", "Canary first", "--scope", f"task:{task}").code == 0


def test_an_agent_id_follows_the_same_rule(cli, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    assert cli("session", "start").code == 0
    before = folder_digest(db)
    for agent in (LONG, HF):
        monkeypatch.setenv("MEMWORK_AGENT", agent)
        done = cli("lesson", "add", "Canary first")
        assert done.code == 2 and "MEMWORK_AGENT" in done.err and HF not in done.err
    assert folder_digest(db) == before
