"""Deleting lessons for good: ``lesson delete``.

``lesson forget`` hides a lesson and can be undone, and ``lesson edit`` keeps the old
text among the lesson's wordings: neither takes words out of the store. A lesson
that holds something no agent should remember (a name, a detail typed by hand, a
wording that came from a conversation) must be able to leave memory as an
observation can. In one transaction, for each lesson named:

- its record goes, with every wording it had;
- its words leave the lessons that kept them as wordings (a lesson merged into
  another leaves its text among the keeper's wordings; ``wordings_removed``);
- its links go. A lesson it had replaced (one it superseded, or one merged into it)
  would come back to life without them: that lesson is forgotten instead (hidden,
  restorable, its own words its own) and named in the answer
  (``superseded_forgotten``);
- the audit log keeps the fact of every entry about it (time, actor, action, id) and
  not the words: their summaries (added, edited, reinforced, put in a context)
  become ``[forgotten]``;
- a review proposal that wrote it or would edit it keeps its decision but not its
  text (``[forgotten]``, in its audit entries too); one still pending is rejected,
  since the lesson it would change is gone (``proposals_blanked``);
- search caches drop it as the commit lands, and a folder store's log is folded
  at once (its older records hold the words until then).

Store checkpoints keep their copies until they are deleted (``checkpoints_may_hold``
lists those taken since the oldest lesson was added), as for any forget.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..base.clock import iso
from ..base.errors import InvalidInput
from ..base.text import normalise
from ..ledger import audit, links
from ..storage.store import Store
from . import lessons as lesson_rules
from .forgetting import FORGOTTEN, checkpoints_since, forget_links, redact_audit

#: The review queue's table (core.services.review, which sits above the domain).
_PROPOSALS = "proposals"
#: Audit entries about these tables can quote a lesson's words.
_QUOTING = ("lessons", _PROPOSALS)


def forget_lessons(
    store: Store, lessons: list[str], *, now: datetime, actor: str
) -> dict[str, Any]:
    """Delete lessons (ids or unique id prefixes) for good, everywhere but in
    checkpoints; every one must exist or nothing is deleted. Returns what went."""
    wanted = [key for key in lessons if isinstance(key, str)]
    if not wanted:
        raise InvalidInput("lessons", "name at least one lesson")
    if not all(key.strip() for key in wanted):
        raise InvalidInput("lessons", "each must name a lesson (one is empty)")
    with store.transaction():
        found: dict[str, dict[str, Any]] = {}
        for key in wanted:
            _refuse_a_time_prefix(store, key.strip())
            lesson = lesson_rules.resolve(store, key)  # another agent's, while isolated: not found
            found[lesson["id"]] = lesson
        gone = set(found)
        replaced_by, _ = links.lesson_relations(store)
        revived = sorted(x for x, by in replaced_by.items() if by in gone and x not in gone)
        store.delete(lesson_rules.TABLE, sorted(gone))
        unworded = _remove_wordings(store, found.values(), now=now)
        link_count = forget_links(store, gone, set())
        _forget_replaced(store, revived, now=now, actor=actor)
        proposals = _blank_proposals(store, gone, now=now, actor=actor)
        redacted, _ = redact_audit(store, gone | proposals, tables=_QUOTING)
        for lesson_id in sorted(gone):
            audit.record(
                store,
                actor=actor,
                action="delete",
                table=lesson_rules.TABLE,
                record_id=lesson_id,
                summary=f"deleted lesson {lesson_id} for good",
                now=now,
            )
        added = min(str(x.get("created_at") or iso(now)) for x in found.values())
        holding = checkpoints_since(store, added)
        store.fold_log()  # the log's older records hold the words until it is folded
    return {
        "kind": "lesson",
        "ids": sorted(gone),
        "lessons": len(gone),
        "links": link_count,
        "audit_entries_blanked": redacted,
        "wordings_removed": unworded,
        "proposals_blanked": len(proposals),
        "superseded_forgotten": revived,
        "checkpoints_may_hold": holding,
    }


#: ``les_`` and the ten characters of an id that say when it was made.
_TIME_PREFIX = len("les_") + 10


def _refuse_a_time_prefix(store: Store, key: str) -> None:
    """Refuse a key that names a lesson only by the start of its id, when that start
    says no more than when the lesson was made (``les_01`` matches the one lesson of a
    store, and every lesson of a month): too little to delete one for good by. Whole
    ids and their last characters (the random part, like a short hash) are taken."""
    if len(key) >= _TIME_PREFIX:
        return
    docs = store.docs(lesson_rules.TABLE)
    if key in docs or any(lesson_id.endswith(key) for lesson_id in docs):
        return
    if any(lesson_id.startswith(key) for lesson_id in docs):
        raise InvalidInput(
            "lessons",
            f"{key!r} is only the start of an id, which says when a lesson was made: give the "
            "whole id, or its last characters, to delete one for good",
        )


def _remove_wordings(store: Store, gone: Iterable[dict[str, Any]], *, now: datetime) -> int:
    """Take the deleted lessons' texts (and their own wordings) out of the wordings the
    remaining lessons keep; returns how many wordings went."""
    words: set[str] = set()
    for lesson in gone:
        for text in (lesson.get("content"), *lesson.get("wordings", ())):
            if isinstance(text, str) and text:
                words.update((text, normalise(text)))
    removed = 0
    changed: dict[str, dict[str, Any]] = {}
    for lesson_id, doc in store.docs(lesson_rules.TABLE).items():
        kept = doc.get("wordings")
        if not isinstance(kept, list) or not kept:
            continue
        left = [
            w for w in kept if not (isinstance(w, str) and (w in words or normalise(w) in words))
        ]
        if len(left) != len(kept):
            removed += len(kept) - len(left)
            changed[lesson_id] = {**doc, "wordings": left, "updated_at": iso(now)}
    if changed:
        store.put_many(lesson_rules.TABLE, changed)
    return removed


def _forget_replaced(store: Store, lesson_ids: list[str], *, now: datetime, actor: str) -> None:
    """Forget (softly) the lessons a deleted one had replaced: with its links gone they
    would be live again, in the next context, unasked."""
    docs = store.docs(lesson_rules.TABLE)
    for lesson_id in lesson_ids:
        doc = docs.get(lesson_id)
        if doc is None or doc.get("deleted"):
            continue
        store.put(lesson_rules.TABLE, lesson_id, {**doc, "deleted": True})
        audit.record(
            store,
            actor=actor,
            action="forget",
            table=lesson_rules.TABLE,
            record_id=lesson_id,
            summary=f"forgot lesson {lesson_id}: the lesson that replaced it was deleted",
            now=now,
        )


def _blank_proposals(store: Store, gone: set[str], *, now: datetime, actor: str) -> set[str]:
    """Take the words out of the review proposals that wrote or would edit a lesson in
    ``gone`` (a pending one is rejected); returns their ids."""
    if not store.has_table(_PROPOSALS):
        return set()
    changed: dict[str, dict[str, Any]] = {}
    for proposal_id, doc in store.docs(_PROPOSALS).items():
        if doc.get("result_id") not in gone and doc.get("target") not in gone:
            continue
        args = doc.get("args")
        blank = {
            **doc,
            "args": {
                k: FORGOTTEN if isinstance(v, str) else v
                for k, v in (args.items() if isinstance(args, dict) else ())
            },
            "result": FORGOTTEN if doc.get("result") else "",
        }
        if doc.get("status") == "pending":
            blank.update(
                status="rejected",
                why="its lesson was deleted for good",
                decided_by=actor,
                decided_at=iso(now),
            )
        changed[proposal_id] = blank
    if changed:
        store.put_many(_PROPOSALS, changed)
    return set(changed)
