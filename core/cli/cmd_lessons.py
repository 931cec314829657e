"""``memwork lesson …``"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .. import lessons
from ..decay import FORGET_AT, view
from .main import Context
from .output import clip, emit_json, note, say

if TYPE_CHECKING:
    from datetime import datetime

    from ..storage.store import Store


class _LessonChange(Protocol):
    """A lesson verb that changes one lesson and returns its view (``lessons.reinforce``…)."""

    def __call__(
        self, store: Store, key: str, /, *, now: datetime, actor: str
    ) -> dict[str, Any]: ...


def _line(lesson: dict[str, Any]) -> str:
    flags = " pinned" if lesson.get("pinned") else ""
    if lesson["state"] not in ("live", "pinned"):
        flags += f" {lesson['state']}"
    return (
        f"{lesson['id']}  {lesson['effective_confidence']:.2f}  {lesson['scope']:<16} "
        f"{clip(lesson['content'], 70)}{flags}"
    )


def _show(ctx: Context, lesson: dict[str, Any]) -> int:
    if ctx.json:
        emit_json(lesson)
    else:
        say(_line(lesson))
    return 0


def add(ctx: Context) -> int:
    from .. import review

    a = ctx.args
    submitted = review.submit_lesson(
        ctx.store,
        a.text,
        now=ctx.now,
        actor=ctx.actor,
        scope=a.scope,
        confidence=a.confidence,
        tags=a.tag,
        on_duplicate=a.on_duplicate,
        curator=ctx.curator,
    )
    if submitted.proposal is not None:
        from .cmd_review import proposed

        return proposed(ctx, submitted.proposal)
    result = submitted.result
    saved = view(result.lesson, ctx.now)
    if result.action == "reinforced" and not result.exact:
        note(
            f"near-duplicate of {result.duplicate_of} (similarity {result.similarity:.0f}): "
            "reinforced it instead of adding a copy (--on-duplicate keep-both|supersede to change)"
        )
    elif result.action == "reinforced":
        note(f"already known: reinforced {saved['id']} (confidence {saved['confidence']:.2f})")
    elif result.action == "superseded":
        note(f"supersedes {result.duplicate_of} (similarity {result.similarity:.0f})")
    elif result.action == "kept-both":
        note(f"kept both: near-duplicate of {result.duplicate_of} ({result.similarity:.0f})")
    if result.contradicts:
        note(
            f"kept apart from {', '.join(result.contradicts)}: similar words, but it says the "
            "opposite"
        )
    if result.starts_forgotten:
        note(
            f"{saved['id']} starts forgotten: confidence {saved['confidence']:.2f} is at or below "
            f"the forget threshold ({FORGET_AT}); it is kept but hidden until reinforced or "
            "restored"
        )
    if ctx.json:
        emit_json(lessons.write_record(result, ctx.now))
    else:
        say(saved["id"])
    return 0


def list_(ctx: Context) -> int:
    rows = lessons.list_lessons(ctx.store, ctx.now, include_all=ctx.args.all)
    if ctx.json:
        emit_json(rows)
    else:
        for row in rows:
            say(_line(row))
    return 0


def show(ctx: Context) -> int:
    lesson = lessons.get_lesson(ctx.store, ctx.args.id, ctx.now)
    if ctx.json:
        emit_json(lesson)
        return 0
    say(_line(lesson))
    say(f"  content: {lesson['content']}")
    say(
        f"  confidence {lesson['confidence']:.2f} (effective {lesson['effective_confidence']:.2f}),"
        f" reinforced {lesson['reinforcements']}x, last {lesson['last_reinforced_at']}"
    )
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


def _apply(ctx: Context, fn: _LessonChange) -> int:
    return _show(ctx, fn(ctx.store, ctx.args.id, now=ctx.now, actor=ctx.actor))


def reinforce(ctx: Context) -> int:
    return _apply(ctx, lessons.reinforce)


def weaken(ctx: Context) -> int:
    return _apply(ctx, lessons.weaken)


def pin(ctx: Context) -> int:
    return _show(
        ctx, lessons.set_pinned(ctx.store, ctx.args.id, True, now=ctx.now, actor=ctx.actor)
    )


def unpin(ctx: Context) -> int:
    return _show(
        ctx, lessons.set_pinned(ctx.store, ctx.args.id, False, now=ctx.now, actor=ctx.actor)
    )


def forget(ctx: Context) -> int:
    return _apply(ctx, lessons.forget)


def restore(ctx: Context) -> int:
    restored = lessons.restore(ctx.store, ctx.args.id, now=ctx.now, actor=ctx.actor)
    lifted = restored["confidence"] > restored["restored_from"]
    note(
        f"restored {restored['id']}: live at confidence {restored['confidence']:.2f}"
        + (f" (raised from {restored['restored_from']:.2f})" if lifted else "")
        + "; its decay starts again now"
    )
    return _show(ctx, restored)
