"""``memwork checkpoint …`` (store-wide)."""

from __future__ import annotations

from .. import checkpoints
from .main import Context
from .output import clip, emit_json, note, say


def create(ctx: Context) -> int:
    doc = checkpoints.create(ctx.store, ctx.args.message, now=ctx.now, actor=ctx.actor)
    if ctx.json:
        emit_json(doc)
    else:
        say(doc["id"])
    return 0


def list_(ctx: Context) -> int:
    docs = checkpoints.list_checkpoints(ctx.store)
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


def diff(ctx: Context) -> int:
    result = checkpoints.diff(ctx.store, ctx.args.id, ctx.args.id2)
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


def restore(ctx: Context) -> int:
    before = checkpoints.restore(ctx.store, ctx.args.id, now=ctx.now, actor=ctx.actor)
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


def delete(ctx: Context) -> int:
    doc = checkpoints.delete(ctx.store, ctx.args.id, now=ctx.now, actor=ctx.actor)
    if ctx.json:
        emit_json(doc)
    else:
        say(doc["id"])
    return 0
