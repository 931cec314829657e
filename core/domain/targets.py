"""The tasks and projects a store knows: what a context can be asked for by name.

An agent may ask ``memwork context --task T`` for a task nothing was recorded
for yet (its approved lessons still apply), so the names are offered, never
required: a task is known from its episodes, its rules and the lessons scoped to
it; a project from its sessions and the lessons scoped to it. A scope that names
neither may be a typo (``task:deploy api`` beside ``deploy-api``), which is what
:func:`unknown_scope` tells a person about before a lesson is kept under it.

Everything here reads small tables only (task aggregates, active rules, lessons,
sessions), never the episode history or the rule archive.
"""

from __future__ import annotations

from typing import NamedTuple

from ..storage.store import Store
from . import aggregates, lessons, readable, sessions
from .rule_archive import ARCHIVE


class Targets(NamedTuple):
    """Known names: task id → episodes recorded for it (0: known from rules or
    lessons only), and project names, each sorted."""

    tasks: dict[str, int]
    projects: list[str]


def known_targets(store: Store) -> Targets:
    """Every task and project the store can name (one consistent read)."""
    tasks: dict[str, int] = {}
    projects: set[str] = set()
    with store.reading():
        for task in aggregates.all_tasks(store):
            tasks[task["task_id"]] = int(task.get("episodes", 0))
        for name in store.table_names("rules"):
            if name.startswith(ARCHIVE + "."):
                continue  # inactive rules: their scopes are in the active tables too
            for rule in readable.docs(store, name).values():
                _add_scope(str(rule.get("scope", "")), tasks, projects)
        for lesson in readable.docs(store, lessons.TABLE).values():
            _add_scope(str(lesson.get("scope", "")), tasks, projects)
        for session in readable.docs(store, sessions.TABLE).values():
            if session.get("project"):
                projects.add(str(session["project"]))
    return Targets(dict(sorted(tasks.items())), sorted(projects))


def _add_scope(scope: str, tasks: dict[str, int], projects: set[str]) -> None:
    kind, _, name = scope.partition(":")
    if kind == "task" and name:
        tasks.setdefault(name, 0)
    elif kind == "project" and name:
        projects.add(name)


def unknown_scope(scope: str, targets: Targets) -> str | None:
    """Why ``scope`` looks like a typo (it names a task or project the store does not
    know, or holds a space no known name has), else None. ``global`` is always known."""
    kind, _, name = scope.strip().partition(":")
    if kind not in ("task", "project") or not name:
        return None
    known = list(targets.tasks) if kind == "task" else targets.projects
    if name in known:
        return None
    near = _nearest(name, known)
    hint = f" (did you mean {kind}:{near}?)" if near else ""
    if any(ch.isspace() for ch in name):
        return f"{kind} names have no spaces{hint}"
    return f"no {kind} {name!r} is known yet: no episodes, rules or lessons name it{hint}"


def _nearest(name: str, known: list[str]) -> str | None:
    from rapidfuzz import fuzz, process

    found = process.extractOne(name, known, scorer=fuzz.ratio, score_cutoff=70)
    return str(found[0]) if found else None
