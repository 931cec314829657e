"""``memwork rule …``"""

from __future__ import annotations

from .. import rules
from .main import Context
from .output import clip, emit_json, note, say


def add(ctx: Context) -> int:
    from .. import review

    submitted = review.submit_rule(
        ctx.store,
        ctx.args.text,
        now=ctx.now,
        actor=ctx.actor,
        scope=ctx.args.scope,
        curator=ctx.curator,
    )
    if submitted.proposal is not None:
        from .cmd_review import proposed

        return proposed(ctx, submitted.proposal)
    doc, outcome = submitted.result
    if outcome == "unchanged":
        note(f"already active: {doc['id']}")
    elif outcome == "reactivated":
        note(f"reactivated {doc['id']} as the newest rule of {doc['scope']}")
    if ctx.json:
        emit_json({**doc, "outcome": outcome})
    else:
        say(doc["id"])
    return 0


def list_(ctx: Context) -> int:
    with ctx.store.reading():
        docs = rules.all_rules(ctx.store, active_only=not ctx.args.all)
    if ctx.args.scope:
        docs = [d for d in docs if d["scope"] == ctx.args.scope]
    if ctx.json:
        emit_json(docs)
        return 0
    for doc in docs:
        flag = "" if doc["active"] else "  (inactive)"
        say(f"{doc['id']}  {doc['scope']:<20} {clip(doc['text'], 80)}{flag}")
    return 0
