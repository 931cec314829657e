"""The 300-character cap of a mistake card's evidence and lesson.

Kept apart from ``core.domain.cards`` (which validates and writes) so the context
export can render cards without importing pydantic.

A longer text is cut with an ellipsis, so a reader sees it was cut. The
episodic library cuts the same fields plainly at 300 characters, and
``--style episodic`` must match it exactly, so the card keeps, in
``cut_chars``, the character each ellipsis took the place of.
"""

from __future__ import annotations

from typing import Any

from ..base.text import ellipsize

#: Characters a card's evidence or lesson holds.
TEXT_CAP = 300


def cut_text(text: str) -> tuple[str, str | None]:
    """``text`` within the 300-character cap: cut with an ellipsis when longer, and the
    character the ellipsis took the place of (None when nothing was cut)."""
    if len(text) <= TEXT_CAP:
        return text, None
    return ellipsize(text, TEXT_CAP), text[TEXT_CAP - 1]


def plain_text(card: dict[str, Any], field: str) -> str:
    """A cut field as a plain cut at 300 would give it (the episodic library's way)."""
    text = str(card.get(field) or "")
    char = (card.get("cut_chars") or {}).get(field)
    return text[:-1] + char if char and text.endswith("…") else text
