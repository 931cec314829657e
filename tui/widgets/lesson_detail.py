"""The selected rule or lesson in full: what it says, its scope, state and history."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from rich.text import Text

from ...core.base.text import clip
from ...core.domain.decay import effective_confidence, state_of
from ...core.services.context.log import Injections
from .bars import ago, confidence_style

#: Lesson state → style in the list and the detail.
STATE_STYLE = {
    "pinned": "bold cyan",
    "live": "",
    "fading": "yellow",
    "forgotten": "red",
    "superseded": "bright_black",
}


def shown_state(lesson: dict[str, Any], now: datetime) -> str:
    """The state word the workbench shows: one word per state, so a lesson forgotten
    with f (stored as ``deleted``) reads "forgotten", as one that decayed away does."""
    state = state_of(lesson, now)
    return "forgotten" if state == "deleted" else state


def effect_text(effect: dict[str, Any] | None) -> Text:
    """``+0.35`` in green, ``-0.12`` in red; empty when nothing can be compared."""
    if not effect:
        return Text("")
    change = float(effect["change"])
    style = "green" if change > 0 else "red" if change < 0 else ""
    return Text(f"{change:+.2f}", style=style)


def findings_text(
    findings: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (), warning: str = "yellow"
) -> Text:
    """A record's lint findings, one line each (empty when it has none); ``warning`` is
    the theme's colour for flags (readable on the light theme too)."""
    out = Text()
    if findings:
        out.append("\nLint\n", style=f"bold {warning}")
        for finding in findings:
            out.append(f"⚑ {finding['kind'].replace('_', ' ')}: ", style=warning)
            out.append(f"{finding['message']}\n")
    return out


def render_rule(
    rule: dict[str, Any] | None,
    now: datetime,
    findings: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
    warning: str = "yellow",
) -> Text:
    """A rule: its text, scope, polarity, source and whether it is in the active window
    (and its lint findings)."""
    if rule is None:
        return Text("No rule selected", style="bright_black")
    out = Text.assemble(
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
    )
    if rule.get("episode_ids"):
        count = len(rule["episode_ids"])
        out.append("from ", style="bright_black")
        out.append(
            f"{count} episode{'' if count == 1 else 's'}, newest {rule['episode_ids'][-1]}\n"
        )
    out.append_text(findings_text(findings, warning))
    out.append("\nt switches it on or off", style="italic bright_black")
    return out


def _reinforced(lesson: dict[str, Any], now: datetime) -> list[tuple[str, str] | str]:
    """``reinforced 3x, last 2d ago``; a lesson never reinforced says when it was added
    (its decay clock starts there), not "0x, last 1m ago"."""
    count = int(lesson.get("reinforcements") or 0)
    if not count:
        return [("added ", "bright_black"), f"{ago(lesson['created_at'], now)}, not reinforced\n"]
    return [
        ("reinforced ", "bright_black"),
        f"{count}x, last {ago(lesson['last_reinforced_at'], now)}\n",
    ]


def _state_line(lesson: dict[str, Any], now: datetime) -> str:
    state = shown_state(lesson, now)
    if state != "forgotten":
        return state
    how = "by hand" if lesson.get("deleted") else "decayed away"
    return f"forgotten ({how}; u restores it)"


def other_wordings(lesson: dict[str, Any]) -> list[str]:
    """The lesson's other wordings, each once and never its own text (merges and
    near-duplicates could add the same wording again)."""
    seen = {" ".join(lesson["content"].split()).casefold()}
    out = []
    for wording in lesson.get("wordings") or []:
        key = " ".join(wording.split()).casefold()
        if key not in seen:
            seen.add(key)
            out.append(wording)
    return out


def render_lesson(
    lesson: dict[str, Any] | None,
    now: datetime,
    *,
    preview_weeks: int = 0,
    others: dict[str, dict[str, Any]] | None = None,
    effect: dict[str, Any] | None = None,
    use: Injections | None = None,
    contradicts: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
    findings: list[dict[str, Any]] | tuple[dict[str, Any], ...] = (),
    warning: str = "yellow",
) -> Text:
    """A lesson: its content, effective and stored confidence, decay and links; its
    effect on its task, the live lessons it contradicts and its lint findings.

    ``preview_weeks``: the decay preview is on, and the detail says what the list
    shows then next to what holds now. ``others`` names linked lessons by their text.
    """
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
    ]
    if preview_weeks:
        then = now + timedelta(weeks=preview_weeks)
        future = effective_confidence(lesson, then)
        parts += [
            (f"in {preview_weeks} week{'' if preview_weeks == 1 else 's'} ", "bright_black"),
            (f"{future:.2f}", confidence_style(future)),
            (f" {shown_state(lesson, then)}\n", "bright_black"),
        ]
    parts += [
        ("state ", "bright_black"),
        f"{_state_line(lesson, now)}\n",
        ("scope ", "bright_black"),
        f"{lesson['scope']}\n",
        *_reinforced(lesson, now),
        ("decay ", "bright_black"),
        "none (pinned)\n" if lesson.get("pinned") else f"{lesson['decay_rate']:g} per week\n",
        ("source ", "bright_black"),
        f"{lesson.get('source', '')}\n",
    ]
    if use:
        times = "context" if use["count"] == 1 else "contexts"
        parts += [
            ("used ", "bright_black"),
            f"in {use['count']:,} {times}, last {ago(use['last'], now)}\n",
        ]
    if lesson.get("tags"):
        parts += [("tags ", "bright_black"), f"{', '.join(lesson['tags'])}\n"]
    for field, label in (("superseded_by", "superseded by "), ("supersedes", "supersedes ")):
        if lesson.get(field):
            linked = (others or {}).get(lesson[field])
            name = f"“{clip(linked['content'], 60)}”" if linked else lesson[field]
            parts += [(label, "bright_black"), f"{name}\n"]
    if effect:
        before, after = effect["before"], effect["after"]
        parts += [
            ("effect ", "bright_black"),
            effect_text(effect),
            (
                f" on {effect['task']}: mean {before['mean_score']:.2f} over "
                f"{before['episodes']} episodes before, {after['mean_score']:.2f} over "
                f"{after['episodes']} after\n",
                "",
            ),
        ]
    elif lesson["scope"].startswith("task:"):
        parts += [("effect ", "bright_black"), ("not yet: no episodes on both sides\n", "")]
    for other in contradicts:
        parts += [
            ("⚑ contradicts ", f"bold {warning}"),
            (f"{other['id']} ", warning),
            f"“{other['content']}”\n",
        ]
    wordings = other_wordings(lesson)
    if wordings:
        parts.append(("\nOther wordings\n", "bold"))
        parts += [f"  • {w}\n" for w in wordings]
    out = Text.assemble(*parts)
    out.append_text(findings_text([f for f in findings if f["kind"] != "contradiction"], warning))
    out.append(f"\n{lesson['id']}", style="bright_black")
    return out
