"""A proposal beside what it would change: the slot's diff, or the nearest live lesson.

Renders what :func:`core.services.review.describe` returns; the Review pane shows it in
its detail column.
"""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Any

from rich.text import Text

from ...core.base.text import one_line
from ...core.services.review import EDITED_FIELD
from .bars import ago

#: Decided proposals: their state's colour.
STATUS_STYLE = {"approved": "green", "rejected": "red", "merged": "cyan", "pending": "yellow"}


def kind_label(proposal: dict[str, Any]) -> str:
    """``lesson add`` / ``slot append`` …"""
    return f"{proposal['kind']} {proposal['op']}"


def row_change(proposal: dict[str, Any]) -> str:
    """What a proposal would change, for its row in the list: the proposed text first
    (the Proposal column already says "lesson add" or "slot append")."""
    args = proposal["args"]
    if proposal["kind"] != "slot":
        # A new lesson, or a lesson's or card's new text: the text, then what it is for.
        text = one_line(proposed_text(proposal)) or proposal.get("change", "")
        return f"{text}  · {proposal['target']}"
    label = proposal["target"]
    if proposal["op"] == "replace":
        return f"{label}: {one_line(args.get('old', ''))!r} → {one_line(args.get('new', ''))!r}"
    return f"{label}: {one_line(proposed_text(proposal))}"


def proposed_text(proposal: dict[str, Any]) -> str:
    """The text the agent proposes (what an edit replaces)."""
    field = EDITED_FIELD.get((proposal["kind"], proposal["op"]), "content")
    return str(proposal["args"].get(field) or "")


def render_proposal(
    proposal: dict[str, Any] | None, now: datetime, warning: str = "yellow"
) -> Text:
    """Everything a reviewer needs to decide on one proposal (``warning``: the theme's
    colour for flags)."""
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
        target = {
            "lesson": "scope",
            "rule": "scope",
            "config": "setting",
            "checkpoint": "checkpoint",
        }.get(proposal["kind"], "slot")
    out.append(f"{target} ", style="bright_black")
    out.append(f"{proposal['target']}\n")
    for flag in proposal.get("flags", []):
        out.append(f"⚑ {flag}\n", style=warning)
    if status != "pending":
        _decision(out, proposal, now)
    if proposal["kind"] == "lesson" and proposal["op"] == "add":
        _lesson(out, proposal)
    elif proposal["kind"] in ("rule", "config", "checkpoint"):
        # A rule, review turned off, a restore past review: the change line says it all.
        out.append("\nProposed change\n", style="bold")
        out.append(f"{proposal.get('change', '')}\n")
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
    if proposal.get("duplicate_of") and proposal.get("approve_reinforces"):
        out.append("a (approve) reinforces it; m merges into it\n", style="italic bright_black")
    elif proposal.get("duplicate_of"):
        out.append(
            "a (approve) keeps both (it may be new advice); m merges into it\n",
            style="italic bright_black",
        )


def _slot(out: Text, proposal: dict[str, Any]) -> None:
    if proposal["status"] != "pending":
        out.append("\nProposed text\n", style="bold")
        out.append(f"{proposed_text(proposal)}\n")
        return
    if proposal.get("stale"):
        out.append("\nNo longer applies\n", style="bold red")
        out.append(f"{proposal['stale']}\n", style="red")
        out.append(
            "r rejects it; e edits the whole slot from what it holds now, then approves\n"
            if proposal["kind"] == "slot"
            else "r rejects it\n",
            style="italic bright_black",
        )
        return
    before, after = proposal.get("before", ""), proposal.get("after", "")
    limit = proposal.get("limit")
    out.append("\nWhat changes\n", style="bold")
    out.append(f"{len(before)} → {len(after)} characters", style="bright_black")
    out.append(f" (limit {limit})\n" if limit else "\n", style="bright_black")
    out.append_text(diff_text(proposal.get("diff", [])))
    if not proposal.get("diff"):
        out.append("(no change to the text)\n", style="bright_black")


def diff_text(lines: list[str]) -> Text:
    """Unified diff lines, coloured; where a removed line is followed by its
    replacement, the characters that changed inside the pair are marked too (a
    changed version number is otherwise easy to miss in a long line)."""
    out = Text()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("-") and i + 1 < len(lines) and lines[i + 1].startswith("+"):
            removed = [line]
            while i + len(removed) < len(lines) and lines[i + len(removed)].startswith("-"):
                removed.append(lines[i + len(removed)])
            added: list[str] = []
            j = i + len(removed)
            while j + len(added) < len(lines) and lines[j + len(added)].startswith("+"):
                added.append(lines[j + len(added)])
            if len(removed) == len(added):
                for old, new in zip(removed, added, strict=True):
                    out.append_text(_marked(old, new, "red", removed=True))
                for old, new in zip(removed, added, strict=True):
                    out.append_text(_marked(old, new, "green", removed=False))
                i = j + len(added)
                continue
        style = (
            "cyan"
            if line.startswith("@@")
            else "green"
            if line.startswith("+")
            else "red"
            if line.startswith("-")
            else "bright_black"
        )
        out.append(f"{line}\n", style=style)
        i += 1
    return out


def _marked(old: str, new: str, colour: str, *, removed: bool) -> Text:
    """One side of a changed line, its changed characters reversed."""
    text = Text(f"{old if removed else new}\n", style=colour)
    matcher = difflib.SequenceMatcher(None, old[1:], new[1:], autojunk=False)
    for op, a1, a2, b1, b2 in matcher.get_opcodes():
        if op == "equal":
            continue
        start, end = (a1, a2) if removed else (b1, b2)
        if end > start:
            text.stylize(f"bold reverse {colour}", start + 1, end + 1)
    return text
