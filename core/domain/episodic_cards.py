"""The episodic library's own list of mistake cards, kept beside the cards table.

Described in docs/MEMORY.md, The context.

The episodic training-memory library holds at most 30 cards: each time a card it
has not seen comes in, it sorts its list (seen_count, then last_seen_episode, both
descending; a stable sort, so cards that tie keep their place) and drops everything
past the 30th. A dropped card that is reported again starts over at seen 1. memwork
keeps every card in its table (nothing is ever lost, and the default context ranks
them all), so ``--style episodic`` reads this window instead: the list that library
would hold after the same episodes, in its order, with its counts and texts. It is
one ``meta`` document, written only by episodes that report cards.

Curation (editing or merging cards in the workbench) changes the cards table, not
this window: the episodic layout stays what the library would print.
"""

from __future__ import annotations

from typing import Any

from ..models.plain import DEFAULT_LESSON
from ..storage.store import Store
from .ranking import library_card_order, ranked_cards

META = "meta"
#: Its document in ``meta`` (the context reads it by this name without importing this
#: module: the context path an agent runs every step loads only what it needs).
DOC = "episodic_cards"
#: Cards the episodic library keeps.
KEEP = 30
#: What a window entry keeps of a card.
FIELDS = (
    "id",
    "mistake_type",
    "task_id",
    "worker_id",
    "correct_decision",
    "evidence",
    "lesson",
    "cut_chars",
    "seen_count",
    "first_seen_episode",
    "last_seen_episode",
)


def _key(card: dict[str, Any]) -> tuple[str, str, str, str]:
    return (
        card["mistake_type"],
        card["task_id"],
        card.get("worker_id") or "",
        card.get("correct_decision") or "",
    )


def entry(card: dict[str, Any]) -> dict[str, Any]:
    """What the window keeps of a stored card (or of an imported library card)."""
    return {field: card.get(field) for field in FIELDS if field in card}


def read(store: Store) -> list[dict[str, Any]] | None:
    """The window, in the library's order; None in a store written before it was kept."""
    doc = store.docs(META).get(DOC)
    # Copies: the caller folds cards into them, and the stored ones must not change.
    return [dict(c) for c in doc["cards"]] if doc is not None else None


def current(store: Store) -> list[dict[str, Any]]:
    """The window, or (a store without one) the 30 best-ranked cards of the table: what
    the library would hold when every card was still within its 30."""
    held = read(store)
    if held is not None:
        return held
    return [entry(c) for c in ranked_cards(list(store.docs("mistake_cards").values()))[:KEEP]]


def write(store: Store, window: list[dict[str, Any]]) -> None:
    """Store the window (inside the caller's transaction)."""
    store.put(META, DOC, {"id": DOC, "cards": window})


def add(window: list[dict[str, Any]], card: dict[str, Any], index: int, card_id: str) -> None:
    """Fold one reported card (normalised, as the cards table takes it) of the episode
    ``index`` into ``window``, in place, as the library does (see the module)."""
    key = _key(card)
    for held in window:
        if _key(held) == key:
            held["seen_count"] = int(held["seen_count"]) + 1
            held["last_seen_episode"] = index
            chars = dict(held.get("cut_chars") or {})
            for field in ("evidence", "lesson"):
                if card.get(field):
                    held[field] = card[field]
                    chars.pop(field, None)
                    char = (card.get("cut_chars") or {}).get(field)
                    if char:
                        chars[field] = char
            held["cut_chars"] = chars
            return
    fresh = entry(card)
    fresh.update(
        id=card_id,
        lesson=card.get("lesson") or DEFAULT_LESSON,
        seen_count=1,
        first_seen_episode=index,
        last_seen_episode=index,
    )
    window.append(fresh)
    window.sort(key=library_card_order)
    del window[KEEP:]
