"""The review queue: what agents want to remember waits for a person.

While the store setting ``review`` is on (``memwork config set review on``),
lesson adds and edits, card edits, slot set/append/replace and rule adds that
come from an *agent* become *proposals* instead of live records. Proposals never
reach the context; a person approves (optionally with their own text), rejects
(with a reason) or merges them (a proposed lesson reinforces an existing one
instead). Every proposal and every decision is audited; decided proposals are kept.

Who is a person is decided by the curator key (:mod:`core.ledger.curator`), never by a
name a process gives itself: a door passes the :class:`~core.ledger.curator.Curator`
it was given (the workbench's, or the CLI's ``--curator-key FILE``), and without
it a write is an agent's. Every door that writes for agents calls one function
per write — :func:`submit_lesson`, :func:`submit_slot`, :func:`add_rule`… —
which proposes or writes in one transaction, so the setting cannot change
between the decision and the write. Getting around review is itself a decision
the queue records: turning review off (:func:`set_config`) and restoring a
checkpoint taken while it was off (:func:`restore_checkpoint`) wait as proposals
for an agent, and are recorded as decided proposals when the curator does them.

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

from ..base import ids, lookup
from ..base.clock import iso
from ..base.errors import Conflict, InvalidInput, NotFound, StoreUnreadable
from ..base.text import clip, fingerprint, normalise, one_line
from ..domain import cards, contradictions, lessons, slots
from ..domain.decay import is_live
from ..ledger import audit, config, links
from ..ledger.curator import Curator, check, decision
from ..models.base import validate
from ..models.lesson import Lesson
from ..models.proposal import Proposal
from ..privacy import scrub
from ..storage.store import Store

TABLE = "proposals"
SLOT_OPS = ("set", "append", "replace")
STATUSES = ("pending", "approved", "rejected", "merged")

Doc = dict[str, Any]


# -- who decides ----------------------------------------------------------------------
def needs_review(store: Store, curator: Curator | None, *, now: datetime, actor: str) -> bool:
    """Whether a write must become a proposal now: review is on and the writer did not
    present the store's curator key (call inside a transaction). A key that is not the
    store's is refused, never taken as an agent's write; a store with no curator yet
    takes the first key presented (:func:`core.ledger.curator.check`)."""
    return config.is_on(store, "review") and not _curated(store, curator, now, actor)


def _curated(store: Store, curator: Curator | None, now: datetime, actor: str) -> bool:
    if curator is None:
        return False
    check(store, curator, now=now, actor=actor)
    return True


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
    on_duplicate: str = "keep-both",
    source: str = "agent",
    curator: Curator | None = None,
) -> Submitted:
    """``lessons.add_lesson``, or a proposal of it while review is on (and the writer is
    not the curator)."""
    args = {
        "content": content,
        "scope": scope,
        "confidence": confidence,
        "tags": sorted(set(tags or [])),
        "on_duplicate": on_duplicate,
        "source": source,
    }
    with store.transaction():
        if needs_review(store, curator, now=now, actor=actor):
            return Submitted(proposal=propose(store, "lesson", "add", args, now=now, actor=actor))
        return Submitted(
            result=lessons.add_lesson(store, content, now=now, actor=actor, **_kw(args))
        )


def submit_slot(
    store: Store,
    op: str,
    label: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
    **args: Any,
) -> Submitted:
    """A slot ``set`` (content, limit, description), ``append`` (text) or ``replace``
    (old, new), or a proposal of it while review is on (and the writer is not the
    curator)."""
    if op not in SLOT_OPS:
        raise InvalidInput("op", f"must be one of {', '.join(SLOT_OPS)} (got {op!r})")
    with store.transaction():
        if needs_review(store, curator, now=now, actor=actor):
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
    on_duplicate: str = "keep-both",
    curator: Curator | None = None,
) -> Doc:
    """The ``add_lesson`` operation: the saved lesson (what the save did in ``action``),
    or the proposal while review is on."""
    submitted = submit_lesson(
        store,
        text,
        now=now,
        actor=actor,
        scope=scope,
        confidence=confidence,
        tags=tags,
        on_duplicate=on_duplicate,
        curator=curator,
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
    curator: Curator | None = None,
) -> Doc:
    """The ``set_slot`` operation: the slot, or the proposal while review is on."""
    submitted = submit_slot(
        store,
        "set",
        label,
        now=now,
        actor=actor,
        curator=curator,
        content=text,
        limit=limit,
        description=description,
    )
    proposed = _answer(store, submitted, now)
    return proposed if proposed is not None else dict(submitted.result)


def append_slot(
    store: Store,
    label: str,
    text: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> Doc:
    """The ``append_slot`` operation: the slot, or the proposal while review is on."""
    submitted = submit_slot(
        store, "append", label, now=now, actor=actor, curator=curator, text=text
    )
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
    curator: Curator | None = None,
) -> Doc:
    """The ``set_profile`` operation: the project's profile, or the proposal while review
    is on for ``actor`` (a profile leads the project's context, as a slot does)."""
    from ..domain import profiles

    with store.transaction():
        if needs_review(store, curator, now=now, actor=actor):
            args = {"project": project, "content": text, "limit": limit}
            proposal = propose(store, "profile", "set", args, now=now, actor=actor)
        else:
            return profiles.set_profile(store, project, text, limit=limit, now=now, actor=actor)
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


def replace_in_slot(
    store: Store,
    label: str,
    old: str,
    new: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> Doc:
    """The ``replace_in_slot`` operation: the slot with ``replaced`` (how many times), or
    the proposal while review is on."""
    submitted = submit_slot(
        store, "replace", label, now=now, actor=actor, curator=curator, old=old, new=new
    )
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
    curator: Curator | None = None,
) -> Doc:
    """The ``edit_lesson`` operation: the edited lesson, or, while review is on (and the
    writer is not the curator) and the edit changes the words or the scope, the
    proposal.

    Tags and confidence alone go live: they change no words the context shows (as
    reinforcing or weakening a lesson goes live).
    """
    with store.transaction():
        if (text is not None or scope is not None) and needs_review(
            store, curator, now=now, actor=actor
        ):
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
    curator: Curator | None = None,
) -> Doc:
    """The ``edit_card`` operation: the edited card, or the proposal while review is on
    (a card's lesson and evidence reach the context)."""
    with store.transaction():
        if not needs_review(store, curator, now=now, actor=actor):
            return cards.edit_card(
                store, key, now=now, actor=actor, lesson=lesson, evidence=evidence
            )
        target = cards.resolve(store, key)
        args = {"card": target["id"], "lesson": lesson, "evidence": evidence}
        proposal = propose(store, "card", "edit", args, now=now, actor=actor)
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


# -- rules, settings and restores: what would get around review --------------------------
def add_rule(
    store: Store,
    text: str,
    *,
    now: datetime,
    actor: str,
    scope: str = "global",
    curator: Curator | None = None,
) -> Doc:
    """The ``add_rule`` operation: the rule with its ``outcome``, or the proposal while
    review is on (a manual rule reaches every context of its scope, as a lesson does)."""
    from ..domain import rules

    with store.transaction():
        if needs_review(store, curator, now=now, actor=actor):
            args = {"text": text, "scope": scope}
            proposal = propose(store, "rule", "add", args, now=now, actor=actor)
        else:
            return rules.add_op(store, text, now=now, actor=actor, scope=scope)
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


@decision
def set_config(
    store: Store,
    key: str,
    new: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> Doc:
    """The ``set_config`` operation: ``{"key", "value", "previous"}``, or the proposal.

    Turning review off while it is on is a decision: the curator's is recorded in the
    queue (a decided proposal) and takes effect; anyone else's waits as a proposal.
    Turning review on takes effect at once, and registers a curator when the store has
    none: the key given, else the user's key file (made when missing; its path is in
    ``curator_key``), so that someone can decide.
    """
    config.check_key(key)
    wanted = new.strip().lower() if isinstance(new, str) else new
    with store.transaction():
        if key == "isolation" and wanted == "shared":
            from ..ledger.curator import NotCurator
            from ..ledger.isolation import viewer

            if viewer(store) is not None:
                # An isolated agent does not lift its own isolation (a person may).
                raise NotCurator(
                    "isolation: turning agent isolation off takes the store's curator key "
                    "(--curator-key FILE); nothing was changed"
                )
        on = config.is_on(store, "review")
        if key == "review" and wanted == "off" and on:
            args = {"key": key, "value": "off"}
            if not _curated(store, curator, now, actor):
                proposal = propose(store, "config", "set", args, now=now, actor=actor)
                return {**get_proposal(store, proposal["id"], now), "proposed": True}
            done = config.set_value(store, key, new, now=now, actor=actor)
            _record_decision(
                store, "config", "set", args, now=now, actor=actor, result="review: on -> off"
            )
            return done
        registration: Doc | None = None
        if key == "review" and wanted == "on" and not on:
            from ..ledger.curator import ensure_key_file, registered

            if curator is None and registered(store) is None:
                curator, _ = ensure_key_file()
                registration = {"file": curator.source}
            if curator is not None:
                check(store, curator, now=now, actor=actor, what="turning review on")
        done = config.set_value(store, key, new, now=now, actor=actor)
        if registration is not None:
            done["curator_key"] = registration
        return done


def checkpoint_review(store: Store, key: str) -> str:
    """The review setting a checkpoint holds (what restoring it would bring back)."""
    from . import checkpoints

    target = checkpoints.restorable(store, key)
    meta = store.backend.snapshot_tables(target["id"]).get(config.META) or {}
    doc = meta.get(config.DOC) or {}
    return str(doc.get("review") or config.SETTINGS["review"][1])


def _review_on(store: Store) -> bool:
    """Whether review is on; with the settings table unreadable, as if it were (a restore
    that could turn review off still needs the curator)."""
    try:
        return config.is_on(store, "review")
    except StoreUnreadable:
        return True


@decision
def restore_checkpoint(
    store: Store, key: str, *, now: datetime, actor: str, curator: Curator | None = None
) -> Doc:
    """The ``restore_checkpoint`` operation: the automatic checkpoint taken first (which
    undoes the restore), or the proposal.

    Restoring a checkpoint taken while review was off, while it is on now, would turn
    review off and may bring back what a person rejected: the curator's restore is
    recorded in the queue as a decision; anyone else's waits as a proposal.
    """
    from ..ledger.isolation import check_operator
    from . import checkpoints

    with store.transaction():
        # A restore rewinds every agent's memory (and may bring isolation back off): an
        # isolated agent's is refused, as export is.
        check_operator(store, "checkpoint restore")
        # A restore is also the repair of damaged tables: the checkpoint may be found
        # among the snapshots on disk (the checkpoints table unreadable).
        target = checkpoints.restorable(store, key)
        past_review = _review_on(store) and checkpoint_review(store, target["id"]) == "off"
        args = {"checkpoint": target["id"], "created_at": target.get("created_at")}
        if past_review and not _curated(store, curator, now, actor):
            proposal = propose(store, "checkpoint", "restore", args, now=now, actor=actor)
        else:
            before = checkpoints.restore(store, target["id"], now=now, actor=actor)
            if past_review:
                result = f"restored checkpoint {target['id'][:8]} (review was off in it)"
                _record_decision(
                    store, "checkpoint", "restore", args, now=now, actor=actor, result=result
                )
            return before
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
    ("rule", "add"),
    ("config", "set"),
    ("checkpoint", "restore"),
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
    ("rule", "add"): "text",
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
        from ..domain import profiles

        plan = profiles.preview(store, args["project"], args["content"], limit=args.get("limit"))
        return plan["project"], {**args, "project": plan["project"], "content": plan["after"]}
    if kind == "rule":
        from ..models.plain import check_rule_scope

        text = one_line(scrub(args["text"]))
        if not text:
            raise InvalidInput("text", "must not be empty")
        try:
            check_rule_scope(args["scope"])
        except ValueError as exc:
            raise InvalidInput("scope", str(exc)) from None
        return args["scope"], {"text": text, "scope": args["scope"]}
    if kind == "config":
        config.check_key(args["key"])
        return args["key"], {"key": args["key"], "value": args["value"]}
    if kind == "checkpoint":
        return args["checkpoint"], dict(args)
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
    if proposal["kind"] == "rule":
        return f"add rule ({proposal['target']}): {clip(args.get('text', ''), 100)}"
    if proposal["kind"] == "config":
        return f"set {args.get('key')} {args.get('value')} (agents' writes would go live)"
    if proposal["kind"] == "checkpoint":
        when = str(args.get("created_at", ""))[:16].replace("T", " ")
        return (
            f"restore checkpoint {proposal['target'][:8]} of {when} "
            "(taken while review was off: restoring it turns review off)"
        )
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

    - a lesson: ``duplicate_of`` (the live lesson with the same text or a similar one,
      with ``similarity``; ``approve_reinforces``: whether approving reinforces it, as
      for the same text or a proposal that asked ``on_duplicate="reinforce"``, rather
      than keep both), ``contradicts`` (ids of live lessons it negates) and
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
    elif proposal["kind"] == "slot":
        out.update(_slot_preview(store, proposal))
    elif proposal["kind"] == "checkpoint":
        from . import checkpoints

        try:
            checkpoints.resolve(store, proposal["target"])
        except NotFound:
            out["stale"] = "the checkpoint was deleted"
            out["flags"] = [f"no longer applies: checkpoint {proposal['target'][:8]} is gone"]
    return out


def _lesson_flags(proposal: Doc, now: datetime, all_lessons: list[Doc]) -> Doc:
    args = proposal["args"]
    content, scope = args["content"], proposal["target"]
    flags: list[str] = []
    found: Doc = {
        "duplicate_of": None,
        "similarity": None,
        "approve_reinforces": False,
        "contradicts": [],
        "nearest": None,
    }
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
        found["approve_reinforces"] = bool(same) or args.get("on_duplicate") == "reinforce"
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
    from ..domain import profiles

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
        try:
            current: Doc | None = slots.get_slot(store, proposal["target"])
        except (InvalidInput, NotFound):
            current = None
        found: Doc = {"stale": str(exc), "flags": [f"no longer applies: {exc}"]}
        if current is not None:
            # What a reviewer starts a whole-slot edit from.
            found["before"] = current["content"]
            found["limit"] = current["limit"]
        return found
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


@decision
def approve(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
    edit: str | None = None,
    whole_slot: bool = False,
) -> Doc:
    """Make a proposal live, as proposed or with ``edit`` as its text (the lesson's
    content, a slot's new content, the appended text, the replacement, the rule).

    Only the curator decides (:mod:`core.ledger.curator`).

    ``whole_slot`` (a slot proposal, with ``edit``): ``edit`` is the slot's whole new
    content, written as a ``set``. That is the way out for an append or a replace
    that no longer applies (the text it replaces is gone): the reviewer writes what
    the slot should say.

    The write runs as ``actor`` (the reviewer) and is checked against the store as
    it is now: a refusal (a slot edit that no longer fits, say) leaves the proposal
    pending. Returns the decided proposal.
    """
    with store.transaction():
        check(store, curator, now=now, actor=actor)
        proposal = _pending(store, key)
        args = dict(proposal["args"])
        edited = edit is not None
        op = proposal["op"]
        if whole_slot:
            if proposal["kind"] != "slot":
                raise InvalidInput(
                    "whole_slot", "only a slot proposal can become a whole-slot edit"
                )
            if edit is None:
                raise InvalidInput("edit", "a whole-slot edit needs the slot's new text")
            op = "set"
            args = {"label": args["label"]}
        if edited:
            if not isinstance(edit, str) or not edit.strip():
                raise InvalidInput("edit", "must not be empty")
            field = EDITED_FIELD.get((proposal["kind"], op))
            if field is None:
                raise InvalidInput("edit", f"a {proposal['kind']} proposal has no text to edit")
            args[field] = edit
        if proposal["kind"] in ("rule", "config", "checkpoint"):
            result_id, result = _apply_guarded(store, proposal, args, now, actor)
        elif op == "edit":
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
            from ..domain import profiles

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
            written = _slot_write(store, op, args, now, actor)
            slot = written[0] if isinstance(written, tuple) else written
            result_id = slot["id"]
            result = f"{op} slot {slot['label']}"
            if op != proposal["op"]:
                result += f" (the whole slot, instead of the proposed {proposal['op']})"
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


def _apply_guarded(
    store: Store, proposal: Doc, args: Doc, now: datetime, actor: str
) -> tuple[str | None, str]:
    """Make an approved rule, setting or restore: (the record it wrote, what it did)."""
    kind = proposal["kind"]
    if kind == "rule":
        from ..domain import rules

        doc = rules.add_op(store, args["text"], now=now, actor=actor, scope=args["scope"])
        return doc["id"], f"{doc['outcome']} rule {doc['id']} ({doc['scope']})"
    if kind == "config":
        done = config.set_value(store, args["key"], args["value"], now=now, actor=actor)
        return config.DOC, f"{done['key']}: {done['previous']} -> {done['value']}"
    from . import checkpoints

    before = checkpoints.restore(store, args["checkpoint"], now=now, actor=actor)
    return args["checkpoint"], (
        f"restored checkpoint {args['checkpoint'][:8]} (undo: restore {before['id'][:8]})"
    )


def _record_decision(
    store: Store, kind: str, op: str, args: Doc, *, now: datetime, actor: str, result: str
) -> Doc:
    """Record a change the curator made directly that would get around review (turning
    it off, restoring past it) as a proposal decided at once: the queue keeps it."""
    proposal = propose(store, kind, op, args, now=now, actor=actor)
    decided = _decide(store, proposal, "approved", now, actor, result_id=None, result=result)
    _audit(store, actor, "approve", decided, now, f"decided by the curator: {result}")
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


@decision
def reject(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
    why: str = "",
) -> Doc:
    """Turn a proposal down (kept, with the reason); nothing else changes. Only the
    curator decides."""
    reason = one_line(scrub(why or ""))
    with store.transaction():
        check(store, curator, now=now, actor=actor)
        proposal = _pending(store, key)
        decided = _decide(store, proposal, "rejected", now, actor, why=reason)
        note = f": {reason}" if reason else ""
        _audit(store, actor, "reject", decided, now, f"reject {change_line(decided)}{note}")
    return decided


@decision
def merge(
    store: Store,
    key: str,
    lesson_key: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> Doc:
    """Reinforce an existing lesson with a proposed lesson instead of adding it (the
    proposed wording joins the lesson's other wordings). Only the curator decides."""
    with store.transaction():
        check(store, curator, now=now, actor=actor)
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
