"""Rules the heuristic consolidation wrote: ``[HIGH SCORE 0.91] <summary>``.

Consolidation turns every high-scoring episode among the recent ones into a
global rule, keeping the episodic library's text exactly; an episode summary
that recurs with another score gives another rule (``[HIGH SCORE 0.88]`` and
``[HIGH SCORE 0.93]`` of the same summary), and every task's rules are global.
The episodic style shows them as that library does; the default style and
``memwork lint`` read them through these functions: which summary a rule
carries, which tasks' episodes gave it, and which copies repeat a newer one.

Plain functions over documents (the context path imports this on every step).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..base.text import normalise

PREFIX = "[HIGH SCORE "
#: The summary's length in a rule (the heuristic's cut).
SUMMARY_CAP = 120


def summary(text: str) -> str | None:
    """The episode summary a ``[HIGH SCORE x]`` rule carries; None for any other rule."""
    if not text.startswith(PREFIX):
        return None
    head, sep, rest = text.partition("] ")
    if not sep or not head[len(PREFIX) :].replace(".", "", 1).isdigit():
        return None
    return rest


def key(text: str) -> str | None:
    """What makes two consolidated rules the same advice (the summary, case and spaces
    aside); None for any other rule."""
    found = summary(text)
    return None if found is None else normalise(found)


def tasks_by_summary(recent: Iterable[dict[str, Any]]) -> dict[str, set[str]]:
    """Normalised summary (as a rule carries it) → the tasks of the recent episodes that
    have it (``recent``: the global aggregate's compact episodes)."""
    found: dict[str, set[str]] = {}
    for entry in recent:
        text = entry.get("summary") or ""
        if text:
            found.setdefault(normalise(text[:SUMMARY_CAP]), set()).add(entry["task_id"])
    return found


def repeats(rules: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each consolidated rule that repeats a newer one's summary → that newer rule
    (``rules``: active global rules, any order; newer means a higher ``seq``)."""
    newest: dict[str, dict[str, Any]] = {}
    out: dict[str, dict[str, Any]] = {}
    for rule in sorted(rules, key=lambda r: r["seq"], reverse=True):
        found = key(rule["text"])
        if found is None:
            continue
        if found in newest:
            out[rule["id"]] = newest[found]
        else:
            newest[found] = rule
    return out
