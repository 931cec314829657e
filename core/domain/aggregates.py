"""Incremental aggregates: what the hot paths read instead of all of history.

Recording an episode updates these in the same transaction, so building the
context or the stats never scans the episode shards:

- ``meta/episodes``: total recorded, last consolidation, the last 100
  episodes (compact), recent failures, the last distinct mistakes/successes;
- ``task_stats/<task>``: count, score sum and mean, outcome counts, the
  task's last episodes and a tail of its score history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base.text import ellipsize
from ..storage.store import Store
from ..storage.tables import physical_name
from . import failures

META = "meta"
EPISODES_DOC = "episodes"
TASKS = "task_stats"
RECENT = 100
TASK_RECENT = 10
SCORE_TAIL = 200
DISTINCT_RECENT = 10
#: Characters of a summary the aggregates keep: every reader wants at most 120
#: (context lines, consolidation); an episode's summary may hold 100,000.
SUMMARY_KEEP = 1000


def compact(episode: dict[str, Any]) -> dict[str, Any]:
    """What the aggregates keep of one episode (its agent when it has one: the context
    of an isolated agent shows only its own and global episodes)."""
    entry = {
        "id": episode["id"],
        "index": episode["index"],
        "outcome": episode["outcome"],
        "recorded_at": episode["created_at"],
        "score": episode["score"],
        "steps": episode["steps"],
        "summary": ellipsize(episode.get("summary", ""), SUMMARY_KEEP),
        "task_id": episode["task_id"],
    }
    if episode.get("agent_id"):
        entry["agent_id"] = episode["agent_id"]
    return entry


def empty_global() -> dict[str, Any]:
    """The aggregate of an empty store."""
    return {
        "id": EPISODES_DOC,
        "distinct_mistakes": 0,
        "distinct_successes": 0,
        "last_consolidated_at": 0,
        "recent": [],
        "recent_failures": [],
        "recent_mistakes": [],
        "recent_successes": [],
        "stored_episodes": 0,
        "total_episodes": 0,
    }


def recent_origins(glob: dict[str, Any], plural: str) -> list[dict[str, Any] | None]:
    """The episode (``{"id", "index"}``) that first reported each of the recent distinct
    ``mistakes`` or ``successes``, in step with ``recent_<plural>`` (None where unknown:
    stores recorded before episodes were noted, imported history)."""
    texts = glob.get(f"recent_{plural}") or []
    origins = glob.get(f"recent_{plural}_episodes")
    if not isinstance(origins, list) or len(origins) != len(texts):
        return [None] * len(texts)
    return origins


#: The prior failures by task and kind (``failures.note_prior``), a ``meta`` document of
#: their own: they fill ~66 KB at their cap and change only when an episode fails, while
#: the rest of the aggregate (~29 KB) is written by every episode. Kept inside it, every
#: episode's commit carried both.
FAILURE_KINDS_DOC = "failure_kinds"


def read_global(store: Store) -> dict[str, Any]:
    """The global aggregate (a copy; ``failure_kinds`` comes from its own document, or
    from inside the aggregate in a store written before it had one)."""
    docs = store.docs(META)
    doc = docs.get(EPISODES_DOC)
    glob = {**empty_global(), **doc} if doc else empty_global()
    held = docs.get(FAILURE_KINDS_DOC)
    if held is not None:
        kinds = held.get("kinds")
        glob["failure_kinds"] = kinds if kinds is not None else {}
    return glob


def write_global(store: Store, glob: dict[str, Any]) -> None:
    """Store the global aggregate (call inside a transaction); ``failure_kinds`` goes to
    its own document, written only when it changed."""
    doc = dict(glob)
    kinds = doc.pop("failure_kinds", None)
    store.put(META, EPISODES_DOC, doc)
    if kinds is None:
        return
    held = store.docs(META).get(FAILURE_KINDS_DOC)
    # note_prior makes a new mapping when it changes anything: the one read is unchanged.
    if held is None or held.get("kinds") is not kinds:
        store.put(META, FAILURE_KINDS_DOC, {"id": FAILURE_KINDS_DOC, "kinds": kinds})


def task_table(task_id: str) -> str:
    """The physical table holding one task's aggregate."""
    return physical_name(TASKS, {"task_id": task_id})


def read_task(store: Store, task_id: str) -> dict[str, Any] | None:
    """One task's aggregate, or None."""
    doc = store.docs(task_table(task_id)).get(task_id)
    return dict(doc) if doc else None


def all_tasks(store: Store) -> list[dict[str, Any]]:
    """Every task's aggregate, by task id."""
    docs = [d for name in store.table_names(TASKS) for d in store.docs(name).values()]
    return sorted((dict(d) for d in docs), key=lambda d: d["task_id"])


def write_tasks(store: Store, tasks: dict[str, dict[str, Any]]) -> None:
    """Store task aggregates (each in its own table)."""
    for task_id, doc in tasks.items():
        store.put(task_table(task_id), task_id, doc)


def empty_task(task_id: str) -> dict[str, Any]:
    """The aggregate of a task with no episodes."""
    return {
        "id": task_id,
        "task_id": task_id,
        "episodes": 0,
        "score_sum": 0.0,
        "mean_score": 0.0,
        "outcomes": {"failure": 0, "partial": 0, "success": 0},
        "recent": [],
        "score_tail": [],
        "last_recorded_at": None,
        "history_scores": 0,
    }


def add_episode(
    glob: dict[str, Any], task: dict[str, Any], episode: dict[str, Any], now: datetime
) -> None:
    """Fold one episode recorded at ``now`` into the aggregates (in place)."""
    entry = compact(episode)
    glob["total_episodes"] = max(int(glob["total_episodes"]), int(episode["index"]))
    glob["stored_episodes"] = int(glob["stored_episodes"]) + 1
    glob["recent"] = [*glob["recent"], entry][-RECENT:]
    if episode["outcome"] == "failure":
        summary = failures.summary_of(episode)
        glob["recent_failures"] = failures.add_to_recent(glob["recent_failures"], summary, now)
        failures.note_prior(glob, summary, now)
    add_scores(task, [episode["score"]])
    agent = episode.get("agent_id")
    if agent:
        # Per agent: [episodes, score sum], so an isolated agent's mean leaves out the
        # other agents' episodes without reading them.
        by_agent = {**(task.get("by_agent") or {})}
        count, total = by_agent.get(agent) or [0, 0.0]
        by_agent[agent] = [int(count) + 1, float(total) + float(episode["score"])]
        task["by_agent"] = by_agent
    task["outcomes"] = {**task["outcomes"]}
    task["outcomes"][episode["outcome"]] = task["outcomes"].get(episode["outcome"], 0) + 1
    task["recent"] = [*task["recent"], entry][-TASK_RECENT:]
    task["last_recorded_at"] = episode["created_at"]


def add_scores(task: dict[str, Any], scores: list[float]) -> None:
    """Add scores to a task's history in order (sequential sum, as a plain loop would)."""
    total = float(task["score_sum"])
    for score in scores:
        total += score
    task["score_sum"] = total
    task["episodes"] = int(task["episodes"]) + len(scores)
    task["mean_score"] = total / task["episodes"] if task["episodes"] else 0.0
    task["score_tail"] = [*task["score_tail"], *scores][-SCORE_TAIL:]


def visible_scores(task: dict[str, Any], view: str) -> tuple[int, float]:
    """(episodes, score sum) of a task's aggregate that ``view`` sees: every episode
    but other agents' (core/ledger/isolation.py)."""
    count, total = int(task["episodes"]), float(task["score_sum"])
    for agent, (n, summed) in (task.get("by_agent") or {}).items():
        if agent != view:
            count -= int(n)
            total -= float(summed)
    return count, total
