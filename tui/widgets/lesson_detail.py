"""The selected rule or lesson in full: what it says, its scope, state and history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from core.decay import effective_confidence, state_of
from tui.widgets.bars import ago, confidence_style

#: Lesson state → style in the list and the detail.
STATE_STYLE = {
    "pinned": "bold cyan",
    "live": "",
    "fading": "yellow",
    "forgotten": "red",
    "deleted": "red",
    "superseded": "bright_black",
}


def render_rule(rule: dict[str, Any] | None, now: datetime) -> Text:
    """A rule: its text, scope, polarity, source and whether it is in the active window."""
    if rule is None:
        return Text("No rule selected", style="bright_black")
    return Text.assemble(
        ("Rule\n", "bold"),
        f"{rule['text']}\n\n",
        ("scope ", "bright_black"),
        f"{rule['scope']}\n",
        ("polarity ", "bright_black"),
        f"{rule['polarity']}\n",
        ("source ", "bright_black"),
        f"{rule['source']}\n",
        ("active ", "bright_black"),
        f"{'yes' if rule['active'] else 'no (outside the newest window)'}\n",
        ("added ", "bright_black"),
        f"{ago(rule['created_at'], now)}\n",
        ("\nt switches it on or off", "italic bright_black"),
    )


def render_lesson(lesson: dict[str, Any] | None, now: datetime) -> Text:
    """A lesson: its content, effective and stored confidence, decay and links."""
    if lesson is None:
        return Text("No lesson selected", style="bright_black")
    effective = effective_confidence(lesson, now)
    parts: list[Any] = [
        ("Lesson\n", "bold"),
        f"{lesson['content']}\n\n",
        ("effective ", "bright_black"),
        (f"{effective:.2f}", confidence_style(effective)),
        ("  stored ", "bright_black"),
        f"{lesson['confidence']:.2f}\n",
        ("state ", "bright_black"),
        f"{state_of(lesson, now)}\n",
        ("scope ", "bright_black"),
        f"{lesson['scope']}\n",
        ("reinforced ", "bright_black"),
        f"{lesson['reinforcements']}x, last {ago(lesson['last_reinforced_at'], now)}\n",
        ("decay ", "bright_black"),
        "none (pinned)\n" if lesson.get("pinned") else f"{lesson['decay_rate']:.2f} per week\n",
        ("source ", "bright_black"),
        f"{lesson.get('source', '')}\n",
    ]
    if lesson.get("tags"):
        parts += [("tags ", "bright_black"), f"{', '.join(lesson['tags'])}\n"]
    if lesson.get("superseded_by"):
        parts += [("superseded by ", "bright_black"), f"{lesson['superseded_by']}\n"]
    if lesson.get("supersedes"):
        parts += [("supersedes ", "bright_black"), f"{lesson['supersedes']}\n"]
    if lesson.get("wordings"):
        parts.append(("\nOther wordings\n", "bold"))
        parts += [f"  • {w}\n" for w in lesson["wordings"]]
    parts.append((f"\n{lesson['id']}", "bright_black"))
    return Text.assemble(*parts)
