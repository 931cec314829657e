"""``Memory.working_memory(session)``: the working-memory library's plain answers (a value
or the default, True or False, None for progress without a task) on memwork's operations,
and a session id of the caller's own that has a project."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.base.errors import Conflict, NotFound
from tests.conftest import NOW


@pytest.fixture(params=["folder", "redis"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Memory]:
    where = tmp_path / "db" if request.param == "folder" else request.getfixturevalue("redis_url")
    with Memory(where, agent="bot", clock=lambda: NOW) as opened:
        yield opened


def test_get_gives_the_value_or_the_default(memory: Memory) -> None:
    wm = memory.working_memory("run-1")
    assert wm.set("plan", {"steps": 3}) is True
    assert wm.get("plan") == {"steps": 3}
    assert wm.get("missing") is None
    assert wm.get("missing", "none yet") == "none yet"
    # The operation itself takes the default too; without one a missing key is not found.
    assert memory.wm_get("run-1", "missing", default=0) == {
        "key": "missing",
        "value": 0,
        "found": False,
        "scope": None,
    }
    with pytest.raises(NotFound):
        memory.wm_get("run-1", "missing")


def test_delete_says_whether_a_key_was_there(memory: Memory) -> None:
    wm = memory.working_memory("run-2")
    wm.set("a", 1)
    assert wm.delete("a") is True
    assert wm.delete("a") is False
    assert wm.exists("a") is False and wm.keys() == [] and wm.get_all() == {}


def test_progress_without_a_task_is_none_and_writes_nothing(memory: Memory) -> None:
    wm = memory.working_memory("run-3")
    assert wm.update_progress(progress=50) is None
    assert wm.task() is None
    assert "run-3" not in [s["id"] for s in memory.list_sessions()]  # not even the session
    wm.start_task("build", "compile it", total_steps=4)
    moved = wm.update_progress(step=1)
    assert moved is not None and (moved["task_id"], moved["progress_percent"]) == ("build", 25.0)
    # The plain operation still starts a task when there is none (its contract).
    assert memory.wm_task("run-4", progress=10)["task_id"] == "unknown"  # type: ignore[index]


def test_a_session_of_your_own_with_a_project_sees_the_project_keys(memory: Memory) -> None:
    memory.wm_set(None, "deploy", "friday", scope="project:web")
    early = memory.working_memory("run-5")
    early.set("plan", "ship")
    assert early.get("deploy") is None  # no project yet: the project's keys are not seen
    wm = memory.working_memory("run-5", project="web")
    assert wm.get("deploy") == "friday" and wm.get("plan") == "ship"
    assert wm.get_all() == {"deploy": "friday", "plan": "ship"}
    shown = memory.get_session("run-5")
    assert (shown["project"], shown["implicit"], shown["agent_id"]) == ("web", False, "bot")
    assert memory.working_memory("run-6", project="web").get("deploy") == "friday"
    with pytest.raises(Conflict, match="project"):
        memory.start_session(project="api", session="run-6")


def test_notes_and_clear(memory: Memory) -> None:
    wm = memory.working_memory("run-7")
    wm.note("first")
    wm.note("second")
    assert wm.notes() == ["first", "second"]
    wm.set("a", 1)
    wm.set("b", 2)
    assert wm.clear() == 2 and wm.keys() == []
