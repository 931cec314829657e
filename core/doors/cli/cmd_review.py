"""How ``memwork review …`` prints proposals from agents and the decisions on them."""

from __future__ import annotations

from typing import Any

from ...base.text import clip
from .main import Context
from .output import emit_json, note, say

#: A reason is shown whole by ``review show``; a list keeps each one to a line.
WHY_WIDTH = 120


def _header(p: dict[str, Any]) -> str:
    when = p["created_at"][:16].replace("T", " ")
    state = "" if p["status"] == "pending" else f"  [{p['status']}]"
    return f"{p['id']}  {p['kind']} {p['op']}  by {p['proposed_by']}  {when}{state}"


def _block(p: dict[str, Any], *, full: bool = False) -> None:
    say(_header(p))
    say(f"  {p['change']}")
    for flag in p.get("flags", []):
        say(f"  ! {flag}")
    if p["status"] != "pending":
        decided = f"  {p['status']} by {p['decided_by']}"
        decided += f": {p['result']}" if p.get("result") else ""
        if p.get("why"):
            decided += f" ({p['why'] if full else clip(p['why'], WHY_WIDTH)})"
        say(decided)
    if not full:
        return
    if p.get("nearest"):
        n = p["nearest"]
        say(f"  nearest lesson {n['id']} ({n['similarity']:.0f}): {n['content']}")
    for line in p.get("diff", []):
        say(f"    {line}")


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``review list``: a block each (stderr says when there is none)."""
    if ctx.json:
        emit_json(rows)
        return 0
    for row in rows:
        _block(row)
    if not rows:
        note("nothing waits for review" if not ctx.args.all else "no proposals")
    return 0


def shown(ctx: Context, found: dict[str, Any]) -> int:
    """``review show``: the whole block, with the nearest lesson and the diff."""
    if ctx.json:
        emit_json(found)
    else:
        _block(found, full=True)
    return 0


def _decided(ctx: Context, decided: dict[str, Any], text: str) -> int:
    if ctx.json:
        emit_json(decided)
    else:
        say(text)
    return 0


def approved(ctx: Context, decided: dict[str, Any]) -> int:
    """``review approve``."""
    edited = " (edited)" if decided["edited"] else ""
    return _decided(ctx, decided, f"approved {decided['id']}{edited}: {decided['result']}")


def rejected(ctx: Context, decided: dict[str, Any]) -> int:
    """``review reject``."""
    return _decided(ctx, decided, f"rejected {decided['id']}")


def merged(ctx: Context, decided: dict[str, Any]) -> int:
    """``review merge``."""
    return _decided(ctx, decided, f"merged {decided['id']}: {decided['result']}")


def proposed(ctx: Context, proposal: dict[str, Any]) -> int:
    """What a write that became a proposal prints (lesson add, slot set/append/replace, …)."""
    if ctx.json:
        emit_json(proposal)
        return 0
    say(f"proposed {proposal['id']}, waiting for review")
    for flag in proposal.get("flags", []):
        note(f"{proposal['id']}: {flag}")
    return 0


def curator_ready(ctx: Context, done: dict[str, Any]) -> int:
    """``curator init``: where the key is, and what to keep in mind about it."""
    if ctx.json:
        emit_json(done)
        return 0
    say(f"curator key: {done['file']} ({'made now' if done['made'] else 'already there'})")
    note(
        "this key decides for the store while review is on; keep the file where agents "
        "cannot read it, and decide with: memwork --curator-key FILE review ..."
    )
    return 0
