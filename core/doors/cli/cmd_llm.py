"""How ``memwork reflect`` and ``crystallize`` print: which engine, then what they wrote.

A heuristic run says why no model was asked (on stderr, as ``consolidate`` reports a
fallback), so a user who meant to use a model sees at once that none is configured.
"""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import emit_json, note, say


def _engine_note(result: dict[str, Any]) -> None:
    if result.get("fallback_reason"):
        note(f"memwork: {result['fallback_reason']}")


def reflected(ctx: Context, result: dict[str, Any]) -> int:
    """``reflect``: one line per lesson, ``+`` written, ``?`` waiting for review."""
    _engine_note(result)
    if ctx.json:
        emit_json(result)
        return 0
    lessons = result["lessons"]
    noun = "lesson" if len(lessons) == 1 else "lessons"
    say(f"{result['engine']} reflection on {result['session']}: {len(lessons)} {noun}")
    for lesson in lessons:
        mark = "?" if lesson["proposed"] else "+"
        say(f"  {mark} {lesson['id']}  {lesson['text']}")
    return 0


def crystallized(ctx: Context, result: dict[str, Any]) -> int:
    """``crystallize``: the summary, and the proposal it became if review holds it."""
    _engine_note(result)
    if ctx.json:
        emit_json(result)
        return 0
    held = f" (proposed for review: {result['proposal']})" if result["proposed"] else ""
    say(f"{result['engine']} summary of {result['session']}{held}:")
    say(result["summary"])
    return 0
