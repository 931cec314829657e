"""How ``memwork lesson …`` prints its results."""

from __future__ import annotations

from typing import Any

from ...domain.decay import FORGET_AT
from .main import Context
from .output import clip, emit_json, emit_rows, note, say


def _line(lesson: dict[str, Any]) -> str:
    flags = " pinned" if lesson.get("pinned") else ""
    if lesson["state"] not in ("live", "pinned"):
        flags += f" {lesson['state']}"
    return (
        f"{lesson['id']}  {lesson['effective_confidence']:.2f}  {lesson['scope']:<16} "
        f"{clip(lesson['content'], 70)}{flags}"
    )


def line(ctx: Context, lesson: dict[str, Any]) -> int:
    """One lesson: the record with ``--json``, else its line."""
    if ctx.json:
        emit_json(lesson)
    else:
        say(_line(lesson))
    return 0


def added(ctx: Context, saved: dict[str, Any]) -> int:
    """``lesson add``: what the save did on stderr, then the new or reinforced lesson."""
    action, other, similarity = saved["action"], saved["duplicate_of"], saved.get("similarity")
    if action == "reinforced" and not saved.get("exact"):
        note(
            f"near-duplicate of {other} (similarity {similarity:.0f}): "
            "reinforced it, as --on-duplicate reinforce asks"
        )
    elif action == "reinforced":
        note(f"already known: reinforced {saved['id']} (confidence {saved['confidence']:.2f})")
    elif action == "superseded":
        note(f"supersedes {other} (similarity {similarity:.0f})")
    elif action == "kept-both":
        note(
            f"near-duplicate of {other} (similarity {similarity:.0f}): kept as a lesson of its "
            "own, as it may be new advice; `memwork lint` lists the pair (--on-duplicate "
            "reinforce|supersede folds it into the old one)"
        )
    if saved["contradicts"]:
        note(
            f"contradicts {', '.join(saved['contradicts'])}: it says the opposite (both kept; "
            "`memwork lint` lists the pair)"
        )
    if saved["starts_forgotten"]:
        note(
            f"{saved['id']} starts forgotten: confidence {saved['confidence']:.2f} is at or below "
            f"the forget threshold ({FORGET_AT}); it is kept but hidden until reinforced or "
            "restored"
        )
    if ctx.json:
        emit_json(saved)
    else:
        say(saved["id"])
    return 0


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``lesson list``: a line each."""
    return emit_rows(ctx.json, rows, _line)


def shown(ctx: Context, lesson: dict[str, Any]) -> int:
    """``lesson show``: the line, the whole text, confidence, wordings, effect, contradictions."""
    if ctx.json:
        emit_json(lesson)
        return 0
    say(_line(lesson))
    say(f"  content: {lesson['content']}")
    say(
        f"  confidence {lesson['confidence']:.2f} (effective {lesson['effective_confidence']:.2f}),"
        f" reinforced {lesson['reinforcements']}x, last {lesson['last_reinforced_at']}"
    )
    pinned = " (pinned: no decay)" if lesson.get("pinned") else ""
    say(f"  decays {lesson.get('decay_rate', 0.05):.3g} a week{pinned}")
    if lesson.get("tags"):
        say(f"  tags: {', '.join(lesson['tags'])}")
    for wording in lesson.get("wordings", []):
        say(f"  also worded: {wording}")
    effect = lesson.get("effect")
    if effect:
        before, after = effect["before"], effect["after"]
        say(
            f"  effect on {effect['task']}: {effect['change']:+.2f} "
            f"(mean {before['mean_score']:.2f} over {before['episodes']} episodes before, "
            f"{after['mean_score']:.2f} over {after['episodes']} after)"
        )
    for other in lesson.get("contradicts", []):
        say(f"  contradicts {other}")
    return 0


def forgotten(ctx: Context, lesson: dict[str, Any]) -> int:
    """``lesson forget``: what a soft forget did and how to undo it on stderr, then the lesson
    (its line says "forgotten": nothing was deleted)."""
    note(
        f"forgot {lesson['id']}: hidden from lists, search and the context, but kept; "
        f"`memwork lesson restore {lesson['id']}` brings it back"
    )
    if ctx.json:
        emit_json(lesson)
    else:
        say(_line(lesson).removesuffix(" deleted") + " forgotten")
    return 0


def restored(ctx: Context, lesson: dict[str, Any]) -> int:
    """``lesson restore``: the confidence it now has on stderr, then the lesson."""
    lifted = lesson["confidence"] > lesson["restored_from"]
    note(
        f"restored {lesson['id']}: live at confidence {lesson['confidence']:.2f}"
        + (f" (raised from {lesson['restored_from']:.2f})" if lifted else "")
        + "; its decay starts again now"
    )
    return line(ctx, lesson)
