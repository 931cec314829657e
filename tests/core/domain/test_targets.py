"""Known tasks and projects (core/domain/targets.py): what a context can be asked for by name,
and which scopes look like typos."""

from __future__ import annotations

from memwork.core.domain import episodes, lessons, rules, sessions
from memwork.core.domain.targets import known_targets, unknown_scope
from memwork.core.storage.store import Store


def test_tasks_and_projects_come_from_every_record_that_names_them(store: Store, now) -> None:  # noqa: ANN001
    episodes.record_episodes(
        store, [{"task_id": "deploy-api", "score": 0.9, "steps": 3}], now=now, actor="cli"
    )
    rules.add_rule(store, "Tag releases", scope="task:release", now=now, actor="cli")
    lessons.add_lesson(store, "Canary first", scope="task:rollout", now=now, actor="cli")
    lessons.add_lesson(store, "Money is Decimal", scope="project:billing", now=now, actor="cli")
    sessions.start_session(store, project="checkout", now=now, actor="cli")
    found = known_targets(store)
    assert found.tasks == {"deploy-api": 1, "release": 0, "rollout": 0}
    assert found.projects == ["billing", "checkout"]


def test_an_unknown_or_spaced_scope_is_called_out_with_the_nearest_name(store: Store, now) -> None:  # noqa: ANN001
    episodes.record_episodes(
        store, [{"task_id": "deploy-api", "score": 0.9, "steps": 3}], now=now, actor="cli"
    )
    found = known_targets(store)
    assert unknown_scope("global", found) is None
    assert unknown_scope("task:deploy-api", found) is None
    spaced = unknown_scope("task:deploy api", found)
    assert spaced == "task names have no spaces (did you mean task:deploy-api?)"
    typo = unknown_scope("task:deploy-apj", found)
    assert typo is not None and "no task 'deploy-apj' is known" in typo
    assert "did you mean task:deploy-api?" in typo
    assert "did you mean" not in (unknown_scope("project:payments", found) or "")
