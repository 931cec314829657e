"""What ``reflect`` and ``crystallize`` do without a model: plain readings of a
session's observations.

Reflection keeps what the agent itself marked as worth learning (observations of
kind lesson, insight, learning or decision, word for word) and turns each error
into "Avoid: <error>". Crystallization counts the observations by kind and quotes
the decisions, the errors and the last thing that happened.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ...base.text import clip, ellipsize
from .prompts import LESSON_CAP, MAX_LESSONS, SUMMARY_CAP

#: Observation kinds whose words are already a lesson.
LESSON_KINDS = ("lesson", "insight", "learning", "decision")
ERROR_KINDS = ("error", "failure", "mistake")
QUOTE = 160


def lessons_from(observations: Iterable[Mapping[str, Any]]) -> list[tuple[str, float | None]]:
    """Lessons (text, None) read from observations, in their order, 10 at most."""
    found: dict[str, None] = {}
    for obs in observations:
        kind = str(obs.get("kind", "")).lower()
        content = str(obs.get("content", "")).strip()
        if not content:
            continue
        if kind in LESSON_KINDS:
            found.setdefault(ellipsize(content, LESSON_CAP), None)
        elif kind in ERROR_KINDS:
            found.setdefault(ellipsize(f"Avoid: {clip(content, LESSON_CAP)}", LESSON_CAP), None)
    return [(text, None) for text in list(found)[:MAX_LESSONS]]


def summary_of(observations: Iterable[Mapping[str, Any]]) -> str:
    """A one-paragraph summary of observations (they must not be empty)."""
    items = [o for o in observations if str(o.get("content", "")).strip()]
    kinds = Counter(str(o.get("kind", "note")) for o in items)
    counted = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    noun = "observation" if len(items) == 1 else "observations"
    parts = [f"{len(items)} {noun} ({counted})."]
    decisions = [clip(str(o["content"]), QUOTE) for o in items if o.get("kind") == "decision"]
    if decisions:
        parts.append("Decided: " + "; ".join(decisions[-3:]) + ".")
    errors = [clip(str(o["content"]), QUOTE) for o in items if o.get("kind") in ERROR_KINDS]
    if errors:
        parts.append("Errors: " + "; ".join(errors[-3:]) + ".")
    if items:
        parts.append("Last: " + clip(str(items[-1]["content"]), QUOTE))
    return ellipsize(" ".join(parts), SUMMARY_CAP)
