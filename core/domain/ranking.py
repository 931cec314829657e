"""Ranking rules shared by the context export, the CLI and the workbench.

Plain functions over stored documents (no pydantic, no I/O), so the hot
context path can use them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .decay import live_confidence

#: How much a lesson's scope counts for a task: its own task, every task, a project.
SCOPE_WEIGHT = {"task": 1.0, "global": 0.75, "project": 0.5}


def card_rank_key(card: dict[str, Any]) -> tuple[int, int, int, str]:
    """seen_count desc, then last_seen_episode desc, then the first created."""
    return (
        -int(card["seen_count"]),
        -int(card["last_seen_episode"]),
        int(card["first_seen_episode"]),
        card["id"],
    )


def library_card_order(card: dict[str, Any]) -> tuple[int, int]:
    """The episodic library's card order, for a stable sort of its own card list
    (core/domain/episodic_cards.py): seen_count, then last_seen_episode, both descending;
    ties keep their place in that list."""
    return (-int(card["seen_count"]), -int(card["last_seen_episode"]))


def ranked_cards(cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cards in ranking order (the same everywhere: context, CLI, workbench)."""
    return sorted(cards, key=card_rank_key)


def scope_match(scope: str, task_id: str | None, project: str | None = None) -> float:
    """0 when a lesson is for another task or project; otherwise its scope's weight.

    Without a ``project``, project lessons keep their lower weight for every
    context; with one, that project's lessons match as fully as the task's own
    and other projects' lessons are left out.
    """
    kind, _, value = scope.partition(":")
    if kind == "task":
        return SCOPE_WEIGHT["task"] if value == task_id else 0.0
    if kind == "project" and project:
        return SCOPE_WEIGHT["task"] if value == project else 0.0
    return SCOPE_WEIGHT.get(kind, 0.0)


def ranked_lessons(
    lessons: list[dict[str, Any]],
    task_id: str | None,
    now: datetime,
    project: str | None = None,
) -> list[tuple[float, dict[str, Any]]]:
    """Live lessons that apply, by effective confidence × scope match (best first; on a
    tie, the newest first)."""
    scored = []
    for lesson in lessons:
        weight = scope_match(lesson["scope"], task_id, project)
        if weight <= 0:
            continue
        confidence = live_confidence(lesson, now)
        if confidence is None:
            continue
        scored.append((round(confidence * weight, 6), lesson))
    # Ties go to the newer lesson: oldest-first let ten old lessons of equal confidence
    # hold the context for good, and a lesson just learned never showed.
    scored.sort(key=lambda pair: (pair[1]["created_at"], pair[1]["id"]), reverse=True)
    scored.sort(key=lambda pair: -pair[0])
    return scored


def active_rules(rules: list[dict[str, Any]], scope: str) -> list[dict[str, Any]]:
    """A scope's active rules, oldest first (by ``seq``)."""
    return sorted((r for r in rules if r["scope"] == scope and r["active"]), key=lambda r: r["seq"])
