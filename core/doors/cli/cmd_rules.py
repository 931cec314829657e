"""How ``memwork rule …`` prints its results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, note, say


def added(ctx: Context, rule: dict[str, Any]) -> int:
    """``rule add``: a note when the rule was already active or came back, then its id."""
    if rule["outcome"] == "unchanged":
        note(f"already active: {rule['id']}")
    elif rule["outcome"] == "reactivated":
        note(f"reactivated {rule['id']} as the newest rule of {rule['scope']}")
    if ctx.json:
        emit_json(rule)
    else:
        say(rule["id"])
    return 0


def listed(ctx: Context, docs: list[dict[str, Any]]) -> int:
    """``rule list``: a line each, inactive ones marked."""
    if ctx.json:
        emit_json(docs)
        return 0
    for doc in docs:
        flag = "" if doc["active"] else "  (inactive)"
        say(f"{doc['id']}  {doc['scope']:<20} {clip(doc['text'], 80)}{flag}")
    return 0
