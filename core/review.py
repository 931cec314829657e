"""The review queue: what agents want to remember waits for a person.

While the store setting ``review`` is on (``memwork config set review on``),
lesson adds and slot set/append/replace that come from an *agent* become
*proposals* instead of live records. Proposals never reach the context; a
person approves (optionally with their own text), rejects (with a reason) or
merges them (a proposed lesson reinforces an existing one instead). Every
proposal and every decision is audited; decided proposals are kept.

Who is an agent is decided by the actor alone (:func:`is_agent`): ``cli``,
``mcp``, ``api`` and anything else that is not the workbench (``tui``), which
is a person whose edits go live directly. Every door that writes for agents
calls one function per write — :func:`submit_lesson` or :func:`submit_slot` —
which proposes or writes in one transaction, so the setting cannot change
between the decision and the write.

A proposal is checked when it is made, with the rules the live write applies
(an empty lesson, a bad scope, a slot edit past its limit, a read-only slot or
a ``replace`` whose text is absent are refused at once, exit 2), and checked
again when approved, against the store as it is then.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rapidfuzz import fuzz, process

from . import audit, cards, config, contradictions, ids, lessons, links, lookup, slots
from .clock import iso
from .decay import is_live
from .errors import Conflict, InvalidInput, NotFound
from .models.base import validate
from .models.lesson import Lesson
from .models.proposal import Proposal
from .privacy import scrub
from .storage.store import Store
from .text import clip, fingerprint, normalise, one_line

TABLE = "proposals"
#: Actor kinds that are a person at the keyboard; every other actor is an agent.
PERSON_ACTORS = frozenset({"tui"})
SLOT_OPS = ("set", "append", "replace")
STATUSES = ("pending", "approved", "rejected", "merged")

Doc = dict[str, Any]


# -- who decides ----------------------------------------------------------------------
def is_agent(actor: str) -> bool:
    """Whether ``actor`` writes for an agent (``cli``, ``cli:<agent>``, ``mcp…``,
    ``api…``); the workbench (``tui``) is a person."""
    return actor.split(":", 1)[0] not in PERSON_ACTORS


def needs_review(store: Store, actor: str) -> bool:
    """Whether a write by ``actor`` must become a proposal now (inside a read)."""
    return is_agent(actor) and config.is_on(store, "review")


@dataclass
class Submitted:
    """What a submitted write did: proposed it (``proposal``) or wrote it (``result``)."""

    proposal: Doc | None = None
    result: Any = None

    @property
    def proposed(self) -> bool:
        """Whether the write waits for review."""
        return self.proposal is not None


def submit_lesson(
    store: Store,
    content: str,
    *,
    now: datetime,
    actor: str,
    scope: str = "global",
    confidence: float | None = None,
    tags: list[str] | None = None,
    on_duplicate: str = "reinforce",
    source: str = "agent",
) -> Submitted:
    """``lessons.add_lesson``, or a proposal of it while review is on for ``actor``."""
    args = {
        "content": content,
        "scope": scope,
        "confidence": confidence,
        "tags": sorted(set(tags or [])),
        "on_duplicate": on_duplicate,
        "source": source,
    }
    with store.transaction():
        if needs_review(store, actor):
            return Submitted(proposal=propose(store, "lesson", "add", args, now=now, actor=actor))
        return Submitted(
            result=lessons.add_lesson(store, content, now=now, actor=actor, **_kw(args))
        )


def submit_slot(
    store: Store, op: str, label: str, *, now: datetime, actor: str, **args: Any
) -> Submitted:
    """A slot ``set`` (content, limit, description), ``append`` (text) or ``replace``
    (old, new), or a proposal of it while review is on for ``actor``."""
    if op not in SLOT_OPS:
        raise InvalidInput("op", f"must be one of {', '.join(SLOT_OPS)} (got {op!r})")
    with store.transaction():
        if needs_review(store, actor):
            args = {"label": label, **args}
            return Submitted(proposal=propose(store, "slot", op, args, now=now, actor=actor))
        return Submitted(result=_slot_write(store, op, {"label": label, **args}, now, actor))


# -- the operations agents' doors call -------------------------------------------------
def _answer(store: Store, submitted: Submitted, now: datetime) -> Doc | None:
    """What a write that became a proposal returns: the proposal, ``"proposed": True``."""
    if submitted.proposal is None:
        return None
    return {**get_proposal(store, submitted.proposal["id"], now), "proposed": True}


def add_lesson(
    store: Store,
    text: str,
    *,
    now: datetime,
    actor: str,
    scope: str = "global",
    confidence: float | None = None,
    tags: list[str] | None = None,
    on_duplicate: str = "reinforce",
) -> Doc:
    """The ``add_lesson`` operation: the saved lesson (what the save did in ``action``),
    or the proposal while review is on for ``actor``."""
    submitted = submit_lesson(
        store,
        text,
        now=now,
        actor=actor,
        scope=scope,
        confidence=confidence,
        tags=tags,
        on_duplicate=on_duplicate,
    )
    proposed = _answer(store, submitted, now)
    return proposed if proposed is not None else lessons.write_record(submitted.result, now)


def set_slot(
    store: Store,
    label: str,
    text: str,
    *,
    now: datetime,
    actor: str,
    limit: int | None = None,
    description: str | None = None,
) -> Doc:
    """The ``set_slot`` operation: the slot, or the proposal while review is on."""
    submitted = submit_slot(
        store,
        "set",
        label,
        now=now,
        actor=actor,
        content=text,
        limit=limit,
        description=description,
    )
    proposed = _answer(store, submitted, now)
    return proposed if proposed is not None else dict(submitted.result)


def append_slot(store: Store, label: str, text: str, *, now: datetime, actor: str) -> Doc:
    """The ``append_slot`` operation: the slot, or the proposal while review is on."""
    submitted = submit_slot(store, "append", label, now=now, actor=actor, text=text)
    proposed = _answer(store, submitted, now)
    return proposed if proposed is not None else dict(submitted.result)


def set_profile(
    store: Store,
    project: str,
    text: str,
    *,
    now: datetime,
    actor: str,
    limit: int | None = None,
) -> Doc:
    """The ``set_profile`` operation: the project's profile, or the proposal while review
    is on for ``actor`` (a profile leads the project's context, as a slot does)."""
    from . import profiles

    with store.transaction():
        if needs_review(store, actor):
            args = {"project": project, "content": text, "limit": limit}
            proposal = propose(store, "profile", "set", args, now=now, actor=actor)
        else:
            return profiles.set_profile(store, project, text, limit=limit, now=now, actor=actor)
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


def replace_in_slot(
    store: Store, label: str, old: str, new: str, *, now: datetime, actor: str
) -> Doc:
    """The ``replace_in_slot`` operation: the slot with ``replaced`` (how many times), or
    the proposal while review is on."""
    submitted = submit_slot(store, "replace", label, now=now, actor=actor, old=old, new=new)
    proposed = _answer(store, submitted, now)
    if proposed is not None:
        return proposed
    slot, count = submitted.result
    return {**slot, "replaced": count}


def edit_lesson(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    text: str | None = None,
    scope: str | None = None,
    tags: list[str] | None = None,
    confidence: float | None = None,
) -> Doc:
    """The ``edit_lesson`` operation: the edited lesson, or, while review is on for
    ``actor`` and the edit changes the words or the scope, the proposal.

    Tags and confidence alone go live: they change no words the context shows (as
    reinforcing or weakening a lesson goes live).
    """
    with store.transaction():
        if needs_review(store, actor) and (text is not None or scope is not None):
            target = lessons.resolve(store, key)
            args = {"lesson": target["id"], "content": text, "scope": scope, "tags": tags}
            if confidence is not None:
                args["confidence"] = confidence
            proposal = propose(store, "lesson", "edit", args, now=now, actor=actor)
        else:
            edited = lessons.edit(
                store,
                key,
                now=now,
                actor=actor,
                content=text,
                scope=scope,
                tags=tags,
                confidence=confidence,
            )
            return edited
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


def edit_card(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    lesson: str | None = None,
    evidence: str | None = None,
) -> Doc:
    """The ``edit_card`` operation: the edited card, or the proposal while review is on
    for ``actor`` (a card's lesson and evidence reach the context)."""
    with store.transaction():
        if not needs_review(store, actor):
            return cards.edit_card(
                store, key, now=now, actor=actor, lesson=lesson, evidence=evidence
            )
        target = cards.resolve(store, key)
        args = {"card": target["id"], "lesson": lesson, "evidence": evidence}
        proposal = propose(store, "card", "edit", args, now=now, actor=actor)
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


# -- proposing ------------------------------------------------------------------------
def _kw(args: Doc) -> Doc:
    """The keyword arguments of ``lessons.add_lesson`` from a lesson proposal's args."""
    return {k: args.get(k) for k in ("scope", "confidence", "tags", "on_duplicate", "source")}


def _slot_write(store: Store, op: str, args: Doc, now: datetime, actor: str) -> Any:
    label = args["label"]
    if op == "set":
        return slots.set_slot(
            store,
            label,
            args["content"],
            now=now,
            actor=actor,
            limit=args.get("limit"),
            description=args.get("description"),
        )
    if op == "append":
        return slots.append_slot(store, label, args["text"], now=now, actor=actor)
    return slots.replace_in_slot(store, label, args["old"], args["new"], now=now, actor=actor)


#: What can be proposed: (kind, op).
PROPOSABLE = (
    ("lesson", "add"),
    ("lesson", "edit"),
    ("card", "edit"),
    *(("slot", o) for o in SLOT_OPS),
    ("profile", "set"),
)
#: The argument a reviewer's own text (``approve --edit``) replaces, per (kind, op).
EDITED_FIELD = {
    ("lesson", "add"): "content",
    ("lesson", "edit"): "content",
    ("card", "edit"): "lesson",
    ("slot", "set"): "content",
    ("slot", "append"): "text",
    ("slot", "replace"): "new",
    ("profile", "set"): "content",
}


def _edit_plan(store: Store, kind: str, args: Doc) -> tuple[Doc, Doc]:
    """(the record now, the record the edit would make), checked as the live edit would be."""
    if kind == "lesson":
        before = lessons.resolve(store, args["lesson"])
        after = dict(before)
        if args.get("content") is not None:
            text = scrub(args["content"]).strip()
            if not text:
                raise InvalidInput("content", "must not be empty")
            after["content"] = text
        if args.get("scope") is not None:
            after["scope"] = args["scope"]
        validate(Lesson, {**links.stored(after), "fingerprint": fingerprint(after["content"])})
        return before, after
    before = cards.resolve(store, args["card"])
    after = dict(before)
    if args.get("lesson") is not None:
        text = scrub(args["lesson"]).strip()
        if not text:
            raise InvalidInput("lesson", "must not be empty")
        after["lesson"] = text
    if args.get("evidence") is not None:
        after["evidence"] = scrub(args["evidence"]).strip()
    return before, after


def _checked(kind: str, op: str, args: Doc, store: Store, now: datetime) -> tuple[str, Doc]:
    """(target, scrubbed args) of a proposal the live write would take now; else the
    live write's own error."""
    if op == "edit":
        before, after = _edit_plan(store, kind, args)
        text = "content" if kind == "lesson" else "lesson"
        clean = {**args, text: after[text] if args.get(text) is not None else None}
        if kind == "card" and args.get("evidence") is not None:
            clean["evidence"] = after["evidence"]
        return before["id"], clean
    if kind == "lesson":
        fresh = lessons.new_lesson(args["content"], now=now, **_kw(args))
        clean = {**args, "content": fresh["content"], "tags": fresh["tags"]}
        return fresh["scope"], clean
    if kind == "profile":
        from . import profiles

        plan = profiles.preview(store, args["project"], args["content"], limit=args.get("limit"))
        return plan["project"], {**args, "project": plan["project"], "content": plan["after"]}
    plan = _slot_plan(store, op, args["label"], args)
    # Slots are curated text: secrets go, personal details stay (as slots.set_slot keeps them).
    clean = {k: slots.scrub(v) if isinstance(v, str) else v for k, v in args.items()}
    clean["label"] = plan["label"]
    return plan["label"], clean


def propose(store: Store, kind: str, op: str, args: Doc, *, now: datetime, actor: str) -> Doc:
    """Store a proposal (checked as the live write would be) and audit it."""
    if (kind, op) not in PROPOSABLE:
        raise InvalidInput("op", f"{kind} {op} cannot be proposed")
    stamp = iso(now)
    with store.transaction():
        target, clean = _checked(kind, op, args, store, now)
        doc = validate(
            Proposal,
            {
                "id": ids.new_id("prop"),
                "kind": kind,
                "op": op,
                "target": target,
                "args": clean,
                "proposed_by": actor,
                "created_at": stamp,
                "updated_at": stamp,
            },
        ).to_doc()
        store.put(TABLE, doc["id"], doc)
        _audit(store, actor, "propose", doc, now, change_line(doc))
    return doc


# -- reading --------------------------------------------------------------------------
def change_line(proposal: Doc) -> str:
    """What a proposal would change, in one line."""
    args = proposal["args"]
    if proposal["op"] == "edit":
        what = args.get("content") if proposal["kind"] == "lesson" else args.get("lesson")
        if what is None:
            what = f"scope {args['scope']}" if args.get("scope") else args.get("evidence") or ""
        return f"edit {proposal['kind']} {proposal['target']}: {clip(what, 90)}"
    if proposal["kind"] == "lesson":
        return f"add lesson ({proposal['target']}): {clip(args.get('content', ''), 100)}"
    if proposal["kind"] == "profile":
        return f"set profile {proposal['target']}: {clip(args.get('content', ''), 80)}"
    label = proposal["target"]
    if proposal["op"] == "set":
        return f"set slot {label}: {clip(args.get('content', ''), 80)}"
    if proposal["op"] == "append":
        return f"append to slot {label}: {clip(args.get('text', ''), 80)}"
    return (
        f"replace in slot {label}: {clip(args.get('old', ''), 36)!r} -> "
        f"{clip(args.get('new', ''), 36)!r}"
    )


def resolve(store: Store, key: str) -> Doc:
    """A proposal by id or unique start or end of it."""
    return lookup.resolve(store.docs(TABLE), key, "proposal")


def list_proposals(store: Store, now: datetime, *, include_decided: bool = False) -> list[Doc]:
    """Proposals, oldest first (pending only unless asked), each with what it would
    change and its flags (see :func:`describe`)."""
    with store.reading():
        docs = sorted(store.docs(TABLE).values(), key=lambda d: (d["created_at"], d["id"]))
        if not include_decided:
            docs = [d for d in docs if d["status"] == "pending"]
        all_lessons = lessons.all_lessons(store)
        return [describe(store, dict(d), now, all_lessons) for d in docs]


def pending_count(store: Store) -> int:
    """How many proposals wait for review."""
    with store.reading():
        return sum(1 for d in store.docs(TABLE).values() if d["status"] == "pending")


def get_proposal(store: Store, key: str, now: datetime) -> Doc:
    """One proposal with what it would change and its flags."""
    with store.reading():
        return describe(store, resolve(store, key), now, lessons.all_lessons(store))


def describe(store: Store, proposal: Doc, now: datetime, all_lessons: list[Doc]) -> Doc:
    """The proposal plus ``change`` (one line), ``flags`` (one line each) and, for a
    pending one, what it would do now:

    - a lesson: ``duplicate_of`` (the live lesson approval would reinforce, with
      ``similarity``), ``contradicts`` (ids of live lessons it negates) and
      ``nearest`` (the most similar live lesson whose scope meets its own, any
      similarity, for a reviewer to compare);
    - a slot edit: ``before``, ``after`` and ``diff`` (unified diff lines), or
      ``stale`` when it would be refused now (the reason).
    """
    out: Doc = {**proposal, "change": change_line(proposal), "flags": []}
    if proposal["status"] != "pending":
        return out
    if proposal["op"] == "edit":
        out.update(_edit_preview(store, proposal))
    elif proposal["kind"] == "lesson":
        out.update(_lesson_flags(proposal, now, all_lessons))
    elif proposal["kind"] == "profile":
        out.update(_profile_preview(store, proposal))
    else:
        out.update(_slot_preview(store, proposal))
    return out


def _lesson_flags(proposal: Doc, now: datetime, all_lessons: list[Doc]) -> Doc:
    args = proposal["args"]
    content, scope = args["content"], proposal["target"]
    flags: list[str] = []
    found: Doc = {"duplicate_of": None, "similarity": None, "contradicts": [], "nearest": None}
    same = [
        x
        for x in all_lessons
        if x["scope"] == scope
        and x["fingerprint"] == fingerprint(content)
        and not x.get("superseded_by")
    ]
    match = (same[0], 100.0) if same else lessons.near_duplicate(all_lessons, content, scope, now)
    if match is not None:
        found["duplicate_of"], found["similarity"] = match[0]["id"], round(match[1], 1)
        word = "same text as" if same else f"near-duplicate ({match[1]:.0f}) of"
        flags.append(f"{word} {match[0]['id']}")
    opposite = contradictions.of_lesson(all_lessons, content, scope, now)
    found["contradicts"] = [x["id"] for x in opposite]
    flags += [f"contradicts {x['id']}" for x in opposite]
    live = [
        x for x in all_lessons if is_live(x, now) and contradictions.scopes_meet(scope, x["scope"])
    ]
    if live:
        best = process.extractOne(
            normalise(content), [normalise(x["content"]) for x in live], scorer=fuzz.token_set_ratio
        )
        if best is not None:
            nearest = live[best[2]]
            found["nearest"] = {
                "id": nearest["id"],
                "content": nearest["content"],
                "scope": nearest["scope"],
                "similarity": round(float(best[1]), 1),
            }
    found["flags"] = flags
    return found


def _slot_plan(store: Store, op: str, label: str, args: Doc) -> Doc:
    """What a proposed slot write would do, from the arguments the proposal keeps."""
    return slots.preview(
        store,
        op,
        label,
        content=args.get("content"),
        text=args.get("text"),
        old=args.get("old"),
        new=args.get("new"),
        limit=args.get("limit"),
        description=args.get("description"),
    )


def _text_diff(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=2)
        if not line.startswith(("---", "+++"))
    ]


def _edit_preview(store: Store, proposal: Doc) -> Doc:
    """A proposed lesson or card edit: the text ``before`` and ``after``, and its ``diff``;
    ``stale`` when the edit would be refused now (the record is gone, say)."""
    try:
        before, after = _edit_plan(store, proposal["kind"], proposal["args"])
    except (InvalidInput, Conflict, NotFound) as exc:
        return {"stale": str(exc), "flags": [f"no longer applies: {exc}"]}
    field = "content" if proposal["kind"] == "lesson" else "lesson"
    flags = []
    if before.get("scope") != after.get("scope"):
        flags.append(f"moves it from {before['scope']} to {after['scope']}")
    return {
        "before": before[field],
        "after": after[field],
        "diff": _text_diff(before[field], after[field]),
        "flags": flags,
    }


def _profile_preview(store: Store, proposal: Doc) -> Doc:
    from . import profiles

    args = proposal["args"]
    try:
        plan = profiles.preview(store, args["project"], args["content"], limit=args.get("limit"))
    except (InvalidInput, Conflict, NotFound) as exc:
        return {"stale": str(exc), "flags": [f"no longer applies: {exc}"]}
    return {
        "before": plan["before"],
        "after": plan["after"],
        "diff": _text_diff(plan["before"], plan["after"]),
        "limit": plan["limit"],
        "flags": [] if plan["exists"] else [f"creates the profile of {plan['project']}"],
    }


def _slot_preview(store: Store, proposal: Doc) -> Doc:
    args = proposal["args"]
    try:
        plan = _slot_plan(store, proposal["op"], proposal["target"], args)
    except (InvalidInput, Conflict, NotFound) as exc:
        return {"stale": str(exc), "flags": [f"no longer applies: {exc}"]}
    diff = _text_diff(plan["before"], plan["after"])
    flags = [] if plan["exists"] else [f"creates slot {plan['label']}"]
    return {
        "before": plan["before"],
        "after": plan["after"],
        "diff": diff,
        "limit": plan["limit"],
        "flags": flags,
    }


# -- deciding -------------------------------------------------------------------------
def _pending(store: Store, key: str) -> Doc:
    proposal = resolve(store, key)
    if proposal["status"] != "pending":
        raise Conflict(f"proposal {proposal['id']} was already {proposal['status']}")
    return proposal


def _decide(
    store: Store, proposal: Doc, status: str, now: datetime, actor: str, **fields: Any
) -> Doc:
    doc = validate(
        Proposal,
        {
            **proposal,
            **fields,
            "status": status,
            "decided_by": actor,
            "decided_at": iso(now),
            "updated_at": iso(now),
        },
    ).to_doc()
    store.put(TABLE, doc["id"], doc)
    return doc


def approve(store: Store, key: str, *, now: datetime, actor: str, edit: str | None = None) -> Doc:
    """Make a proposal live, as proposed or with ``edit`` as its text (the lesson's
    content, a slot's new content, the appended text, or the replacement).

    The write runs as ``actor`` (the reviewer) and is checked against the store as
    it is now: a refusal (a slot edit that no longer fits, say) leaves the proposal
    pending. Returns the decided proposal.
    """
    with store.transaction():
        proposal = _pending(store, key)
        args = dict(proposal["args"])
        edited = edit is not None
        if edited:
            if not isinstance(edit, str) or not edit.strip():
                raise InvalidInput("edit", "must not be empty")
            args[EDITED_FIELD[(proposal["kind"], proposal["op"])]] = edit
        if proposal["op"] == "edit":
            result_id = _apply_edit(store, proposal["kind"], args, now, actor)["id"]
            result = f"edited {proposal['kind']} {result_id}"
        elif proposal["kind"] == "lesson":
            written = lessons.add_lesson(store, args["content"], now=now, actor=actor, **_kw(args))
            result_id = written.lesson["id"]
            result = {
                "created": f"created lesson {result_id}",
                "kept-both": f"created lesson {result_id} (kept beside {written.duplicate_of})",
                "superseded": f"created lesson {result_id}, superseding {written.duplicate_of}",
                "reinforced": f"reinforced lesson {result_id} (already known)",
            }[written.action]
        elif proposal["kind"] == "profile":
            from . import profiles

            profile = profiles.set_profile(
                store,
                args["project"],
                args["content"],
                limit=args.get("limit"),
                now=now,
                actor=actor,
            )
            result_id = profile["id"]
            result = f"set profile {profile['project']}"
        else:
            written = _slot_write(store, proposal["op"], args, now, actor)
            slot = written[0] if isinstance(written, tuple) else written
            result_id = slot["id"]
            result = f"{proposal['op']} slot {slot['label']}"
        decided = _decide(
            store,
            proposal,
            "approved",
            now,
            actor,
            args=args,
            edited=edited,
            result_id=result_id,
            result=result,
        )
        by = f" (proposed by {proposal['proposed_by']}{', edited' if edited else ''})"
        _audit(store, actor, "approve", decided, now, f"approve: {result}{by}")
    return decided


def _apply_edit(store: Store, kind: str, args: Doc, now: datetime, actor: str) -> Doc:
    if kind == "lesson":
        return lessons.edit(
            store,
            args["lesson"],
            now=now,
            actor=actor,
            content=args.get("content"),
            scope=args.get("scope"),
            tags=args.get("tags"),
            confidence=args.get("confidence"),
        )
    return cards.edit_card(
        store,
        args["card"],
        now=now,
        actor=actor,
        lesson=args.get("lesson"),
        evidence=args.get("evidence"),
    )


def reject(store: Store, key: str, *, now: datetime, actor: str, why: str = "") -> Doc:
    """Turn a proposal down (kept, with the reason); nothing else changes."""
    reason = one_line(scrub(why or ""))
    with store.transaction():
        proposal = _pending(store, key)
        decided = _decide(store, proposal, "rejected", now, actor, why=reason)
        note = f": {reason}" if reason else ""
        _audit(store, actor, "reject", decided, now, f"reject {change_line(decided)}{note}")
    return decided


def merge(store: Store, key: str, lesson_key: str, *, now: datetime, actor: str) -> Doc:
    """Reinforce an existing lesson with a proposed lesson instead of adding it (the
    proposed wording joins the lesson's other wordings)."""
    with store.transaction():
        proposal = _pending(store, key)
        if (proposal["kind"], proposal["op"]) != ("lesson", "add"):
            raise Conflict(
                f"proposal {proposal['id']} is a {proposal['kind']} {proposal['op']}; only "
                "proposed lessons can be merged"
            )
        target = lessons.resolve(store, lesson_key)
        merged = lessons.reinforce_with(
            store,
            target["id"],
            proposal["args"]["content"],
            tags=proposal["args"].get("tags"),
            note=f"merged proposal {proposal['id']}",
            now=now,
            actor=actor,
        )
        decided = _decide(
            store,
            proposal,
            "merged",
            now,
            actor,
            result_id=merged["id"],
            result=f"reinforced lesson {merged['id']}",
        )
        _audit(
            store,
            actor,
            "merge",
            decided,
            now,
            f"merge into {merged['id']}: {clip(proposal['args']['content'], 80)}",
        )
    return decided


def _audit(store: Store, actor: str, action: str, proposal: Doc, now: datetime, what: str) -> None:
    audit.record(
        store,
        actor=actor,
        action=action,
        table=TABLE,
        record_id=proposal["id"],
        summary=what,
        now=now,
    )
