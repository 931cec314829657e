"""``--format episodic``: the agent_memory.json of the episodic training-memory library.

Everything is kept (agent text scrubbed, as on every way in): rules in their
order and text, the complete per-task score history (beyond the 100-entry
episode log), distinct mistakes and successes, mistake cards with their counts
and episode indexes, the episode count and the last consolidation. Episode indexes continue from
``total_episodes``, so recording more episodes and rendering
``--style episodic`` gives what that library would give.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base import ids
from ...base.clock import iso, parse_instant
from ...base.errors import InvalidInput
from ...domain import aggregates, episodic_cards, failures
from ...domain.distinct import Kind as DistinctKind
from ...domain.distinct import doc_id as distinct_id
from ...domain.rules import ACTIVE_GLOBAL, ACTIVE_PER_TASK
from ...models.card import DEFAULT_LESSON, TEXT_CAP
from ...models.episode import outcome_for
from ...privacy import scrub
from .bundle import Bundle

KEYS = {"global_rules", "task_rules", "episode_log", "score_history"}


def looks_like(data: Any) -> bool:
    """Sniff: the library's top-level keys."""
    return isinstance(data, dict) and len(KEYS & set(data)) >= 2 and "agents" not in data


def _strings(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list):
        raise InvalidInput(key, "must be a list of strings")
    for number, item in enumerate(value, start=1):
        if not isinstance(item, str):
            raise InvalidInput(f"{key}[{number}]", "must be a string")
    return [scrub(item) for item in value]


def _score(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(where, f"must be a number between 0.0 and 1.0 (got {value!r})")
    return float(value)


def _rule(text: str, scope: str, seq: int, active: bool, stamp: str) -> dict[str, Any]:
    polarity = "works" if text.startswith(("[WORKS]", "[HIGH SCORE")) else "note"
    if text.startswith("[AVOID]"):
        polarity = "avoid"
    return {
        "active": active,
        "created_at": stamp,
        "id": ids.new_id("rule"),
        "polarity": polarity,
        "scope": scope,
        "seq": seq,
        "source": "imported",
        "text": text,
        "updated_at": stamp,
    }


def parse(data: Any, *, now: datetime) -> Bundle:
    """Turn an agent_memory.json document into a bundle."""
    if not isinstance(data, dict):
        raise InvalidInput("document", "must be a JSON object")
    stamp = iso(now)
    bundle = Bundle("episodic")
    seq = 0

    global_rules = _strings(data, "global_rules")
    for n, text in enumerate(global_rules):
        seq += 1
        active = n >= len(global_rules) - ACTIVE_GLOBAL
        bundle.add("rules", _rule(text, "global", seq, active, stamp))
    task_rules = data.get("task_rules") or {}
    if not isinstance(task_rules, dict):
        raise InvalidInput("task_rules", "must be an object of task → list of rules")
    for task, texts in task_rules.items():
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise InvalidInput(f"task_rules.{task}", "must be a list of strings")
        for n, text in enumerate(texts):
            seq += 1
            active = n >= len(texts) - ACTIVE_PER_TASK
            bundle.add("rules", _rule(scrub(text), f"task:{task}", seq, active, stamp))

    log = data.get("episode_log") or []
    if not isinstance(log, list):
        raise InvalidInput("episode_log", "must be a list of episodes")
    total = data.get("total_episodes", len(log))
    if isinstance(total, bool) or not isinstance(total, int) or total < 0:
        raise InvalidInput("total_episodes", f"must be a whole number >= 0 (got {total!r})")
    total = max(total, len(log))
    last = data.get("last_consolidated_at")
    # The library once stored an ISO string here; it treats that as 0.
    last_consolidated = last if isinstance(last, int) and not isinstance(last, bool) else 0

    glob = aggregates.empty_global()
    glob["total_episodes"] = total
    glob["last_consolidated_at"] = min(last_consolidated, total)
    first_index = total - len(log) + 1
    log_docs: list[dict[str, Any]] = []
    for n, entry in enumerate(log, start=1):
        where = f"episode_log[{n}]"
        if not isinstance(entry, dict):
            raise InvalidInput(where, "must be an object")
        score = _score(entry.get("score"), f"{where}.score")
        steps = entry.get("steps", 0)
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise InvalidInput(f"{where}.steps", f"must be a whole number >= 0 (got {steps!r})")
        when = entry.get("timestamp")
        recorded = iso(parse_instant(when, field=f"{where}.timestamp")) if when else stamp
        task = str(entry.get("task_id") or "unknown")
        summary = entry.get("summary", "")
        if not isinstance(summary, str):
            raise InvalidInput(f"{where}.summary", "must be a string")
        doc: dict[str, Any] = {
            "card_ids": [],
            "created_at": recorded,
            "errors": [],
            "id": ids.new_id("ep"),
            "index": first_index + n - 1,
            "metadata": {"imported_from": "episodic"},
            "mistake_cards": [],
            "mistakes": [],
            "outcome": outcome_for(score),
            "score": score,
            "session_id": None,
            "steps": steps,
            "successes": [],
            "summary": scrub(summary),
            "task_id": task,
            "updated_at": recorded,
            "worker_id": None,
        }
        if doc["outcome"] == "failure" and failures.enabled():
            doc["errors"] = [failures.synthesise_error(doc)]
        log_docs.append(doc)
        bundle.add("episodes", doc)

    history = data.get("score_history") or {}
    if not isinstance(history, dict):
        raise InvalidInput("score_history", "must be an object of task → list of scores")
    tasks: dict[str, dict[str, Any]] = {}
    for task, scores in history.items():
        if not isinstance(scores, list):
            raise InvalidInput(f"score_history.{task}", "must be a list of scores")
        values = [_score(s, f"score_history.{task}[{i}]") for i, s in enumerate(scores, start=1)]
        stats = aggregates.empty_task(task)
        aggregates.add_scores(stats, values)
        stats["outcomes"] = {
            k: sum(1 for s in values if outcome_for(s) == k)
            for k in ("failure", "partial", "success")
        }
        tasks[task] = stats
    for doc in log_docs:
        task_stats = tasks.get(doc["task_id"])
        if task_stats is None:  # a log entry whose task has no score history: count it
            task_stats = tasks[doc["task_id"]] = aggregates.empty_task(doc["task_id"])
            aggregates.add_scores(task_stats, [doc["score"]])
            task_stats["outcomes"][doc["outcome"]] += 1
        recent = [*task_stats["recent"], aggregates.compact(doc)]
        task_stats["recent"] = recent[-aggregates.TASK_RECENT :]
        task_stats["last_recorded_at"] = doc["created_at"]
        glob["recent"] = [*glob["recent"], aggregates.compact(doc)][-aggregates.RECENT :]
        if doc["outcome"] == "failure":
            summary = failures.summary_of(doc)
            glob["recent_failures"] = failures.add_to_recent(glob["recent_failures"], summary, now)
            failures.note_prior(glob, summary, now)
    for stats in tasks.values():
        in_log = sum(1 for d in log_docs if d["task_id"] == stats["task_id"])
        stats["history_scores"] = max(0, stats["episodes"] - in_log)
    glob["stored_episodes"] = len(log_docs)

    counts = {"id": "counters", "rule_seq": seq}
    kinds: tuple[tuple[DistinctKind, str], ...] = (
        ("mistake", "mistakes"),
        ("success", "successes"),
    )
    for kind, key in kinds:
        texts = list(dict.fromkeys(t for t in _strings(data, key) if t))
        for n, text in enumerate(texts, start=1):
            bundle.history.setdefault("distinct", []).append(
                {
                    "first_seen_at": stamp,
                    "first_seen_episode": 0,
                    "id": distinct_id(kind, text),
                    "kind": kind,
                    "seq": n,
                    "text": text,
                }
            )
        glob[f"recent_{key}"] = texts[-aggregates.DISTINCT_RECENT :]
        glob[f"distinct_{key}"] = len(texts)
        counts[f"distinct_{kind}"] = len(texts)

    cards = data.get("mistake_cards") or []
    if not isinstance(cards, list):
        raise InvalidInput("mistake_cards", "must be a list of cards")
    window = []
    for n, card in enumerate(cards, start=1):
        where = f"mistake_cards[{n}]"
        if not isinstance(card, dict):
            raise InvalidInput(where, "must be an object")
        seen = card.get("seen_count", 1)
        if isinstance(seen, bool) or not isinstance(seen, int) or seen < 1:
            raise InvalidInput(f"{where}.seen_count", f"must be a whole number >= 1 (got {seen!r})")
        first = card.get("first_seen_episode", 0)
        last_seen = card.get("last_seen_episode", first)
        for name, value in (("first_seen_episode", first), ("last_seen_episode", last_seen)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(
                    f"{where}.{name}", f"must be a whole number >= 0 (got {value!r})"
                )
        doc = {
            "bad_decision": scrub(str(card.get("bad_decision") or "")),
            "correct_decision": scrub(str(card.get("correct_decision") or "")),
            "created_at": stamp,
            "evidence": scrub(str(card.get("evidence") or ""))[:TEXT_CAP],
            "first_seen_episode": first,
            "id": ids.new_id("card"),
            "last_seen_episode": last_seen,
            "lesson": (scrub(str(card.get("lesson") or "")) or DEFAULT_LESSON)[:TEXT_CAP],
            "mistake_type": str(card.get("mistake_type") or "unknown_mistake"),
            "seen_count": seen,
            "task_id": str(card.get("task_id") or "unknown"),
            "updated_at": stamp,
            "worker_id": card.get("worker_id") or None,
        }
        bundle.add("mistake_cards", doc)
        window.append(episodic_cards.entry(doc))

    # The file's own card list, in its order: what --style episodic ranks from.
    window_doc = {"id": episodic_cards.DOC, "cards": window}
    bundle.history["meta"] = [glob, counts, window_doc]
    bundle.history["task_stats"] = list(tasks.values())
    return bundle
