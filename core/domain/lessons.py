"""Lessons: reinforcement, decay, pinning, forgetting and near-duplicates.

Confidence never changes in the background. Effective confidence is computed
from timestamps with the caller's clock, so decay is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from rapidfuzz import fuzz, process

from ..base import ids, lookup
from ..base.clock import iso, parse_instant
from ..base.errors import Conflict, InvalidInput
from ..base.last_result import LastResult
from ..base.numbers import is_finite
from ..base.text import fingerprint, normalise, one_line
from ..ledger import audit, links
from ..models.base import validate
from ..models.lesson import DEFAULT_CONFIDENCE, Lesson
from ..privacy import scrub
from ..storage.store import Store
from . import contradictions, effect, readable, similar
from .decay import (
    decayed_away,
    effective_confidence,
    is_forgotten,
    is_live,
    reinforced_confidence,
    view,
)

TABLE = "lessons"
NEAR_DUPLICATE_AT = 90.0
WEAKEN_STEP = 0.1
#: The least confidence a restored lesson has: live, two weakening steps above the
#: forget threshold (0.1), and about four weeks of default decay before it fades
#: out again unless it is reinforced. A lesson stored higher keeps its confidence.
RESTORED_CONFIDENCE = 0.3

OnDuplicate = Literal["reinforce", "supersede", "keep-both"]
ON_DUPLICATE = ("reinforce", "supersede", "keep-both")


# -- reads ----------------------------------------------------------------------------
def all_lessons(store: Store) -> list[dict[str, Any]]:
    """Every lesson, oldest first, with ``superseded_by`` and ``supersedes`` as its links
    say (call inside ``store.reading()``)."""
    docs = sorted(readable.docs(store, TABLE).values(), key=lambda d: (d["created_at"], d["id"]))
    return links.with_lesson_relations(store, docs)


def list_lessons(store: Store, now: datetime, *, include_all: bool = False) -> list[dict[str, Any]]:
    """Lessons with computed fields (``effect`` among them); forgotten, deleted and
    superseded hidden unless asked."""
    with store.reading():
        lessons = all_lessons(store)
        views = [view(x, now) for x in lessons]
        if not include_all:
            views = [v for v in views if not v["forgotten"] and not v.get("superseded_by")]
        effects = effect.effects(store, views)
    views.sort(key=lambda v: (-v["effective_confidence"], v["created_at"], v["id"]))
    return [{**v, "effect": effects[v["id"]]} for v in views]


def resolve(store: Store, key: str) -> dict[str, Any]:
    """A lesson by id or unique id prefix, with the relations its links give."""
    found = lookup.resolve(readable.docs(store, TABLE), key, "lesson")
    return links.with_lesson_relations(store, [found])[0]


def related(store: Store, lesson: dict[str, Any]) -> dict[str, Any]:
    """``lesson`` (a stored document) with ``superseded_by`` and ``supersedes`` from its
    links (call inside a read or a transaction)."""
    return links.with_lesson_relations(store, [lesson])[0]


def get_lesson(store: Store, key: str, now: datetime) -> dict[str, Any]:
    """One lesson with computed fields: its ``effect`` (:mod:`core.domain.effect`) and the ids
    of the live lessons it ``contradicts`` now (:mod:`core.domain.contradictions`)."""
    with store.reading():
        lesson = resolve(store, key)
        others = [x for x in all_lessons(store) if x["id"] != lesson["id"]]
        found = contradictions.of_lesson(others, lesson["content"], lesson["scope"], now)
        return {
            **view(lesson, now),
            "effect": effect.effect_of(store, lesson),
            "contradicts": [x["id"] for x in found],
        }


def near_duplicate(
    lessons: list[dict[str, Any]], content: str, scope: str, now: datetime
) -> tuple[dict[str, Any], float] | None:
    """The live lesson of the same scope most similar to ``content`` (>= 90), if any.

    A lesson that says the opposite ("Never X" for "Always X", "Disable X" for
    "Enable X", "A after B" for "A before B") is never a near-duplicate, however
    similar its words: it contradicts it (:func:`core.domain.contradictions.texts_contradict`,
    the verdict ``lesson show`` and ``lint`` give too).
    """
    for lesson, score in _similar(lessons, content, scope, now):
        if not contradictions.texts_contradict(content, lesson["content"]):
            return lesson, score
    return None


def _similar(
    lessons: list[dict[str, Any]], content: str, scope: str, now: datetime
) -> list[tuple[dict[str, Any], float]]:
    """Live lessons of ``scope`` at least 90 similar to ``content``, most similar first."""
    candidates = [x for x in lessons if x["scope"] == scope and is_live(x, now)]
    if not candidates:
        return []
    found = process.extract(
        normalise(content),
        [normalise(x["content"]) for x in candidates],
        scorer=fuzz.token_set_ratio,
        score_cutoff=NEAR_DUPLICATE_AT,
        limit=None,
    )
    # Most similar first; among equals, the older lesson (as extractOne chose).
    found.sort(key=lambda hit: (-hit[1], hit[2]))
    return [(candidates[index], float(score)) for _, score, index in found]


# -- writes ---------------------------------------------------------------------------
@dataclass
class LessonWrite:
    """What saving a lesson did."""

    lesson: dict[str, Any]
    action: Literal["created", "reinforced", "superseded", "kept-both"]
    duplicate_of: str | None = None
    similarity: float | None = None
    exact: bool = False
    starts_forgotten: bool = False
    """Saved at or below the forget threshold: kept, but hidden until reinforced or
    restored (the writer is told)."""
    contradicts: list[str] = field(default_factory=list)
    """Ids of live lessons the saved one contradicts (the verdict ``lesson show`` gives)."""

    @property
    def near_duplicate_of(self) -> str | None:
        """The similar (not identical) live lesson found, whatever was done about it."""
        return None if self.exact else self.duplicate_of


def write_record(result: LessonWrite, now: datetime) -> dict[str, Any]:
    """What ``lesson add --json`` prints (and the Python API and MCP return) for a save."""
    return {
        **view(result.lesson, now),
        "action": result.action,
        "duplicate_of": result.duplicate_of,
        "near_duplicate_of": result.near_duplicate_of,
        "similarity": None if result.similarity is None else round(result.similarity, 1),
        "exact": result.exact,
        "starts_forgotten": result.starts_forgotten,
        "contradicts": result.contradicts,
    }


def add_op(
    store: Store,
    text: str,
    *,
    now: datetime,
    actor: str,
    scope: str = "global",
    confidence: float | None = None,
    tags: list[str] | None = None,
    on_duplicate: str = "keep-both",
    decay_rate: float | None = None,
    source: str = "agent",
) -> dict[str, Any]:
    """The ``add_lesson`` operation: the saved lesson, with what the save did
    (:func:`write_record`)."""
    written = add_lesson(
        store,
        text,
        now=now,
        actor=actor,
        scope=scope,
        confidence=confidence,
        tags=tags,
        source=source,
        on_duplicate=on_duplicate,
        decay_rate=decay_rate,
    )
    return write_record(written, now)


def _save(store: Store, lesson: dict[str, Any], now: datetime) -> dict[str, Any]:
    lesson = links.stored(lesson)  # relations are links, never fields of the record
    lesson["updated_at"] = iso(now)
    doc = validate(Lesson, lesson).to_doc()
    store.put(TABLE, doc["id"], doc)
    return doc


def _distinct_wordings(content: str, wordings: list[str]) -> list[str]:
    """Each wording once (as its fingerprint sees it), and never the lesson's own text:
    a merge of lessons that share history used to list the same wording twice."""
    seen = {fingerprint(content)}
    out = []
    for wording in wordings:
        key = fingerprint(wording)
        if key not in seen:
            seen.add(key)
            out.append(wording)
    return out


def restarted_clock(lesson: dict[str, Any], now: datetime) -> str:
    """``last_reinforced_at`` restarted at ``now``, never moved back.

    A writer whose clock is behind the one that last reinforced the lesson would
    otherwise date the reinforcement in the past, and the lesson would look weeks
    older than it is (less confident) right after being strengthened.
    """
    stamp = lesson.get("last_reinforced_at")
    if stamp and parse_instant(stamp) > now:
        return str(stamp)
    return iso(now)


def _reinforce(lesson: dict[str, Any], now: datetime) -> dict[str, Any]:
    lesson = dict(lesson)
    lesson["confidence"] = reinforced_confidence(float(lesson["confidence"]))
    lesson["reinforcements"] = int(lesson["reinforcements"]) + 1
    lesson["last_reinforced_at"] = restarted_clock(lesson, now)
    lesson["deleted"] = False
    return lesson


def add_lesson(
    store: Store,
    content: str,
    *,
    now: datetime,
    actor: str,
    scope: str = "global",
    confidence: float | None = None,
    tags: list[str] | None = None,
    source: str = "agent",
    on_duplicate: str = "keep-both",
    decay_rate: float | None = None,
) -> LessonWrite:
    """Save a lesson: re-adding the same words reinforces; a near-duplicate follows
    ``on_duplicate`` (by default it is kept as a lesson of its own: similar words may
    be new advice, which is never folded silently into old)."""
    fresh = new_lesson(
        content,
        now=now,
        scope=scope,
        confidence=confidence,
        tags=tags,
        source=source,
        on_duplicate=on_duplicate,
        decay_rate=decay_rate,
    )
    text = fresh["content"]
    with store.transaction():
        return _add(store, fresh, text, scope, tags, on_duplicate, now, actor)


def new_lesson(
    content: str,
    *,
    now: datetime,
    scope: str = "global",
    confidence: float | None = None,
    tags: list[str] | None = None,
    source: str = "agent",
    on_duplicate: str = "keep-both",
    decay_rate: float | None = None,
) -> dict[str, Any]:
    """The record :func:`add_lesson` would create, checked (``InvalidInput`` naming the
    field and the rule) but not stored; the review queue checks proposals with it."""
    if on_duplicate not in ON_DUPLICATE:
        raise InvalidInput("on_duplicate", f"must be one of {', '.join(ON_DUPLICATE)}")
    text = scrub(content).strip() if isinstance(content, str) else ""
    if not text:
        raise InvalidInput("content", "must not be empty")
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise InvalidInput("confidence", f"must be between 0.0 and 1.0 (got {confidence})")
    check_decay_rate(decay_rate)
    tags = _clean_tags(tags)
    stamp = iso(now)
    fresh = {
        "id": ids.new_id("les"),
        "content": text,
        "fingerprint": fingerprint(text),
        "confidence": DEFAULT_CONFIDENCE if confidence is None else confidence,
        "reinforcements": 0,
        "scope": scope,
        "tags": sorted(set(tags or [])),
        "source": source,
        "last_reinforced_at": stamp,
        "created_at": stamp,
        "updated_at": stamp,
    }
    if decay_rate is not None:
        fresh["decay_rate"] = float(decay_rate)
    validate(Lesson, fresh)  # scope, confidence, lengths: fail before touching the store
    return fresh


def check_decay_rate(value: Any) -> None:
    """``InvalidInput`` unless ``value`` is None or a rate a lesson can decay at: the
    confidence it loses per whole week, 0.0 (never decays) to 1.0."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not is_finite(value):
        raise InvalidInput("decay_rate", f"must be a number (got {value!r})")
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(
            "decay_rate",
            f"must be between 0.0 and 1.0, the confidence lost per week (got {value})",
        )


def _add(
    store: Store,
    fresh: dict[str, Any],
    text: str,
    scope: str,
    tags: list[str] | None,
    on_duplicate: str,
    now: datetime,
    actor: str,
) -> LessonWrite:
    """The write half of :func:`add_lesson` (inside its transaction)."""
    fresh["effect_base"] = effect.base_for(store, scope)
    lessons = all_lessons(store)
    exact = [x for x in lessons if x["fingerprint"] == fresh["fingerprint"] and x["scope"] == scope]
    exact = [x for x in exact if not x.get("superseded_by")] or exact
    if exact:
        # A superseded lesson lives on in its successor: reinforcing the hidden
        # old record would change nothing the agent sees.
        target, docs, seen = exact[0], {x["id"]: x for x in lessons}, set()
        while target.get("superseded_by") in docs and target["id"] not in seen:
            seen.add(target["id"])
            target = dict(docs[target["superseded_by"]])
        saved = _save(store, _with_rate(_reinforce(target, now), fresh), now)
        _audit(store, actor, "reinforce", saved, now)
        return LessonWrite(
            related(store, saved),
            "reinforced",
            duplicate_of=saved["id"],
            similarity=100.0,
            exact=True,
            contradicts=_contradicted(lessons, saved, now),
        )
    match = near_duplicate(lessons, text, scope, now)
    opposite = [x["id"] for x in contradictions.of_lesson(lessons, text, scope, now)]
    if match is not None and on_duplicate == "reinforce":
        existing, similarity = match
        updated = _with_rate(_reinforce(existing, now), fresh)
        updated["wordings"] = [*existing.get("wordings", []), text]
        if tags:
            updated["tags"] = sorted(set(existing.get("tags", [])) | set(tags))
        saved = _save(store, updated, now)
        _audit(store, actor, "reinforce", saved, now, note="near-duplicate")
        return LessonWrite(
            related(store, saved),
            "reinforced",
            duplicate_of=saved["id"],
            similarity=similarity,
            contradicts=opposite,
        )
    if match is not None and on_duplicate == "supersede":
        existing, similarity = match
        fresh["confidence"] = existing["confidence"]
        fresh["reinforcements"] = existing["reinforcements"]
        fresh["pinned"] = existing.get("pinned", False)
        # The new wording decays as the old one did, unless the writer gave a rate.
        if "decay_rate" in existing:
            fresh.setdefault("decay_rate", existing["decay_rate"])
        fresh["wordings"] = [*existing.get("wordings", []), existing["content"]]
        saved = _save(store, fresh, now)
        links.put(store, links.make(links.SUPERSEDES, saved["id"], existing["id"], TABLE, now))
        _audit(store, actor, "supersede", saved, now, note=f"supersedes {existing['id']}")
        return LessonWrite(
            related(store, saved),
            "superseded",
            duplicate_of=existing["id"],
            similarity=similarity,
            contradicts=opposite,
        )
    saved = related(store, _save(store, fresh, now))
    starts_forgotten = is_forgotten(saved, now)
    notes = ["starts forgotten"] if starts_forgotten else []
    if opposite:
        notes.append(f"says the opposite of {', '.join(opposite)}")
    _audit(store, actor, "add", saved, now, note="; ".join(notes))
    if match is not None:
        return LessonWrite(
            saved,
            "kept-both",
            duplicate_of=match[0]["id"],
            similarity=match[1],
            starts_forgotten=starts_forgotten,
            contradicts=opposite,
        )
    return LessonWrite(saved, "created", starts_forgotten=starts_forgotten, contradicts=opposite)


def _with_rate(lesson: dict[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
    """A reinforced lesson takes the decay rate its writer gave (none given: it keeps its own)."""
    if "decay_rate" in fresh:
        lesson["decay_rate"] = fresh["decay_rate"]
    return lesson


def _contradicted(
    lessons: list[dict[str, Any]], lesson: dict[str, Any], now: datetime
) -> list[str]:
    """Ids of the live lessons ``lesson`` contradicts (as ``lesson show`` lists them)."""
    others = [x for x in lessons if x["id"] != lesson["id"]]
    found = contradictions.of_lesson(others, lesson["content"], lesson["scope"], now)
    return [x["id"] for x in found]


def _clean_tags(tags: list[str] | None) -> list[str]:
    """Tags are agent text: scrubbed, blanks dropped, sorted and unique."""
    return sorted({t for t in (scrub(str(tag)).strip() for tag in tags or []) if t})


def _audit(
    store: Store, actor: str, action: str, lesson: dict[str, Any], now: datetime, note: str = ""
) -> None:
    summary = f"{action} lesson: {one_line(lesson['content'])[:120]}"
    if note:
        summary += f" ({note})"
    audit.record(
        store,
        actor=actor,
        action=action,
        table=TABLE,
        record_id=lesson["id"],
        summary=summary,
        now=now,
    )


def _change(
    store: Store,
    key: str,
    action: str,
    now: datetime,
    actor: str,
    fn: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    with store.transaction():
        lesson = resolve(store, key)
        saved = related(store, _save(store, fn(dict(lesson)), now))
        _audit(store, actor, action, saved, now)
    return view(saved, now)


def reinforce(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Reinforce by hand (as if the lesson had been learned again)."""
    return _change(store, key, "reinforce", now, actor, lambda x: _reinforce(x, now))


def reinforce_with(
    store: Store,
    key: str,
    wording: str,
    *,
    now: datetime,
    actor: str,
    tags: list[str] | None = None,
    note: str = "",
) -> dict[str, Any]:
    """Reinforce a lesson with another wording of it (kept in its ``wordings``, as a
    near-duplicate add does); ``note`` goes into the audit summary."""
    text = scrub(wording).strip() if isinstance(wording, str) else ""

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        x = _reinforce(x, now)
        if text and normalise(text) != normalise(x["content"]):
            x["wordings"] = [*x.get("wordings", []), text]
        if tags:
            x["tags"] = sorted(set(x.get("tags", [])) | set(tags))
        return x

    with store.transaction():
        lesson = resolve(store, key)
        saved = related(store, _save(store, apply(dict(lesson)), now))
        _audit(store, actor, "reinforce", saved, now, note=note)
    return view(saved, now)


def weaken(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Lower confidence by 0.1 (not below 0)."""

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        x["confidence"] = max(0.0, round(float(x["confidence"]) - WEAKEN_STEP, 10))
        return x

    return _change(store, key, "weaken", now, actor, apply)


def set_pinned(
    store: Store, key: str, pinned: bool, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Pin (no decay) or unpin. Unpinning restarts decay from now, not from the past."""

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        if x.get("pinned") and not pinned:
            x["last_reinforced_at"] = restarted_clock(x, now)
        x["pinned"] = pinned
        return x

    return _change(store, key, "pin" if pinned else "unpin", now, actor, apply)


def pin(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Pin a lesson: it stops decaying."""
    return set_pinned(store, key, True, now=now, actor=actor)


def unpin(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Unpin a lesson: it decays again."""
    return set_pinned(store, key, False, now=now, actor=actor)


def forget(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Soft-delete: hidden from lists and the context, restorable."""

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        if x.get("deleted"):
            raise Conflict(f"lesson {x['id']} is already forgotten")
        x["deleted"] = True
        return x

    return _change(store, key, "forget", now, actor, apply)


def restore(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Make a forgotten lesson live again: undelete it, restart its decay clock from
    ``now`` and lift its stored confidence to at least :data:`RESTORED_CONFIDENCE`.

    The lift matters for a lesson stored at or below the forget threshold (added at
    0.1, or weakened down): restarting its clock alone would leave it forgotten.
    A higher stored confidence is kept as it was. The returned view carries
    ``restored_from``, the confidence stored before the restore.
    """
    before: dict[str, float] = {}

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        if not is_forgotten(x, now):
            raise Conflict(f"lesson {x['id']} is not forgotten")
        before["confidence"] = float(x["confidence"])
        x["deleted"] = False
        x["last_reinforced_at"] = restarted_clock(x, now)
        x["confidence"] = max(float(x["confidence"]), RESTORED_CONFIDENCE)
        return x

    restored = _change(store, key, "restore", now, actor, apply)
    return {**restored, "restored_from": before["confidence"]}


def unforget(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Undo :func:`forget`: the lesson is live again exactly as it was before (its
    confidence and its decay clock untouched), unlike :func:`restore`, which brings a
    forgotten lesson back as if reinforced now. Only a lesson forgotten by hand can be
    unforgotten; one that has also decayed away since stays forgotten (restore it)."""

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        if not x.get("deleted"):
            raise Conflict(f"lesson {x['id']} was not forgotten by hand (restore brings it back)")
        x["deleted"] = False
        return x

    return _change(store, key, "unforget", now, actor, apply)


def edit(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    content: str | None = None,
    scope: str | None = None,
    tags: list[str] | None = None,
    confidence: float | None = None,
    decay_rate: float | None = None,
) -> dict[str, Any]:
    """Change a lesson's text, scope, tags, confidence or decay rate (the old text is
    kept)."""
    check_decay_rate(decay_rate)

    def apply(x: dict[str, Any]) -> dict[str, Any]:
        if content is not None:
            text = scrub(content).strip()
            if not text:
                raise InvalidInput("content", "must not be empty")
            if text != x["content"]:
                x["wordings"] = [*x.get("wordings", []), x["content"]]
                x["content"] = text
                x["fingerprint"] = fingerprint(text)
        if scope is not None:
            x["scope"] = scope
        if tags is not None:
            x["tags"] = _clean_tags(tags)
        if confidence is not None:
            x["confidence"] = confidence
        if decay_rate is not None:
            x["decay_rate"] = float(decay_rate)
        return x

    return _change(store, key, "edit", now, actor, apply)


# -- curation helpers for the workbench -------------------------------------------------
def decay_preview(lessons: list[dict[str, Any]], now: datetime, weeks: int) -> list[dict[str, Any]]:
    """How each live lesson looks ``weeks`` from now: which fade and which are forgotten."""
    later = now + timedelta(weeks=weeks)
    out = []
    for lesson in lessons:
        if not is_live(lesson, now):
            continue
        current = effective_confidence(lesson, now)
        future = effective_confidence(lesson, later)
        out.append(
            {
                "id": lesson["id"],
                "content": lesson["content"],
                "now": round(current, 4),
                "then": round(future, 4),
                "fades": future < current,
                "forgotten_then": decayed_away(lesson, later),
            }
        )
    return out


def near_duplicate_clusters(
    lessons: list[dict[str, Any]], now: datetime
) -> list[list[dict[str, Any]]]:
    """Groups of live lessons of one scope that are >= 90 similar (largest first).

    A lesson and its negation are never linked, however similar their words.
    """
    live = [x for x in lessons if is_live(x, now)]
    parent = list(range(len(live)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    asked = tuple((x["scope"], x["content"]) for x in live)  # what the links depend on
    for a, b in _LINKED.get(asked, lambda: _near_duplicate_links(live)):
        parent[find(a)] = find(b)
    groups: dict[int, list[dict[str, Any]]] = {}
    for i, lesson in enumerate(live):
        groups.setdefault(find(i), []).append(lesson)
    clusters = [
        sorted(g, key=lambda x: (-effective_confidence(x, now), x["created_at"], x["id"]))
        for g in groups.values()
        if len(g) > 1
    ]
    return sorted(clusters, key=lambda g: (-len(g), g[0]["id"]))


_LINKED = LastResult()


def _near_duplicate_links(live: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """(i, j) for every two of ``live`` of one scope that are near-duplicates and do not
    contradict each other."""
    by_scope: dict[str, list[int]] = {}
    for i, lesson in enumerate(live):
        by_scope.setdefault(lesson["scope"], []).append(i)
    contradict = contradictions.contradicting(live)
    links = []
    for members in by_scope.values():
        texts = [normalise(live[i]["content"]) for i in members]
        for a, b in similar.near_pairs(texts, NEAR_DUPLICATE_AT):
            if not contradict(members[a], members[b]):
                links.append((members[a], members[b]))
    return links


def merge_lessons(
    store: Store, keep: str, absorb: list[str], *, now: datetime, actor: str
) -> dict[str, Any]:
    """Merge near-duplicates into ``keep``: the others are superseded by it (each gets a
    ``merged_into`` link to it, so asking for one still finds the lesson it lives on in),
    their wordings join its history, and it keeps the highest confidence of the group."""
    with store.transaction():
        keeper = resolve(store, keep)
        others = [resolve(store, key) for key in absorb]
        if any(o["id"] == keeper["id"] for o in others):
            raise Conflict("cannot merge a lesson into itself")
        if any(o["scope"] != keeper["scope"] for o in others):
            raise Conflict("only lessons of the same scope can be merged")
        keeper["confidence"] = max(float(x["confidence"]) for x in [keeper, *others])
        keeper["reinforcements"] = sum(int(x["reinforcements"]) for x in [keeper, *others])
        keeper["wordings"] = _distinct_wordings(
            keeper["content"],
            [
                *keeper.get("wordings", []),
                *(w for o in others for w in [o["content"], *o.get("wordings", [])]),
            ],
        )
        keeper["tags"] = sorted({t for x in [keeper, *others] for t in x.get("tags", [])})
        saved = _save(store, keeper, now)
        for other in others:
            links.put(store, links.make(links.MERGED_INTO, other["id"], saved["id"], TABLE, now))
        _audit(store, actor, "merge", saved, now, note=f"absorbed {len(others)} near-duplicates")
        saved = related(store, saved)
    return view(saved, now)
