"""An independent model of the episodic training-memory library's file semantics.

Written from docs/MEMORY.md (The context) as plain list manipulation on the ``agent_memory.json``
dict, the way that library keeps it. The benchmark uses it to build the
baseline file; tests use it as an oracle for ``--style episodic``.
"""

from __future__ import annotations

from typing import Any

KEEP_LOG = 100
RULES_PER_TASK = 10
GLOBAL_RULES = 20
CONSOLIDATE_EVERY = 20
KEEP_CARDS = 30


def empty() -> dict[str, Any]:
    """A fresh memory file."""
    return {
        "version": 1,
        "total_episodes": 0,
        "last_consolidated_at": None,
        "global_rules": [],
        "task_rules": {},
        "episode_log": [],
        "score_history": {},
        "mistakes": [],
        "successes": [],
        "mistake_cards": [],
    }


def _text(value: Any) -> Any:
    """A number where the library formats text is that number as text."""
    return str(value) if type(value) in (int, float) else value


def record(memory: dict[str, Any], ep: dict[str, Any], timestamp: str = "") -> None:
    """Fold one episode in, as the library does, then consolidate when due.

    As the library, it takes a missing score as 0.0 and a numeric string as its number,
    skips a mistake card that is not an object and reads numbers in text as text.
    """
    task = _text(ep.get("task_id", "unknown"))
    score = float(ep.get("score", 0.0))
    memory["score_history"].setdefault(task, []).append(score)
    summary = _text(ep.get("summary", ep.get("trajectory_summary", "")))
    memory["episode_log"].append(
        {
            "timestamp": timestamp,
            "task_id": task,
            "score": score,
            "steps": ep.get("steps", 0),
            "summary": summary,
        }
    )
    memory["total_episodes"] += 1
    for key in ("mistakes", "successes"):
        for text in ep.get(key, []):
            if text and text not in memory[key]:
                memory[key].append(text)
    rules = memory["task_rules"].setdefault(task, [])
    new = []
    if score >= 0.85:
        new = [f"[WORKS] {s}" for s in ep.get("successes", [])]
    elif score < 0.5:
        new = [f"[AVOID] {m}" for m in ep.get("mistakes", [])]
    for rule in new:
        if rule not in rules:
            rules.append(rule)
    memory["task_rules"][task] = rules[-RULES_PER_TASK:]
    for card in ep.get("mistake_cards", []):
        if isinstance(card, dict):
            _merge_card(
                memory, {k: _text(v) for k, v in card.items()}, task, memory["total_episodes"]
            )
    last = memory["last_consolidated_at"]
    last = 0 if not isinstance(last, int) else last
    if memory["total_episodes"] - last >= CONSOLIDATE_EVERY:
        consolidate(memory)


def _merge_card(memory: dict[str, Any], card: dict[str, Any], task: str, index: int) -> None:
    c = {
        "mistake_type": card.get("mistake_type") or "unknown_mistake",
        "task_id": card.get("task_id") or task,
        "worker_id": card.get("worker_id"),
        "correct_decision": card.get("correct_decision", ""),
    }
    key = (c["mistake_type"], c["task_id"], c["worker_id"] or "", c["correct_decision"] or "")
    for existing in memory["mistake_cards"]:
        k = (
            existing["mistake_type"],
            existing["task_id"],
            existing.get("worker_id") or "",
            existing.get("correct_decision") or "",
        )
        if k == key:
            existing["seen_count"] += 1
            existing["last_seen_episode"] = index
            if card.get("evidence"):
                existing["evidence"] = card["evidence"][:300]
            if card.get("lesson"):
                existing["lesson"] = card["lesson"][:300]
            return
    memory["mistake_cards"].append(
        {
            **c,
            "bad_decision": card.get("bad_decision", ""),
            "evidence": (card.get("evidence") or "")[:300],
            "lesson": (card.get("lesson") or "Avoid repeating this failure.")[:300],
            "seen_count": 1,
            "first_seen_episode": index,
            "last_seen_episode": index,
        }
    )
    # The library keeps its top 30: a new card sorts the list (stable) and drops the rest.
    memory["mistake_cards"].sort(
        key=lambda c: (c["seen_count"], c["last_seen_episode"]), reverse=True
    )
    del memory["mistake_cards"][KEEP_CARDS:]


def consolidate(memory: dict[str, Any]) -> None:
    """The heuristic: [HIGH SCORE x.xx] rules from the last 100 episodes."""
    fresh: list[str] = []
    for ep in memory["episode_log"][-KEEP_LOG:]:
        if ep["score"] >= 0.85 and ep["summary"]:
            rule = f"[HIGH SCORE {ep['score']:.2f}] {ep['summary'][:120]}"
            if rule not in fresh:
                fresh.append(rule)
    merged = list(dict.fromkeys(memory["global_rules"] + fresh))
    memory["global_rules"] = merged[-GLOBAL_RULES:]
    memory["last_consolidated_at"] = memory["total_episodes"]


def trim(memory: dict[str, Any]) -> None:
    """What saving does: keep only the last 100 log entries."""
    memory["episode_log"] = memory["episode_log"][-KEEP_LOG:]


def render(
    memory: dict[str, Any], task: str | None = None, max_rules: int = 5, max_recent: int = 3
) -> str:
    """The episodic context layout (docs/MEMORY.md, The context), with the library's
    two knobs."""
    out = ["## MEMORY FROM PAST EPISODES"]

    def block(heading: str, items: list[str]) -> None:
        if items:
            out.append(f"\n{heading}")
            out.extend(items)

    if task:
        block(
            f"Rules for {task}:",
            [f"  - {r}" for r in memory["task_rules"].get(task, [])[-max_rules:]],
        )
    block("General rules (all tasks):", [f"  - {r}" for r in memory["global_rules"][-max_rules:]])
    block("Mistakes to avoid:", [f"  - AVOID: {m}" for m in memory["mistakes"][-3:]])
    cards = sorted(
        memory.get("mistake_cards", []),
        key=lambda c: (c["seen_count"], c["last_seen_episode"]),
        reverse=True,
    )[:3]
    block(
        "Structured mistake cards:",
        [
            f"  - [{c['mistake_type']}, seen {c['seen_count']}x] {c['lesson']} "
            f"Evidence: {c['evidence']}"
            for c in cards
        ],
    )
    if task:
        recent = [e for e in memory["episode_log"][-KEEP_LOG:] if e["task_id"] == task][
            -max_recent:
        ]
        block(
            f"Recent {task} episodes:",
            [
                f"  - Score {e['score']:.2f} in {e['steps']} steps: {e['summary'][:100]}"
                for e in recent
            ],
        )
        scores = memory["score_history"].get(task)
        if scores:
            mean = sum(scores) / len(scores)
            out.append(f"\nYour mean score on {task}: {mean:.2f} (over {len(scores)} episodes)")
    return "" if len(out) == 1 else "\n".join(out)
