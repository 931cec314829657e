"""How ``agent-token`` prints: the new token once, the list without any token."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import emit_json, note, say


def issued(ctx: Context, done: dict[str, Any]) -> int:
    """``agent-token add``: the token on stdout (alone, for a script), advice on stderr."""
    if ctx.json:
        emit_json(done)
        return 0
    say(done["token"])
    note(
        f"agent token for {done['agent']}: shown this once, the store keeps only its digest; "
        "send it as Authorization: Bearer <token> to memwork serve"
    )
    return 0


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``agent-token list``: an agent and its creation time a line."""
    if ctx.json:
        emit_json(rows)
        return 0
    for row in rows:
        say(f"{row['agent']}\t{row['created_at']}")
    note(f"{len(rows)} agent token(s)")
    return 0


def revoked(ctx: Context, done: dict[str, Any]) -> int:
    """``agent-token revoke``: how many tokens ended."""
    if ctx.json:
        emit_json(done)
        return 0
    say(f"revoked {done['revoked']} token(s) of {done['agent']}")
    return 0
