"""A proposal beside what it would change: the slot's diff, or the nearest live lesson.

Renders what :func:`core.review.describe` returns; the Review pane shows it in
its detail column.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rich.text import Text

from ...core.review import EDITED_FIELD
from .bars import ago

#: Decided proposals: their state's colour.
STATUS_STYLE = {"approved": "green", "rejected": "red", "merged": "cyan", "pending": "yellow"}


def kind_label(proposal: dict[str, Any]) -> str:
    """``lesson add`` / ``slot append`` …"""
    return f"{proposal['kind']} {proposal['op']}"


def proposed_text(proposal: dict[str, Any]) -> str:
    """The text the agent proposes (what an edit replaces)."""
    field = EDITED_FIELD.get((proposal["kind"], proposal["op"]), "content")
    return str(proposal["args"].get(field) or "")


def render_proposal(proposal: dict[str, Any] | None, now: datetime) -> Text:
    """Everything a reviewer needs to decide on one proposal."""
    if proposal is None:
        return Text("No proposal selected", style="bright_black")
    status = proposal["status"]
    out = Text()
    out.append(f"Proposed {kind_label(proposal)}", style="bold")
    out.append(f"  {status}\n", style=STATUS_STYLE.get(status, ""))
    out.append("by ", style="bright_black")
    out.append(proposal["proposed_by"], style="bold")
    out.append(f"  {ago(proposal['created_at'], now)}\n", style="bright_black")
    if proposal["op"] == "edit":
        target = proposal["kind"]  # the lesson or card it edits
    else:
        target = "scope" if proposal["kind"] == "lesson" else "slot"
    out.append(f"{target} ", style="bright_black")
    out.append(f"{proposal['target']}\n")
    for flag in proposal.get("flags", []):
        out.append(f"⚑ {flag}\n", style="yellow")
    if status != "pending":
        _decision(out, proposal, now)
    if proposal["kind"] == "lesson" and proposal["op"] == "add":
        _lesson(out, proposal)
    else:
        _slot(out, proposal)  # a slot edit, or a lesson's or card's new text: its diff
    out.append(f"\n{proposal['id']}", style="bright_black")
    return out


def _decision(out: Text, proposal: dict[str, Any], now: datetime) -> None:
    out.append(f"{proposal['status']} ", style=STATUS_STYLE.get(proposal["status"], ""))
    out.append(f"by {proposal.get('decided_by') or '?'} ")
    out.append(f"{ago(proposal.get('decided_at'), now)}\n", style="bright_black")
    if proposal.get("result"):
        out.append(f"{proposal['result']}{' (edited)' if proposal.get('edited') else ''}\n")
    if proposal.get("why"):
        out.append("why ", style="bright_black")
        out.append(f"{proposal['why']}\n")


def _lesson(out: Text, proposal: dict[str, Any]) -> None:
    args = proposal["args"]
    out.append("\nProposed lesson\n", style="bold")
    out.append(f"{args.get('content', '')}\n")
    details = []
    if args.get("confidence") is not None:
        details.append(f"confidence {args['confidence']:.2f}")
    if args.get("tags"):
        details.append(f"tags {', '.join(args['tags'])}")
    if details:
        out.append("  ".join(details) + "\n", style="bright_black")
    nearest = proposal.get("nearest")
    if proposal["status"] != "pending":
        return
    out.append("\nNearest live lesson\n", style="bold")
    if not nearest:
        out.append("none: no live lesson reaches the same contexts\n", style="bright_black")
        return
    similarity = nearest["similarity"]
    out.append(f"{nearest['content']}\n")
    out.append(
        f"{nearest['scope']} · {similarity:.0f} similar · {nearest['id']}\n", style="bright_black"
    )
    if proposal.get("duplicate_of"):
        out.append("a (approve) reinforces it; m merges into it\n", style="italic bright_black")


def _slot(out: Text, proposal: dict[str, Any]) -> None:
    if proposal["status"] != "pending":
        out.append("\nProposed text\n", style="bold")
        out.append(f"{proposed_text(proposal)}\n")
        return
    if proposal.get("stale"):
        out.append("\nNo longer applies\n", style="bold red")
        out.append(f"{proposal['stale']}\n", style="red")
        out.append("r rejects it; e approves your own text instead\n", style="italic bright_black")
        return
    before, after = proposal.get("before", ""), proposal.get("after", "")
    limit = proposal.get("limit")
    out.append("\nWhat changes\n", style="bold")
    out.append(f"{len(before)} → {len(after)} characters", style="bright_black")
    out.append(f" (limit {limit})\n" if limit else "\n", style="bright_black")
    for line in proposal.get("diff", []):
        if line.startswith("@@"):
            out.append(f"{line}\n", style="cyan")
        elif line.startswith("+"):
            out.append(f"{line}\n", style="green")
        elif line.startswith("-"):
            out.append(f"{line}\n", style="red")
        else:
            out.append(f"{line}\n", style="bright_black")
    if not proposal.get("diff"):
        out.append("(no change to the text)\n", style="bright_black")
