"""``--style episodic``: exactly the layout of the episodic training-memory library.

Described in docs/MEMORY.md, The context.

An agent that used ``build_memory_context`` from that library gets the same
string from memwork, so switching is a drop-in change.
"""

from __future__ import annotations

from typing import Any

from ...domain.aggregates import recent_origins
from ...domain.ranking import active_rules, library_card_order, ranked_cards
from ...models.card_text import plain_text
from . import sources
from .budget import Line, Section
from .sources import Ref

HEADER = "## MEMORY FROM PAST EPISODES"
MAX_RULES = 5
MAX_RECENT = 3
P_EPISODES, P_MEAN, P_MISTAKES, P_CARDS, P_GLOBAL, P_TASK = 0, 1, 2, 3, 4, 5
#: The "Relevant memories" a query brings: kept longer than the mistakes to avoid,
#: dropped before the mistake cards and the rules.
P_RELEVANT = (P_MISTAKES + P_CARDS) / 2


def build_sections(
    data: dict[str, Any],
    task_id: str | None,
    *,
    max_rules: int | None = None,
    max_recent: int | None = None,
) -> list[Section]:
    """The library's sections, in its order; ``max_rules`` rules per rules section and
    the task's ``max_recent`` last episodes, as the library's own knobs (5 and 3)."""
    max_rules = max_rules or MAX_RULES
    max_recent = max_recent or MAX_RECENT
    sections: list[Section] = []
    rules = data["rules"]
    if task_id:
        task_rules = active_rules(rules, f"task:{task_id}")[-max_rules:]
        sections.append(
            Section(
                "task_rules",
                f"Rules for {task_id}:",
                [Line(f"  - {r['text']}", P_TASK, sources.rule(r)) for r in task_rules],
            )
        )
    sections.append(
        Section(
            "global_rules",
            "General rules (all tasks):",
            [
                Line(f"  - {r['text']}", P_GLOBAL, sources.rule(r))
                for r in active_rules(rules, "global")[-max_rules:]
            ],
        )
    )
    sections.append(
        Section(
            "mistakes",
            "Mistakes to avoid:",
            [
                Line(f"  - AVOID: {m}", P_MISTAKES, [sources.episode(o)] if o else [])
                for m, o in list(
                    zip(
                        data["glob"]["recent_mistakes"],
                        recent_origins(data["glob"], "mistakes"),
                        strict=True,
                    )
                )[-3:]
            ],
        )
    )
    live = {c["id"]: c for c in data["cards"]}
    sections.append(
        Section(
            "mistake_cards",
            "Structured mistake cards:",
            [
                Line(
                    f"  - [{c['mistake_type']}, seen {c['seen_count']}x] "
                    f"{plain_text(c, 'lesson')} Evidence: {plain_text(c, 'evidence')}",
                    P_CARDS,
                    _card_sources(c, live),
                )
                for c in _top_cards(data)
            ],
        )
    )
    if task_id:
        recent = [e for e in data["glob"]["recent"] if e["task_id"] == task_id][-max_recent:]
        sections.append(
            Section(
                "episodes",
                f"Recent {task_id} episodes:",
                [
                    Line(
                        f"  - Score {e['score']:.2f} in {e['steps']} steps: {e['summary'][:100]}",
                        P_EPISODES,
                        [sources.episode(e)],
                    )
                    for e in recent
                ],
            )
        )
        stats = data.get("task")
        if stats and stats["episodes"]:
            mean = stats["score_sum"] / stats["episodes"]
            line = f"Your mean score on {task_id}: {mean:.2f} (over {stats['episodes']} episodes)"
            sections.append(
                Section("mean_score", None, [Line(line, P_MEAN, sources.task(task_id))])
            )
    return sections


def _top_cards(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The library's top 3: from its own 30 (core/domain/episodic_cards.py), ordered as it
    orders them (a stable sort of its list); a store without that list ranks the table."""
    window = data.get("episodic_cards")
    if window is None:
        return ranked_cards(data["cards"])[:3]
    return sorted(window, key=library_card_order)[:3]


def _card_sources(card: dict[str, Any], live: dict[str, dict[str, Any]]) -> list[Ref]:
    """The card a line came from (with its sightings while it is in the table)."""
    held = live.get(card.get("id") or "")
    return sources.card(held) if held is not None else [{"kind": "card", "id": card.get("id")}]


def render(sections: list[Section]) -> str:
    """The header, then each section after a blank line; ``""`` when only the header is left."""
    if not sections:
        return ""
    lines = [HEADER]
    for section in sections:
        body = [line.text for line in section.lines]
        if section.heading:
            lines.append(f"\n{section.heading}")
            lines.extend(body)
        else:
            lines.extend(f"\n{t}" for t in body)
    return "\n".join(lines)
