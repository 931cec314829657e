"""How ``memwork checkpoint …`` (store-wide) prints its results."""

from __future__ import annotations

from typing import Any

from .main import Context
from .output import clip, emit_json, note, say


def listed(ctx: Context, docs: list[dict[str, Any]]) -> int:
    """``checkpoint list``: a line each, with its record count."""
    if ctx.json:
        emit_json(docs)
        return 0
    for doc in docs:
        total = sum(doc["counts"].values())
        auto = " (automatic)" if doc.get("automatic") else ""
        say(
            f"{doc['id']}  {doc['created_at'][:19]}Z  {total:>6} records  "
            f"{clip(doc['description'], 50)}{auto}"
        )
    return 0


def diffed(ctx: Context, result: dict[str, Any]) -> int:
    """``checkpoint diff``: per table, what was added, removed and changed (10 of each)."""
    if ctx.json:
        emit_json(result)
        return 0
    say(f"from {result['from']} to {result['to']}")
    quiet = True
    for table, change in result["tables"].items():
        if not (change["added"] or change["removed"] or change["changed"]):
            continue
        quiet = False
        say(
            f"{table}: +{len(change['added'])} added, -{len(change['removed'])} removed, "
            f"~{len(change['changed'])} changed"
        )
        for key in change["added"][:10]:
            say(f"  + {key}")
        for key in change["removed"][:10]:
            say(f"  - {key}")
        for item in change["changed"][:10]:
            say(f"  ~ {item['id']}: {', '.join(item['fields'])}")
    if quiet:
        say("no changes")
    return 0


def restored(ctx: Context, before: dict[str, Any]) -> int:
    """``checkpoint restore``: what it found damaged, how to undo it, then the automatic
    checkpoint's id."""
    for found in before["damaged"]:
        what = "missing" if found["moved_to"] is None else "damaged"
        now = (
            "the checkpoint's copy replaces it"
            if found["restored"]
            else "the checkpoint holds no copy of it, so the store goes on without it"
        )
        kept = (
            f"; its file is kept in {found['moved_to']} (inside the store)"
            if found["moved_to"]
            else ""
        )
        note(f"memwork: table {found['table']} was {what}: {now}{kept}")
    note(f"restored; undo with: memwork checkpoint restore {before['id']}")
    if ctx.json:
        emit_json(before)
    else:
        say(before["id"])
    return 0
