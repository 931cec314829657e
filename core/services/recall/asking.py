"""Whether a note only asks: a question with no statement before it.

In a conversation the line that asks ("Hey Mel! How was the concert?", "Can you
recommend a restaurant in Rome?") shares the words of a later question about the same
thing, but the answer is in what was said back. A note whose every sentence asks (a
greeting or an exclamation may lead it) is ranked a little lower than the same words
stated (see ``engine.ASKING``), and the note after it takes half its words, not the
tenth a note takes of any note before it (``engine.ASKED_TURN``). A note that tells
something and then asks ("I just got a smoker. How do I clean it?") holds a fact and
is not an asking note.
"""

from __future__ import annotations

import re

#: Question marks, Latin and full width.
_ASKS = ("?", "？")
# What ends a statement before the last question mark: a full stop (Latin or
# ideographic) or a line break. An exclamation ("Hey Mel!") does not: it greets.
_STATEMENT_END = re.compile(r"[.。\n]")
# Full stops that end no sentence: a decimal point, an ellipsis, and the usual
# abbreviations.
_NOT_AN_END = re.compile(
    r"\d\.\d|\.{2,}|…|\b(?:e\.g|i\.e|etc|vs|Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof)\.", re.IGNORECASE
)


def only_asks(text: str) -> bool:
    """Whether ``text`` ends on a question and states nothing before it."""
    if "?" not in text and "？" not in text:  # most notes: one scan in C, no copy
        return False
    body = _without_trailing_signs(text)
    if not body.endswith(_ASKS):
        return False
    head = body[:-1]
    if _STATEMENT_END.search(head) is None:
        return True
    return _STATEMENT_END.search(_NOT_AN_END.sub(" ", head)) is None


def _without_trailing_signs(text: str) -> str:
    """``text`` without what a chat puts after its last sentence's mark: spaces, an
    emoji, a closing quote or bracket, an exclamation after a question ("?!")."""
    end = len(text)
    while end and not text[end - 1].isalnum() and text[end - 1] not in ".。?？":
        end -= 1
    return text[:end].strip()
