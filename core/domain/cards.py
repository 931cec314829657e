"""Mistake cards: merged by key across episodes, ranked, never silently deleted."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import ids, lookup
from ..base.clock import iso
from ..base.errors import Conflict, InvalidInput, NotFound
from ..base.text import one_line
from ..ledger import audit, isolation, links
from ..models.card_text import cut_text
from ..models.plain import DEFAULT_LESSON
from ..privacy import scrub
from ..storage.store import Store
from . import readable
from .ranking import ranked_cards

TABLE = "mistake_cards"

Key = tuple[str, str, str, str]
#: The card fields cut at 300 characters.
CUT_FIELDS = ("evidence", "lesson")


def _take(target: dict[str, Any], source: dict[str, Any], field: str) -> None:
    """Copy ``field`` from ``source`` with its cut character (or the lack of one)."""
    target[field] = source.get(field, "")
    chars = {k: v for k, v in (target.get("cut_chars") or {}).items() if k != field}
    char = (source.get("cut_chars") or {}).get(field)
    if char:
        chars[field] = char
    target["cut_chars"] = chars


def normalise_input(card: dict[str, Any], *, task_id: str) -> dict[str, Any]:
    """Defaults, trimming, scrubbing and the 300-character caps of a reported card.

    A longer evidence or lesson is cut with an ellipsis; ``cut_chars`` keeps the
    character each ellipsis replaced (see :func:`plain_text`).
    """
    text = {k: scrub(str(card.get(k) or "")).strip() for k in ("bad_decision", "correct_decision")}
    lesson = card.get("lesson")
    evidence, evidence_char = cut_text(scrub(str(card.get("evidence") or "")).strip())
    lesson_text, lesson_char = cut_text(scrub(lesson).strip() if isinstance(lesson, str) else "")
    chars = {
        k: v for k, v in (("evidence", evidence_char), ("lesson", lesson_char)) if v is not None
    }
    return {
        # The type is a label the agent chose: agent text, scrubbed like the rest.
        "mistake_type": (scrub(str(card.get("mistake_type") or "")).strip() or "unknown_mistake"),
        "task_id": (str(card.get("task_id") or "").strip() or task_id),
        "worker_id": (str(card.get("worker_id") or "").strip() or None),
        "bad_decision": text["bad_decision"],
        "correct_decision": text["correct_decision"],
        "evidence": evidence,
        "lesson": lesson_text,
        "cut_chars": chars,
    }


def merge_key(card: dict[str, Any]) -> Key:
    """(mistake_type, task_id, worker_id or "", correct_decision or "")."""
    return (
        card["mistake_type"],
        card["task_id"],
        card.get("worker_id") or "",
        card.get("correct_decision") or "",
    )


def merge_into(
    existing: dict[str, Any], card: dict[str, Any], index: int, stamp: str
) -> dict[str, Any]:
    """A repeat: count it, move last_seen, take only the evidence and lesson it gives."""
    merged = dict(existing)
    merged["seen_count"] = int(existing["seen_count"]) + 1
    merged["last_seen_episode"] = max(int(existing["last_seen_episode"]), index)
    for field in CUT_FIELDS:
        if card.get(field):
            _take(merged, card, field)
    if card.get("bad_decision") and not existing.get("bad_decision"):
        merged["bad_decision"] = card["bad_decision"]
    merged["updated_at"] = stamp
    return merged


def new_card(card: dict[str, Any], index: int, stamp: str) -> dict[str, Any]:
    """A first sighting."""
    return {
        **card,
        "lesson": card.get("lesson") or DEFAULT_LESSON,
        "id": ids.new_id("card"),
        "seen_count": 1,
        "first_seen_episode": index,
        "last_seen_episode": index,
        "created_at": stamp,
        "updated_at": stamp,
    }


class _Keys(dict[Key, dict[str, Any]]):
    """Cards by merge key (a card's own key, then the keys of cards merged into it), and
    the table it was made from."""

    __slots__ = ("docs", "stamp")
    docs: dict[str, dict[str, Any]]
    stamp: tuple[int, int]


_KEYS = "cards.by_key"


def _keys(store: Store) -> _Keys:
    """The cards by merge key, made once and kept current by :func:`apply_cards` itself:
    rebuilding it for every episode that reports a card grew with the table. Made again
    when the table changed any other way (a curation merge, an edit, a reload)."""
    docs = store.docs(TABLE)
    held: _Keys | None = store.derived.get(_KEYS)
    if held is not None and held.docs is docs and held.stamp == store.table_stamp(TABLE):
        return held
    by_key = _Keys((merge_key(c), c) for c in docs.values())
    for c in docs.values():
        for key in c.get("merged_keys", []):
            by_key.setdefault(tuple(key), c)
    by_key.docs, by_key.stamp = docs, store.table_stamp(TABLE)
    store.derived[_KEYS] = by_key
    return by_key


def apply_cards(
    store: Store,
    reported: list[dict[str, Any]],
    *,
    index: int,
    now: datetime,
    episode_id: str | None = None,
) -> list[str]:
    """Merge an episode's normalised cards into the table; return the card ids touched.

    Each touched card gets a ``sighted_in`` link to ``episode_id`` (the reporting
    episode; each card keeps its newest 20)."""
    if not reported:
        return []
    stamp = iso(now)
    by_key = _keys(store)
    changed: dict[str, dict[str, Any]] = {}
    touched = []
    for card in reported:
        key = merge_key(card)
        existing = by_key.get(key)
        doc = merge_into(existing, card, index, stamp) if existing else new_card(card, index, stamp)
        by_key[key] = doc
        for other_key in doc.get("merged_keys", []):
            by_key[tuple(other_key)] = doc
        by_key[merge_key(doc)] = doc
        changed[doc["id"]] = doc
        touched.append(doc["id"])
    store.put_many(TABLE, changed)
    # What this call put is in it already: it stays current for the next episode.
    by_key.docs, by_key.stamp = store.docs(TABLE), store.table_stamp(TABLE)
    if episode_id:
        for card_id in dict.fromkeys(touched):
            links.note_episode(store, links.SIGHTED_IN, card_id, TABLE, episode_id, now)
    return touched


def _validated(card: dict[str, Any]) -> dict[str, Any]:
    # Curation only: recording merges cards without pydantic (see core.models.plain).
    from ..models.base import validate
    from ..models.card import MistakeCard

    return validate(MistakeCard, card).to_doc()


# -- reads and curation ------------------------------------------------------------------
def all_cards(store: Store) -> list[dict[str, Any]]:
    """Every card, ranked, with its links as ``episode_ids`` and ``merged_from`` (call
    inside ``store.reading()``)."""
    return with_links(store, ranked_cards(list(readable.docs(store, TABLE).values())))


def with_links(store: Store, cards: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``cards`` with ``episode_ids`` (the episodes that sighted each, oldest
    first, those this call may see) and ``merged_from`` (the cards merged into each), from
    their links."""
    kept = links.in_home(store, TABLE)
    sightings = links.by_from(x for x in kept if x["kind"] == links.SIGHTED_IN)
    into: dict[str, list[str]] = {}
    for link in sorted(kept, key=links.order):
        if link["kind"] == links.MERGED_INTO:
            into.setdefault(link["to"], []).append(link["from"])
    out = []
    for card in cards:
        absorbed: list[str] = []
        pending = list(into.get(card["id"], []))
        while pending:
            other = pending.pop(0)
            if other not in absorbed and other != card["id"]:
                absorbed.append(other)
                pending.extend(into.get(other, []))
        out.append(
            {
                **card,
                "episode_ids": isolation.visible_episodes(
                    store, [x["to"] for x in sightings.get(card["id"], [])]
                ),
                "merged_from": absorbed,
            }
        )
    return out


def top_cards(store: Store, n: int = 3) -> list[dict[str, Any]]:
    """The ``n`` best-ranked cards."""
    return all_cards(store)[:n]


def resolve(store: Store, key: str) -> dict[str, Any]:
    """A card by id or unique id prefix (a wrong-typed one is not found: it is in no answer)."""
    docs = readable.docs(store, TABLE)
    found = lookup.find(docs, key, "mistake card")
    if found is None:
        # A card merged away lives on in the card that absorbed it.
        target = links.merged_target(store, TABLE, key.strip())
        found = dict(docs[target]) if target in docs else None
    if found is None:
        raise NotFound("mistake card", key)
    return with_links(store, [found])[0]


def list_op(store: Store) -> list[dict[str, Any]]:
    """The ``list_cards`` operation: every card, ranked."""
    with store.reading():
        return all_cards(store)


def get_op(store: Store, key: str) -> dict[str, Any]:
    """The ``get_card`` operation: one card (a merged-away id finds its absorber)."""
    with store.reading():
        return resolve(store, key)


def cards_of(store: Store, card_ids: list[str]) -> list[dict[str, Any]]:
    """The cards behind ``card_ids`` (an episode's), each once, in order.

    A card merged away resolves to the card that absorbed it, which then carries
    ``merged_from_id`` (the id asked for); a card no longer in the store is left out.
    """
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    with store.reading():
        for card_id in card_ids:
            try:
                card = resolve(store, card_id)
            except NotFound:
                continue
            if card["id"] != card_id:
                card["merged_from_id"] = card_id
            if card["id"] not in seen:
                seen.add(card["id"])
                out.append(card)
    return out


def edit_card(
    store: Store,
    key: str,
    *,
    now: datetime,
    actor: str,
    lesson: str | None = None,
    evidence: str | None = None,
) -> dict[str, Any]:
    """Edit a card's lesson or evidence (each cut to 300 characters, with an ellipsis)."""
    with store.transaction():
        card = resolve(store, key)
        edits = {}
        if lesson is not None:
            text = scrub(lesson).strip()
            if not text:
                raise InvalidInput("lesson", "must not be empty")
            edits["lesson"] = text
        if evidence is not None:
            edits["evidence"] = scrub(evidence).strip()
        for field, text in edits.items():
            value, char = cut_text(text)
            _take(card, {field: value, "cut_chars": {field: char} if char else {}}, field)
        card["updated_at"] = iso(now)
        doc = _validated(links.stored(card))
        store.put(TABLE, doc["id"], doc)
        doc = with_links(store, [doc])[0]
        audit.record(
            store,
            actor=actor,
            action="edit",
            table=TABLE,
            record_id=doc["id"],
            summary=f"edit card [{doc['mistake_type']}]: {one_line(doc['lesson'])[:100]}",
            now=now,
        )
    return doc


def merge_cards(
    store: Store, keep: str, absorb: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Merge card ``absorb`` into ``keep``: counts add up, the episode range widens.

    The absorbed card is not deleted silently: a ``merged_into`` link keeps its id
    (``keep``'s ``merged_from`` lists it, and asking for it finds ``keep``), and the
    merge is in the audit log. Its other links become ``keep``'s: its sightings join
    ``keep``'s (the newest 20 kept), and what it linked to, ``keep`` links to. Links
    that point to it stay, and lead to ``keep`` through the ``merged_into`` link.
    """
    with store.transaction():
        target = resolve(store, keep)
        other = resolve(store, absorb)
        if target["id"] == other["id"]:
            raise Conflict("cannot merge a card into itself")
        target["seen_count"] = int(target["seen_count"]) + int(other["seen_count"])
        target["first_seen_episode"] = min(
            target["first_seen_episode"], other["first_seen_episode"]
        )
        target["last_seen_episode"] = max(target["last_seen_episode"], other["last_seen_episode"])
        if not target.get("evidence") and other.get("evidence"):
            _take(target, other, "evidence")
        target["merged_keys"] = [
            *target.get("merged_keys", []),
            list(merge_key(other)),
            *other.get("merged_keys", []),
        ]
        target["updated_at"] = iso(now)
        doc = _validated(links.stored(target))
        store.put(TABLE, doc["id"], doc)
        store.delete(TABLE, [other["id"]])
        moving = links.outgoing(store, TABLE, other["id"])
        links.repoint_from(store, [x for x in moving if x["kind"] != links.MERGED_INTO], doc["id"])
        sightings = links.outgoing(store, TABLE, doc["id"], links.SIGHTED_IN)
        links.delete(store, sightings[: max(0, len(sightings) - links.EPISODE_REFS)])
        links.put(store, links.make(links.MERGED_INTO, other["id"], doc["id"], TABLE, now))
        doc = with_links(store, [doc])[0]
        audit.record(
            store,
            actor=actor,
            action="merge",
            table=TABLE,
            record_id=doc["id"],
            summary=f"merged card {other['id']} into {doc['id']} (seen {doc['seen_count']}x)",
            now=now,
        )
    return doc
