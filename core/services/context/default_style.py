"""The default context layout.

Described in docs/CONCEPTS.md, The context.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base.text import cut, one_line
from ...domain import consolidated_rules, failures
from ...domain.ranking import active_rules, ranked_cards, ranked_lessons
from . import sources
from .budget import Line, Section

# Drop order, lowest first: past sessions' summaries, episodes, lessons, a query's
# relevant memories, mistake cards, the work frontier, rules, failures, the project's
# profile, slots.
P_SUMMARIES, P_EPISODES, P_MEAN, P_LESSONS, P_CARDS, P_FRONTIER = 0, 1, 2, 3, 4, 5
P_GLOBAL_RULES, P_TASK_RULES, P_FAILURES, P_PROFILE, P_SLOTS = 6, 7, 8, 9, 10
#: Consolidated rules from other tasks' episodes: after the lessons, and dropped before
#: them (a task's context is about that task).
P_OTHER_TASKS = (P_MEAN + P_LESSONS) / 2
#: The "Relevant memories" a query brings (``--query``): kept longer than the lessons,
#: dropped before the mistake cards.
P_RELEVANT = (P_LESSONS + P_CARDS) / 2
#: Consolidated rules from other tasks' episodes shown with a task, at most.
MAX_OTHER_TASKS = 3
MAX_CARDS = 3
RECENT_EPISODES = 3
SUMMARY_WIDTH = 240


def lesson_line(lesson: dict[str, Any]) -> Line:
    """``- <lesson>``, dropped with the lessons."""
    return Line(f"- {one_line(lesson['content'])}", P_LESSONS, sources.lesson(lesson))


def global_rules(
    rules: list[dict[str, Any]], task_id: str | None, recent: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The active global rules to show, newest first, and (with a task) the consolidated
    rules other tasks' episodes gave, to show after the lessons (at most
    :data:`MAX_OTHER_TASKS`).

    A ``[HIGH SCORE x]`` rule that repeats the summary of a newer one is shown once (the
    newest). With a task, one that no recent episode of that task gave goes with the
    others; one whose episodes left the recent window stays where it was.
    """
    tasks = consolidated_rules.tasks_by_summary(recent) if task_id else {}
    seen: set[str] = set()
    shown: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    for rule in reversed(active_rules(rules, "global")):
        key = consolidated_rules.key(rule["text"])
        if key is None:
            shown.append(rule)
            continue
        if key in seen:
            continue
        seen.add(key)
        givers = tasks.get(key)
        if task_id and givers and task_id not in givers:
            others.append(rule)
        else:
            shown.append(rule)
    return shown, others[:MAX_OTHER_TASKS]


def card_line(card: dict[str, Any]) -> str:
    """``- [<type>, seen <n>x] <lesson> Evidence: <evidence>``."""
    return (
        f"- [{card['mistake_type']}, seen {card['seen_count']}x] {one_line(card['lesson'])} "
        f"Evidence: {one_line(card.get('evidence', ''))}"
    )


def episode_line(ep: dict[str, Any]) -> str:
    """``- Score 0.82 in 7 steps: <summary, <=100>``."""
    return f"- Score {ep['score']:.2f} in {ep['steps']} steps: {cut(one_line(ep['summary']), 100)}"


def mean_line(task_id: str, stats: dict[str, Any]) -> str:
    """``Your mean score on <task>: 0.64 (over 12 episodes)`` (``1 episode`` for one)."""
    mean, count = stats["mean_score"], stats["episodes"]
    episodes = "episode" if count == 1 else "episodes"
    return f"Your mean score on {task_id}: {mean:.2f} (over {count} {episodes})"


def action_line(action: dict[str, Any]) -> str:
    """``- <title> (<id>, priority N, active)``: what an agent can work on now."""
    notes = [action["id"]]
    if action.get("priority"):
        notes.append(f"priority {action['priority']}")
    if action.get("status") == "active":
        notes.append("active")
    return f"- {one_line(action['title'])} ({', '.join(notes)})"


def summary_line(session: dict[str, Any]) -> str:
    """``- <ended, date> <title>: <summary, <= 240>``."""
    title = one_line(session.get("title") or session.get("project") or session["id"])
    when = (session.get("ended_at") or "")[:10]
    return f"- {when} {title}: {cut(one_line(session['summary']), SUMMARY_WIDTH)}"


def build_sections(
    data: dict[str, Any], task_id: str | None, now: datetime, project: str | None = None
) -> list[Section]:
    """The sections, in order, from the data the context reads (``project`` ranks lessons)."""
    sections: list[Section] = []
    slots = Section("slots", "## Pinned memory")
    for slot in sorted(data["slots"], key=lambda s: (s.get("position", 0), s["label"])):
        if not slot.get("content", "").strip():
            continue
        # A slot is one unit for the budget: its heading never stays without its text.
        origin = sources.slot(slot)
        group = slot["label"]
        slots.lines.append(Line(f"### {slot['label']}", P_SLOTS, origin, group))
        slots.lines.extend(
            Line(t, P_SLOTS, origin, group) for t in slot["content"].strip().splitlines()
        )
    sections.append(slots)

    profile = data.get("profile")
    if profile and profile.get("content", "").strip():
        origin = [{"kind": "profile", "id": profile["id"], "project": profile["project"]}]
        sections.append(
            Section(
                "profile",
                f"## Project {profile['project']}",
                [
                    Line(t, P_PROFILE, origin, "profile")
                    for t in profile["content"].strip().splitlines()
                ],
            )
        )

    rules = data["rules"]
    ranked = ranked_lessons(data["lessons"], task_id, now, project)
    # A lesson scoped to the task is listed under it, not among the general ones.
    own_scope = f"task:{task_id}" if task_id else None
    task_lessons = [x for _, x in ranked if x["scope"] == own_scope]
    if task_id:
        task_rules = reversed(active_rules(rules, f"task:{task_id}"))
        heading = "Rules and lessons" if task_lessons else "Rules"
        task_section = Section(
            "task_rules",
            f"## {heading} for {task_id}",
            [Line(f"- {r['text']}", P_TASK_RULES, sources.rule(r)) for r in task_rules],
        )
        task_section.lines.extend(lesson_line(x) for x in task_lessons)
        sections.append(task_section)
    frontier = data.get("actions") or []
    if frontier:
        sections.append(
            Section(
                "frontier",
                "## Work to do now",
                [
                    Line(action_line(a), P_FRONTIER, [{"kind": "action", "id": a["id"]}])
                    for a in frontier
                ],
            )
        )
    general = Section("global", "## General rules and lessons")
    mine, others = global_rules(rules, task_id, data["glob"].get("recent") or [])
    general.lines.extend(Line(f"- {r['text']}", P_GLOBAL_RULES, sources.rule(r)) for r in mine)
    general.lines.extend(lesson_line(x) for _, x in ranked if x["scope"] != own_scope)
    general.lines.extend(Line(f"- {r['text']}", P_OTHER_TASKS, sources.rule(r)) for r in others)
    sections.append(general)

    sections.append(
        Section(
            "mistake_cards",
            "## Mistakes to avoid",
            [
                Line(card_line(c), P_CARDS, sources.card(c))
                for c in ranked_cards(data["cards"])[:MAX_CARDS]
            ],
        )
    )
    shown = failures.entries_for_context(data["glob"]["recent_failures"], now)
    prior = failures.prior_entries(
        list({id(f): f for _, f in shown}.values()), data["glob"].get("failure_kinds") or {}, now
    )
    sections.append(
        Section(
            "failures",
            "## Past failures to avoid",
            [Line(t, P_FAILURES, [sources.episode(failure)]) for t, failure in [*shown, *prior]],
        )
    )
    summaries = data.get("summaries") or []
    if summaries:
        sections.append(
            Section(
                "sessions",
                "## Recent sessions",
                [
                    Line(summary_line(d), P_SUMMARIES, [{"kind": "session", "id": d["id"]}])
                    for d in summaries
                ],
            )
        )
    stats = data.get("task")
    if task_id and stats:
        recent = list(reversed(stats["recent"]))[:RECENT_EPISODES]
        sections.append(
            Section(
                "episodes",
                f"## Recent {task_id} episodes",
                [Line(episode_line(e), P_EPISODES, [sources.episode(e)]) for e in recent],
            )
        )
        if stats["episodes"]:
            mean = Line(mean_line(task_id, stats), P_MEAN, sources.task(task_id))
            sections.append(Section("mean_score", None, [mean]))
    return sections


def render(sections: list[Section]) -> str:
    """Sections separated by a blank line; ``""`` when there is nothing."""
    blocks = []
    for section in sections:
        lines = [line.text for line in section.lines]
        if section.heading:
            lines.insert(0, section.heading)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
