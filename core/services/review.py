"""The review queue: what agents want to remember waits for a person.

While the store setting ``review`` is on (``memwork config set review on``),
lesson adds and edits, card edits, slot set/append/replace, rule adds, profile sets,
action adds and action retitles or reprioritisations that come from an *agent* become
*proposals* instead of live records; an agent's import of such records is refused
(a person imports them with the curator key). Proposals never
reach the context; a person approves (optionally with their own text), rejects
(with a reason) or merges them (a proposed lesson reinforces an existing one
instead). Every proposal and every decision is audited; decided proposals are kept.

Who is a person is decided by the curator key (:mod:`core.ledger.curator`), never by a
name a process gives itself: a door passes the :class:`~core.ledger.curator.Curator`
it was given (the workbench's, or the CLI's ``--curator-key FILE``), and without
it a write is an agent's.

Which writes wait is said by the operations' declarations (``review=True`` in
:mod:`core.ops.operations`), and the operation runner (:mod:`core.ops.runner`) applies
it for every door: it asks :func:`needs_review`, and either runs the operation or
queues it here (:func:`propose_operation`: the operation's name and its checked
parameters, with what the queue shows of it), in one transaction, so the setting
cannot change between the decision and the write. Approving replays the operation
through the runner as the curator (:func:`approve` gets the runner's ``replay``).
Getting around review is itself a decision the queue records: turning review off
and restoring a checkpoint taken while it was off wait as proposals for an agent,
and are recorded as decided proposals when the curator does them
(:func:`record_decision`).

A proposal is checked when it is made, with the rules the live write applies
(an empty lesson, a bad scope, a slot edit past its limit, a read-only slot or
a ``replace`` whose text is absent are refused at once, exit 2), and checked
again when approved, against the store as it is then.

Proposals stored by older memwork hold only ``kind``, ``op`` and ``args``: they are
read as the operation they name (:func:`operation_of`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from rapidfuzz import fuzz, process

from ..base import ids, lookup
from ..base.clock import iso
from ..base.errors import Conflict, InvalidInput, NotFound, StoreUnreadable
from ..base.text import clip, fingerprint, normalise, one_line
from ..domain import cards, contradictions, lessons, slots
from ..domain.decay import is_live
from ..ledger import audit, config, links
from ..ledger.curator import Curator, check
from ..models.base import validate
from ..models.lesson import Lesson
from ..models.proposal import Proposal
from ..privacy import scrub
from ..storage.store import Store

TABLE = "proposals"
#: The tables whose records only reach an agent's context through review while it is on
#: (an import of any of them takes the curator key).
REVIEWED_TABLES = ("lessons", "rules", "mistake_cards", "slots", "profiles", "actions")
SLOT_OPS = ("set", "append", "replace")
STATUSES = ("pending", "approved", "rejected", "merged")

Doc = dict[str, Any]


class Replay(Protocol):
    """The runner's replay (:func:`core.ops.runner.replay`): run the operation
    ``operation`` with ``params`` as ``actor`` (the curator), as a direct call would."""

    def __call__(
        self,
        operation: str,
        store: Store,
        params: Mapping[str, Any],
        *,
        now: datetime,
        actor: str,
        curator: Curator | None,
    ) -> Any: ...


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


# -- for Python callers that write without the runner -----------------------------------
@dataclass
class Submitted:
    """What a submitted write did: proposed it (``proposal``) or wrote it (``result``)."""

    proposal: Doc | None = None
    result: Any = None

    @property
    def proposed(self) -> bool:
        """Whether the write waits for review."""
        return self.proposal is not None


def _submit(
    store: Store,
    operation: str,
    params: Doc,
    write: Callable[[], Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> Submitted:
    with store.transaction():
        if needs_review(store, curator, now=now, actor=actor):
            return Submitted(
                proposal=propose_operation(store, operation, params, now=now, actor=actor)
            )
        return Submitted(result=write())


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
    curator: Curator | None = None,
) -> Submitted:
    """``lessons.add_lesson``, or a proposal of it (the ``add_lesson`` operation) while
    review is on and the writer is not the curator."""
    kw: Doc = {"scope": scope, "confidence": confidence, "tags": tags, "on_duplicate": on_duplicate}
    return _submit(
        store,
        "add_lesson",
        {"text": content, **kw},
        lambda: lessons.add_lesson(store, content, now=now, actor=actor, **kw),
        now=now,
        actor=actor,
        curator=curator,
    )


_SLOT_OPERATIONS = {"set": "set_slot", "append": "append_slot", "replace": "replace_in_slot"}


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
    (old, new), or a proposal of it while review is on and the writer is not the
    curator."""
    if op not in SLOT_OPS:
        raise InvalidInput("op", f"must be one of {', '.join(SLOT_OPS)} (got {op!r})")
    operation = _SLOT_OPERATIONS[op]
    params = _params_of(operation, {"label": label, **args})

    def write() -> Any:
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

    return _submit(store, operation, params, write, now=now, actor=actor, curator=curator)


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
    """What the ``edit_lesson`` operation returns, for a caller without the runner: the
    edited lesson, or the proposal (``"proposed": True``) while review holds the edit."""
    params: Doc = {"lesson": key, "text": text, "scope": scope, "tags": tags}
    params["confidence"] = confidence
    with store.transaction():
        if changes_words(store, params) and needs_review(store, curator, now=now, actor=actor):
            return queued(
                store, propose_operation(store, "edit_lesson", params, now=now, actor=actor), now
            )
        return lessons.edit(
            store,
            key,
            now=now,
            actor=actor,
            content=text,
            scope=scope,
            tags=tags,
            confidence=confidence,
        )


# -- which calls review holds (the operations' ``review_when``) ------------------------
def changes_words(store: Store, params: Mapping[str, Any]) -> bool:
    """A lesson edit waits for review when it changes the words or the scope; tags and
    confidence alone go live (they change no words the context shows, as reinforcing or
    weakening a lesson goes live)."""
    return params.get("text") is not None or params.get("scope") is not None


def changes_action_words(store: Store, params: Mapping[str, Any]) -> bool:
    """An action update waits for review when it changes the title or the priority (what
    the context's work section shows, and in what order); a status, a note or a
    dependency goes live (an agent saying where its work stands)."""
    return params.get("title") is not None or params.get("priority") is not None


def turns_review_off(store: Store, params: Mapping[str, Any]) -> bool:
    """Turning review off while it is on: a decision (the curator's is recorded in the
    queue and takes effect; anyone else's waits as a proposal)."""
    value = params.get("value")
    wanted = value.strip().lower() if isinstance(value, str) else value
    return params.get("key") == "review" and wanted == "off" and config.is_on(store, "review")


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


def restores_past_review(store: Store, params: Mapping[str, Any]) -> bool:
    """Restoring a checkpoint taken while review was off, while it is on now: it would turn
    review off and may bring back what a person rejected (the curator's restore is
    recorded in the queue as a decision; anyone else's waits as a proposal). An isolated
    agent's restore is refused first, and a checkpoint that is not there."""
    from ..ledger.isolation import check_operator
    from . import checkpoints

    check_operator(store, "checkpoint restore")
    target = checkpoints.restorable(store, params["checkpoint"])
    return _review_on(store) and checkpoint_review(store, target["id"]) == "off"


# -- proposing ------------------------------------------------------------------------
def _kw(args: Doc) -> Doc:
    """The keyword arguments of ``lessons.add_lesson`` from a lesson proposal's args."""
    return {k: args.get(k) for k in ("scope", "confidence", "tags", "on_duplicate", "source")}


#: What the queue shows of the operations it knows: operation → (kind, op, {parameter:
#: the argument the proposal's ``args`` keep it under}). A proposal of any other
#: operation declared ``review=True`` is shown by its own parameters.
SHOWN: dict[str, tuple[str, str, dict[str, str]]] = {
    "add_lesson": (
        "lesson",
        "add",
        {
            "text": "content",
            "scope": "scope",
            "confidence": "confidence",
            "tags": "tags",
            "on_duplicate": "on_duplicate",
        },
    ),
    "edit_lesson": (
        "lesson",
        "edit",
        {
            "lesson": "lesson",
            "text": "content",
            "scope": "scope",
            "tags": "tags",
            "confidence": "confidence",
        },
    ),
    "edit_card": ("card", "edit", {"card": "card", "lesson": "lesson", "evidence": "evidence"}),
    "set_slot": (
        "slot",
        "set",
        {"label": "label", "text": "content", "limit": "limit", "description": "description"},
    ),
    "append_slot": ("slot", "append", {"label": "label", "text": "text"}),
    "replace_in_slot": ("slot", "replace", {"label": "label", "old": "old", "new": "new"}),
    "add_rule": ("rule", "add", {"text": "text", "scope": "scope"}),
    "set_config": ("config", "set", {"key": "key", "value": "value"}),
    "restore_checkpoint": ("checkpoint", "restore", {"checkpoint": "checkpoint"}),
    "set_profile": ("profile", "set", {"project": "project", "text": "content", "limit": "limit"}),
}
_BY_KIND = {(kind, op): name for name, (kind, op, _) in SHOWN.items()}

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


def _args_of(store: Store, operation: str, params: Doc) -> tuple[str, str, Doc]:
    """(kind, op, args): what the queue shows of a call of ``operation``."""
    kind, op, names = SHOWN[operation]
    args = {arg: params.get(name) for name, arg in names.items()}
    if operation == "add_lesson":
        args["tags"] = sorted(set(args.get("tags") or []))
        args["source"] = "agent"
    elif operation == "edit_lesson":
        args["lesson"] = lessons.resolve(store, params["lesson"])["id"]
        if args.get("confidence") is None:
            args.pop("confidence")
    elif operation == "edit_card":
        args["card"] = cards.resolve(store, params["card"])["id"]
    elif operation == "set_config":
        value = args.get("value")
        args["value"] = value.strip().lower() if isinstance(value, str) else value
    elif operation == "restore_checkpoint":
        from . import checkpoints

        target = checkpoints.restorable(store, params["checkpoint"])
        args = {"checkpoint": target["id"], "created_at": target.get("created_at")}
    return kind, op, args


def _params_of(operation: str, args: Mapping[str, Any]) -> Doc:
    """The parameters of ``operation`` that a proposal's ``args`` hold."""
    names = SHOWN[operation][2]
    return {name: args[arg] for name, arg in names.items() if arg in args}


def operation_of(proposal: Mapping[str, Any]) -> tuple[str, Doc]:
    """(the operation, its parameters) a proposal holds; for a proposal stored by older
    memwork (``kind``, ``op`` and ``args`` only), the operation they name."""
    if proposal.get("operation"):
        return str(proposal["operation"]), dict(proposal["args"])
    operation = _BY_KIND.get((proposal["kind"], proposal["op"]))
    if operation is None:
        raise InvalidInput("op", f"{proposal['kind']} {proposal['op']} cannot be proposed")
    return operation, _params_of(operation, proposal["args"])


@dataclass
class Shape:
    """What the queue keeps of a call of ``operation``: ``kind`` and ``op`` (which name the
    operation), ``target``, and ``args`` (its checked parameters, under the queue's
    names)."""

    operation: str
    kind: str
    op: str
    target: str
    args: Doc


def shape(store: Store, operation: str, params: Doc, now: datetime, words: str = "") -> Shape:
    """A call of ``operation`` checked as the live write would check it (else the live
    write's own error), its text scrubbed as the write would store it."""
    if operation not in SHOWN:
        return _shape_other(operation, params, words)
    kind, op, args = _args_of(store, operation, params)
    target, clean = _checked(kind, op, args, store, now)
    return Shape(operation, kind, op, target, clean)


def _shape_other(operation: str, params: Doc, words: str) -> Shape:
    """An operation the queue has no words of its own for (any other ``review=True``
    one): shown by its CLI words and its parameters, secrets removed."""
    kind, _, op = (words or operation).partition(" ")
    clean = {k: scrub(v) if isinstance(v, str) else v for k, v in params.items()}
    first = next((v for v in clean.values() if isinstance(v, str) and v), operation)
    return Shape(operation, kind, op or operation, str(first)[:200], clean)


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


def propose_operation(
    store: Store, operation: str, params: Doc, *, now: datetime, actor: str, words: str = ""
) -> Doc:
    """Queue a call of ``operation`` (checked as the live write would be: :func:`shape`)
    and audit it. ``words``: the operation's CLI words (how the queue names an operation
    it has no words of its own for)."""
    with store.transaction():
        return _store_proposal(store, shape(store, operation, params, now, words), now, actor)


def _store_proposal(store: Store, found: Shape, now: datetime, actor: str) -> Doc:
    stamp = iso(now)
    doc = validate(
        Proposal,
        {
            "id": ids.new_id("prop"),
            "kind": found.kind,
            "op": found.op,
            "target": found.target,
            "args": found.args,
            "operation": None if found.operation in SHOWN else found.operation,
            "proposed_by": actor,
            "created_at": stamp,
            "updated_at": stamp,
        },
    ).to_doc()
    store.put(TABLE, doc["id"], _kept(doc))
    _audit(store, actor, "propose", doc, now, change_line(doc))
    return _kept(doc)


def _kept(doc: Doc) -> Doc:
    """A proposal as stored: without ``operation`` when ``kind`` and ``op`` name it (as
    older memwork stores it, and reads it)."""
    return {k: v for k, v in doc.items() if k != "operation" or v is not None}


def queued(store: Store, proposal: Doc, now: datetime) -> Doc:
    """What a call that became a proposal returns: the proposal, ``"proposed": True``."""
    return {**get_proposal(store, proposal["id"], now), "proposed": True}


def record_decision(store: Store, found: Shape, result: Any, *, now: datetime, actor: str) -> Doc:
    """Record a change the curator made directly that would get around review (turning
    it off, restoring past it) as a proposal decided at once: the queue keeps it."""
    if found.operation == "set_config":
        line = "review: on -> off"
    elif found.operation == "restore_checkpoint":
        line = f"restored checkpoint {found.target[:8]} (review was off in it)"
    else:
        line = change_line(vars(found))
    proposal = _store_proposal(store, found, now, actor)
    decided = _decide(store, proposal, "approved", now, actor, result_id=None, result=line)
    _audit(store, actor, "approve", decided, now, f"decided by the curator: {line}")
    return decided


# -- reading --------------------------------------------------------------------------
def change_line(proposal: Doc) -> str:
    """What a proposal would change, in one line."""
    args = proposal["args"]
    if proposal.get("operation") and proposal["operation"] not in SHOWN:
        said = ", ".join(f"{k}={clip(str(v), 40)}" for k, v in args.items() if v is not None)
        return f"{proposal['kind']} {proposal['op']}: {clip(said, 100)}"
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
    if proposal["status"] != "pending" or (proposal.get("operation") or "add_lesson") not in SHOWN:
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
    store.put(TABLE, doc["id"], _kept(doc))
    return _kept(doc)


def approve(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
    edit: str | None = None,
    whole_slot: bool = False,
    replay: Replay | None = None,
) -> Doc:
    """Make a proposal live, as proposed or with ``edit`` as its text (the lesson's
    content, a slot's new content, the appended text, the replacement, the rule).

    Only the curator decides (:mod:`core.ledger.curator`).

    ``whole_slot`` (a slot proposal, with ``edit``): ``edit`` is the slot's whole new
    content, written as a ``set``. That is the way out for an append or a replace
    that no longer applies (the text it replaces is gone): the reviewer writes what
    the slot should say.

    The proposed operation is replayed through the operation runner (``replay``, which
    the runner gives its ``review approve``) as ``actor`` (the reviewer), checked
    against the store as it is now: a refusal (a slot edit that no longer fits, say)
    leaves the proposal pending. Returns the decided proposal.
    """
    with store.transaction():
        check(store, curator, now=now, actor=actor)
        proposal = _pending(store, key)
        if replay is None:
            raise InvalidInput("replay", "approving runs the operation through the runner")
        args = dict(proposal["args"])
        operation, params = operation_of(proposal)
        edited = edit is not None
        op = proposal["op"]
        if whole_slot:
            if proposal["kind"] != "slot":
                raise InvalidInput(
                    "whole_slot", "only a slot proposal can become a whole-slot edit"
                )
            if edit is None:
                raise InvalidInput("edit", "a whole-slot edit needs the slot's new text")
            op, operation = "set", "set_slot"
            args = {"label": args["label"]}
            params = {"label": args["label"]}
        if edited:
            if not isinstance(edit, str) or not edit.strip():
                raise InvalidInput("edit", "must not be empty")
            field = EDITED_FIELD.get((proposal["kind"], op)) if operation in SHOWN else None
            if field is None:
                raise InvalidInput("edit", f"a {proposal['kind']} proposal has no text to edit")
            args[field] = edit
            params = {**params, **_params_of(operation, {field: edit})}
        result = replay(operation, store, params, now=now, actor=actor, curator=curator)
        result_id, line = _outcome(proposal, operation, op, params, result)
        decided = _decide(
            store,
            proposal,
            "approved",
            now,
            actor,
            args=args,
            edited=edited,
            result_id=result_id,
            result=line,
        )
        by = f" (proposed by {proposal['proposed_by']}{', edited' if edited else ''})"
        _audit(store, actor, "approve", decided, now, f"approve: {line}{by}")
    return decided


def _outcome(
    proposal: Doc, operation: str, op: str, params: Doc, result: Any
) -> tuple[str | None, str]:
    """What an approved operation did: (the record it wrote, one line)."""
    doc: Doc = result if isinstance(result, dict) else {}
    if operation == "add_lesson":
        lesson_id, other = doc["id"], doc.get("duplicate_of")
        return lesson_id, {
            "created": f"created lesson {lesson_id}",
            "kept-both": f"created lesson {lesson_id} (kept beside {other})",
            "superseded": f"created lesson {lesson_id}, superseding {other}",
            "reinforced": f"reinforced lesson {lesson_id} (already known)",
        }[doc["action"]]
    if operation in ("edit_lesson", "edit_card"):
        return doc["id"], f"edited {proposal['kind']} {doc['id']}"
    if operation == "set_profile":
        return doc["id"], f"set profile {doc['project']}"
    if operation in ("set_slot", "append_slot", "replace_in_slot"):
        line = f"{op} slot {doc['label']}"
        if op != proposal["op"]:
            line += f" (the whole slot, instead of the proposed {proposal['op']})"
        return doc["id"], line
    if operation == "add_rule":
        return doc["id"], f"{doc['outcome']} rule {doc['id']} ({doc['scope']})"
    if operation == "set_config":
        return config.DOC, f"{doc['key']}: {doc['previous']} -> {doc['value']}"
    if operation == "restore_checkpoint":
        checkpoint = str(params["checkpoint"])
        return checkpoint, f"restored checkpoint {checkpoint[:8]} (undo: restore {doc['id'][:8]})"
    found = doc.get("id")
    return (found if isinstance(found, str) else None), f"{change_line(proposal)}"


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
