"""How ``memwork session …`` and ``memwork observe`` print their results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, emit_rows, note, say


def _line(session: dict[str, Any]) -> str:
    label = session["title"] or session["project"] or "-"
    if session.get("implicit"):
        label += " (implicit)"
    agent = session["agent_id"] or "-"
    dropped = session["dropped_observations"]
    count = f"{session['observation_count']} obs" + (f" (+{dropped} dropped)" if dropped else "")
    return (
        f"{session['id']}  {session['status']:<6}  {session['started_at'][:19]}Z  "
        f"{clip(agent, 20):<20}  {count:<8}  {clip(label, 60)}"
    )


def _observation_line(obs: dict[str, Any]) -> str:
    late = "  (after end)" if obs.get("after_end") else ""
    tags = f"  [{', '.join(obs['tags'])}]" if obs.get("tags") else ""
    return (
        f"  #{obs['seq']:<4} {obs['created_at'][:19]}Z  {obs['kind']:<10} "
        f"{clip(obs['content'], 90)}{tags}{late}"
    )


def listed(ctx: Context, rows: list[dict[str, Any]]) -> int:
    """``session list``: a line each."""
    return emit_rows(ctx.json, rows, _line)


def shown(ctx: Context, session: dict[str, Any]) -> int:
    """``session show``: the session, then its observations."""
    if ctx.json:
        emit_json(session)
        return 0
    say(_line(session))
    for field in ("agent_id", "project", "title"):
        if session[field]:
            say(f"  {field}: {session[field]}")
    ended = f", ended {session['ended_at']}" if session["ended_at"] else ""
    say(f"  started {session['started_at']}{ended}")
    if session["summary"]:
        say(f"  summary: {session['summary']}")
    say(
        f"  observations: {session['observation_count']} kept of {session['total_observed']} "
        f"(cap {session['max_observations']}, {session['dropped_observations']} dropped)"
    )
    for obs in session["observations"]:
        say(_observation_line(obs))
    return 0


def observed(ctx: Context, obs: dict[str, Any]) -> int:
    """``observe``: a note when the session had ended or dropped its oldest, then the id."""
    if obs["after_end"]:
        note(f"session {obs['session_id']} has ended; the observation was kept (after_end)")
    if obs["dropped"]:
        note(
            f"session {obs['session_id']} is at its observation cap: "
            f"dropped the {obs['dropped']} oldest"
        )
    if ctx.json:
        emit_json(obs)
    else:
        say(obs["id"])
    return 0


def _actions(count: int) -> str:
    return f", {count} action{'' if count == 1 else 's'})"


def forgotten(ctx: Context, result: dict[str, Any]) -> int:
    """``session delete``, ``observation delete``, ``lesson delete``, ``forget``: what
    went, and what keeps a copy."""
    if ctx.json:
        emit_json(result)
    else:
        if result["kind"] == "session":
            what = f"session {result['id']} ({result['observations']} observations" + (
                _actions(result["actions"]) if result.get("actions") else ")"
            )
        else:
            count = result["lessons" if result["kind"] == "lesson" else "observations"]
            what = f"{count} {result['kind']}{'' if count == 1 else 's'}"
        quotes = result.get("quotes_blanked") or 0
        quoted = f"; {quotes} quotes of it in summaries became [forgotten]" if quotes else ""
        done = "deleted" if result["kind"] == "lesson" else "forgot"
        say(
            f"{done} {what}; {result['audit_entries_blanked']} audit entries keep only the "
            f"fact{quoted}"
        )
    replaced = result.get("superseded_forgotten") or []
    if replaced and not ctx.json:
        note(
            f"forgot {len(replaced)} lesson{'' if len(replaced) == 1 else 's'} it had replaced, "
            f"which would have come back without it (restorable): {', '.join(replaced)}"
        )
    quoting = result.get("lessons_quoting") or []
    if quoting and not ctx.json:
        one = len(quoting) == 1
        note(
            f"{len(quoting)} lesson{'' if one else 's'} {'says' if one else 'say'} it word for "
            f"word and {'stays' if one else 'stay'} (a record of its own): "
            f"memwork lesson delete {' '.join(quoting)}"
        )
    held = result["checkpoints_may_hold"]
    if held:
        note(
            f"{len(held)} checkpoint{'' if len(held) == 1 else 's'} taken since may still hold "
            f"a copy until deleted: {', '.join(h[:8] for h in held)}"
        )
    return 0
