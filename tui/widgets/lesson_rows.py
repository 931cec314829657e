"""The rows and the status line of the Rules & lessons pane, built from plain data.

Kept apart from the pane so that ordering (confidence, or effect on the task),
the decay preview's marks and the flags on contradicting or linted records
read in one place and can be built without a running app.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

from rich.text import Text

from ...core.decay import decayed_away, effective_confidence, is_live
from .bars import confidence_bar, plural
from .lesson_detail import STATE_STYLE, effect_text, shown_state
from .virtual_table import Row


class LessonRows(NamedTuple):
    """The lessons list's rows, and how many live lessons the decay preview fades or forgets."""

    rows: list[Row]
    fading: int
    forgotten: int


def _effect_key(effects: dict[str, dict[str, Any] | None], lesson: dict[str, Any]) -> tuple:
    effect = effects.get(lesson["id"])
    return (0, -float(effect["change"])) if effect else (1, 0.0)


def flagged_content(
    lesson: dict[str, Any], contradicts: dict[str, list[str]], findings: dict[str, list]
) -> Text | str:
    """The lesson's text, marked when it contradicts another or lint flags it."""
    if lesson["id"] in contradicts:
        return Text.assemble(("⚑ ", "yellow"), lesson["content"])
    if lesson["id"] in findings:
        return Text.assemble(("⚑ ", "bright_black"), lesson["content"])
    return lesson["content"]


def lesson_rows(
    lessons: dict[str, dict[str, Any]],
    now: datetime,
    *,
    preview_weeks: int,
    show_all: bool,
    sort_by: str,
    effects: dict[str, dict[str, Any] | None],
    contradicts: dict[str, list[str]],
    findings: dict[str, list],
) -> LessonRows:
    """Rows for the lessons list: by effective confidence (at the previewed time), or
    by effect on their task with lessons that have nothing to compare below."""
    then = now + timedelta(weeks=preview_weeks)
    visible = [x for x in lessons.values() if show_all or is_live(x, now)]
    visible.sort(key=lambda x: (-effective_confidence(x, then), x["created_at"], x["id"]))
    if sort_by == "effect":
        visible.sort(key=lambda x: _effect_key(effects, x))
    rows: list[Row] = []
    fading = forgotten = 0
    for lesson in visible:
        current = effective_confidence(lesson, now)
        future = effective_confidence(lesson, then)
        state = shown_state(lesson, then if preview_weeks else now)
        if preview_weeks and is_live(lesson, now):
            fading += future < current
            forgotten += decayed_away(lesson, then)
        conf = confidence_bar(future, 5)
        if preview_weeks and future < current:
            conf.append(" ↓", style="yellow")
        rows.append(
            Row(
                [
                    Text(state, style=STATE_STYLE.get(state, "")),
                    conf,
                    effect_text(effects.get(lesson["id"])),
                    lesson["scope"],
                    flagged_content(lesson, contradicts, findings),
                ],
                key=lesson["id"],
            )
        )
    return LessonRows(rows, fading, forgotten)


def rule_rows(rules: dict[str, dict[str, Any]], findings: dict[str, list]) -> list[Row]:
    """Rows for the rules list: active ones first, global before task-scoped, newest first."""
    return [
        Row(
            [
                r["scope"],
                Text.assemble(
                    ("⚑ ", "yellow") if r["id"] in findings else "",
                    (r["text"], "" if r["active"] else "bright_black"),
                ),
                r["source"],
                Text("yes", style="green") if r["active"] else Text("no", style="bright_black"),
            ],
            key=r["id"],
        )
        for r in sorted(
            rules.values(),
            key=lambda r: (not r["active"], r["scope"] != "global", r["scope"], -r["seq"]),
        )
    ]


def lessons_status(
    lessons: dict[str, dict[str, Any]],
    rules: dict[str, dict[str, Any]],
    now: datetime,
    *,
    preview_weeks: int,
    shown: LessonRows,
    show_all: bool,
    duplicate_groups: int,
    contradicting: int,
    sort_by: str,
) -> Text:
    """The line above the lists: counts, or what the decay preview fades and forgets."""
    if preview_weeks:
        weeks = f"{preview_weeks} week{'' if preview_weeks == 1 else 's'}"
        return Text.assemble(
            (" Decay preview ", "bold reverse"),
            f" {weeks} from now: ",
            (f"{shown.fading} fade", "yellow"),
            ", ",
            (f"{shown.forgotten} forgotten", "red"),
            ("  · [ ] · 0 = now", "bright_black"),
        )
    live = sum(1 for x in lessons.values() if is_live(x, now))
    active = sum(1 for r in rules.values() if r["active"])
    return Text.assemble(
        (plural(live, "live lesson"), "bold"),
        f" · {len(lessons) - live:,} forgotten or superseded{' (shown)' if show_all else ''}",
        f" · {plural(active, 'active rule')}",
        (f" · {plural(duplicate_groups, 'near-duplicate group')} (m)", "yellow")
        if duplicate_groups
        else "",
        (f" · {contradicting} contradict", "yellow") if contradicting else "",
        (" · sorted by effect (s)", "bold") if sort_by == "effect" else "",
    )
