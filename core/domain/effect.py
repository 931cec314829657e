"""Lesson effect: did the task go better after the lesson was written?

For a lesson scoped to a task (``task:<id>``), its effect compares that task's
episodes *before* the lesson was created with those recorded *after* it: the
count and mean score of each side, and the change in mean. It is None (JSON
``null``) where nothing can be compared: a lesson of another scope, or a side
with no episodes.

This is a correlation, not a proof: other lessons, rules and changes to the
task land at the same time. It tells a curator which lessons came before
better scores and which changed nothing.

How it is computed without reading history: when a task-scoped lesson is
created, :func:`base_for` copies the task's running totals (episodes and score
sum, from the task aggregate) into the lesson as ``effect_base``. Later, the
*after* side is the task's totals now minus that base, so an effect costs one
small aggregate read however long the history. "Before" is therefore every
score the task had when the lesson was written (imported score history
included), and "after" every episode recorded since, in recording order.

A lesson without a base for its scope's task (stored before this existed,
imported, or moved to another task by an edit) is compared by timestamps
instead: episodes of the task recorded before its ``created_at`` against those
recorded later, read from the episode shards (:func:`scan_tasks`). Callers
that show many lessons scan once for all of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..storage.store import Store
from . import aggregates

Doc = dict[str, Any]


def task_of(scope: str) -> str | None:
    """The task of a ``task:<id>`` scope, else None."""
    kind, _, value = scope.partition(":")
    return value if kind == "task" and value else None


def base_for(store: Store, scope: str) -> dict[str, Any] | None:
    """The task's running totals for a lesson being created with ``scope`` (inside the
    lesson's transaction), or None for a scope that is not a task's."""
    task = task_of(scope)
    if task is None:
        return None
    stats = aggregates.read_task(store, task) or aggregates.empty_task(task)
    return {
        "task": task,
        "episodes": int(stats["episodes"]),
        "score_sum": float(stats["score_sum"]),
    }


def _side(count: int, total: float) -> dict[str, Any]:
    return {"episodes": count, "mean_score": round(total / count, 4) if count else None}


def _compare(task: str, before: tuple[int, float], after: tuple[int, float], basis: str) -> Doc:
    if before[0] <= 0 or after[0] <= 0:
        return {}
    first, second = _side(*before), _side(*after)
    return {
        "task": task,
        "before": first,
        "after": second,
        "change": round(second["mean_score"] - first["mean_score"], 4),
        "basis": basis,
    }


def from_base(lesson: Doc, stats: Doc | None) -> Doc | None:
    """The effect from the lesson's ``effect_base`` and its task's aggregate ``stats``.

    Returns None when nothing can be compared, and ``{}`` when the lesson has no
    usable base (the caller then compares by timestamps, :func:`from_scan`).
    """
    task = task_of(lesson["scope"])
    if task is None:
        return None
    base = lesson.get("effect_base")
    if not isinstance(base, dict) or base.get("task") != task:
        return {}
    episodes = int(stats["episodes"]) if stats else 0
    score_sum = float(stats["score_sum"]) if stats else 0.0
    before = (int(base["episodes"]), float(base["score_sum"]))
    after = (episodes - before[0], score_sum - before[1])
    return _compare(task, before, after, "recorded") or None


def needs_scan(lesson: Doc) -> bool:
    """Whether the lesson's effect must be computed from the episode shards."""
    task = task_of(lesson["scope"])
    base = lesson.get("effect_base")
    return task is not None and not (isinstance(base, dict) and base.get("task") == task)


def scan_tasks(store: Store, tasks: Iterable[str]) -> dict[str, list[tuple[str, float]]]:
    """(recorded_at, score) of every episode of ``tasks`` (reads every episode shard;
    call inside ``store.reading()``)."""
    from . import episodes

    wanted = set(tasks)
    found: dict[str, list[tuple[str, float]]] = {t: [] for t in wanted}
    if not wanted:
        return found
    for doc in episodes.iter_all(store):
        if doc["task_id"] in wanted:
            found[doc["task_id"]].append((doc["created_at"], float(doc["score"])))
    return found


def from_scan(lesson: Doc, scores: list[tuple[str, float]]) -> Doc | None:
    """The effect by timestamps: the task's episodes recorded before the lesson's
    ``created_at`` against those recorded after it (the same instant counts as before)."""
    task = task_of(lesson["scope"])
    if task is None:
        return None
    created = lesson["created_at"]
    before = [s for at, s in scores if at <= created]
    after = [s for at, s in scores if at > created]
    result = _compare(task, (len(before), sum(before)), (len(after), sum(after)), "timestamps")
    return result or None


def effects(store: Store, lessons: list[Doc]) -> dict[str, Doc | None]:
    """Lesson id → effect for every lesson given (one read; scans history only for
    lessons without a base, once for all of them)."""
    out: dict[str, Doc | None] = {}
    with store.reading():
        stats: dict[str, Doc | None] = {}
        pending = []
        for lesson in lessons:
            task = task_of(lesson["scope"])
            if task is not None and task not in stats:
                stats[task] = aggregates.read_task(store, task)
            value = from_base(lesson, stats.get(task) if task else None)
            if value == {}:
                pending.append(lesson)
            else:
                out[lesson["id"]] = value
        if pending:
            scores = scan_tasks(store, {task_of(x["scope"]) or "" for x in pending})
            for lesson in pending:
                out[lesson["id"]] = from_scan(lesson, scores[task_of(lesson["scope"]) or ""])
    return out


def effect_of(store: Store, lesson: Doc) -> Doc | None:
    """One lesson's effect (see the module docstring)."""
    return effects(store, [lesson])[lesson["id"]]
