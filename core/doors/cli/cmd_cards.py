"""How ``memwork card …`` prints its results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, say


def _line(card: dict[str, Any]) -> str:
    return (
        f"{card['id']}  seen {card['seen_count']:>3}x  {card['task_id']:<16} "
        f"[{card['mistake_type']}] {clip(card['lesson'], 70)}"
    )


def line(ctx: Context, card: dict[str, Any]) -> int:
    """One card: the record with ``--json``, else its line."""
    if ctx.json:
        emit_json(card)
    else:
        say(_line(card))
    return 0


def listed(ctx: Context, cards: list[dict[str, Any]]) -> int:
    """``card list``: a line each, most seen first."""
    if ctx.json:
        emit_json(cards)
    else:
        for card in cards:
            say(_line(card))
    return 0


def shown(ctx: Context, card: dict[str, Any]) -> int:
    """``card show``: the line, then what went wrong and what to do instead."""
    if ctx.json:
        emit_json(card)
        return 0
    say(_line(card))
    for field in ("bad_decision", "correct_decision", "lesson", "evidence"):
        if card.get(field):
            say(f"  {field}: {card[field]}")
    say(f"  episodes #{card['first_seen_episode']}-#{card['last_seen_episode']}")
    return 0
