"""The rows and the status line of the Rules & lessons pane, built from plain data.

Kept apart from the pane so that ordering (confidence, or effect on the task),
the decay preview's marks and the flags on contradicting or linted records
read in one place and can be built without a running app.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

from rich.text import Text

from ...core.domain.decay import decayed_away, effective_confidence, is_live
from ...core.services.context.log import Injections
from .bars import confidence_bar, confidence_style, plural
from .lesson_detail import STATE_STYLE, effect_text, shown_state
from .virtual_table import Choices, Column, Row


class LessonRows(NamedTuple):
    """The lessons list's rows, and how many live lessons the decay preview fades or forgets."""

    rows: list[Row]
    fading: int
    forgotten: int


def _effect_key(
    effects: dict[str, dict[str, Any] | None], lesson: dict[str, Any]
) -> tuple[int, float]:
    effect = effects.get(lesson["id"])
    return (0, -float(effect["change"])) if effect else (1, 0.0)


def flagged_content(
    lesson: dict[str, Any],
    contradicts: dict[str, list[str]],
    findings: dict[str, list[dict[str, Any]]],
    warning: str = "yellow",
) -> Text | str:
    """The lesson's text, marked when it contradicts another or lint flags it."""
    if lesson["id"] in contradicts:
        return Text.assemble(("⚑ ", warning), lesson["content"])
    if lesson["id"] in findings:
        return Text.assemble(("⚑ ", "bright_black"), lesson["content"])
    content: str = lesson["content"]
    return content


def lesson_columns(sort_by: str, *, with_use: bool) -> list[Column]:
    """The lessons list's columns. The text keeps its room: in a narrow list the scope
    goes first, then effect and use, then the state; the column the list is sorted by
    never goes. ``with_use``: injections are counted (the Used column has something to
    say)."""
    return [
        Column("state", "State", width=10, min_width=6, drop_order=4),
        Column("confidence", Choices(("Confidence", "Conf.")), width=12, min_width=5),
        Column(
            "effect", "Effect", width=6, justify="right", drop_order=0 if sort_by == "effect" else 2
        ),
        *(
            [
                Column(
                    "use", "Used", width=5, justify="right", drop_order=0 if sort_by == "use" else 3
                )
            ]
            if with_use
            else []
        ),
        # The text takes most of the room a wide list has (it stopped at ~35 characters
        # at 140 columns while the scope kept 20); the scope shows whole in the detail.
        Column("scope", "Scope", min_width=10, max_width=20, drop_order=1),
        Column("content", "Lesson", min_width=30, weight=4),
    ]


def _use_key(uses: dict[str, Injections], lesson: dict[str, Any]) -> tuple[int, int]:
    # Most injected first; equal counts keep the confidence order (the sort is stable).
    use = uses.get(lesson["id"])
    return (0, -use["count"]) if use else (1, 0)


def lesson_rows(
    lessons: dict[str, dict[str, Any]],
    now: datetime,
    *,
    columns: list[Column],
    preview_weeks: int,
    show_all: bool,
    sort_by: str,
    effects: dict[str, dict[str, Any] | None],
    contradicts: dict[str, list[str]],
    findings: dict[str, list[dict[str, Any]]],
    uses: dict[str, Injections] | None = None,
    warning: str = "yellow",
) -> LessonRows:
    """Rows for the lessons list, cells in ``columns`` order: by effective confidence
    (at the previewed time); by effect on their task; or by use (how many contexts
    injected them, the most first), lessons with nothing to compare below.
    ``warning`` is the theme's colour for flags (readable on a light background too)."""
    uses = uses or {}
    then = now + timedelta(weeks=preview_weeks)
    visible = [x for x in lessons.values() if show_all or is_live(x, now)]
    visible.sort(key=lambda x: (-effective_confidence(x, then), x["created_at"], x["id"]))
    if sort_by == "effect":
        visible.sort(key=lambda x: _effect_key(effects, x))
    elif sort_by == "use":
        visible.sort(key=lambda x: _use_key(uses, x))
    keys = [column.key for column in columns]
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
        number = Text(f"{future:.2f}", style=confidence_style(future))
        if preview_weeks and future < current:
            conf.append("↓", style=warning)
            number.append("↓", style=warning)
        use = uses.get(lesson["id"])
        cells: dict[str, Any] = {
            "state": Text(state, style=STATE_STYLE.get(state, "")),
            # A narrow list shows the number alone: the text needs the room.
            "confidence": Choices((conf, number)),
            "effect": effect_text(effects.get(lesson["id"])),
            "use": Text(f"{use['count']:,}") if use else Text("0", style="bright_black"),
            "scope": lesson["scope"],
            "content": flagged_content(lesson, contradicts, findings, warning),
        }
        rows.append(Row([cells[key] for key in keys], key=lesson["id"]))
    return LessonRows(rows, fading, forgotten)


def rule_rows(
    rules: dict[str, dict[str, Any]],
    findings: dict[str, list[dict[str, Any]]],
    warning: str = "yellow",
) -> list[Row]:
    """Rows for the rules list: active ones first, global before task-scoped, newest first."""
    return [
        Row(
            [
                r["scope"],
                Text.assemble(
                    ("⚑ ", warning) if r["id"] in findings else "",
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


#: What the status line says each order is, and the key that changes it.
SORT_NAMES = {
    "confidence": "",
    "effect": "sorted by effect (s)",
    "use": "sorted by use in contexts (s)",
}


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
    narrow: bool = False,
    warning: str = "yellow",
) -> Text:
    """The line above the lists: counts, or what the decay preview fades and forgets.
    ``narrow``: the short words of an 80-column terminal, so the line stays one line."""
    if preview_weeks:
        weeks = f"{preview_weeks} week{'' if preview_weeks == 1 else 's'}"
        return Text.assemble(
            (" Decay preview ", "bold reverse"),
            f" {weeks} from now: ",
            (f"{shown.fading} fade", warning),
            ", ",
            (f"{shown.forgotten} forgotten", "red"),
            ("  · [ ] · 0 = now", "bright_black"),
        )
    live = sum(1 for x in lessons.values() if is_live(x, now))
    active = sum(1 for r in rules.values() if r["active"])
    gone = len(lessons) - live
    parts: list[Any] = [
        (f"{live:,} live" if narrow else plural(live, "live lesson"), "bold"),
        f" · {gone:,} {'gone' if narrow else 'forgotten or superseded'}"
        + (" (shown)" if show_all else ""),
        f" · {active:,} rules" if narrow else f" · {plural(active, 'active rule')}",
    ]
    if duplicate_groups:
        noun = "near-dup" if narrow else "near-duplicate group"
        parts.append((f" · {plural(duplicate_groups, noun)} (m)", warning))
    if contradicting:
        noun = "contradicting" if narrow else "contradicting lessons"
        parts.append((f" · ⚑ {contradicting} {noun}", warning))
    if SORT_NAMES.get(sort_by):
        parts.append((f" · {SORT_NAMES[sort_by]}", "bold"))
    return Text.assemble(*parts)
