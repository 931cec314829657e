"""Which script a character belongs to, as recall and the workbench's search read it.

Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar are written without spaces
between words: their text is not cut into words by spaces
(:mod:`core.services.recall.words`), and a short term of theirs stands inside a
"word" of the workbench's search (:mod:`core.services.recall.search_index`). Kept
apart from the words module so the workbench's search index asks without loading the
stemmer.
"""

from __future__ import annotations

IDEOGRAPH = 2
SPACELESS_LETTER = 1

#: Scripts whose characters are words, or nearly, as (first, last) code points:
#: Hangul Jamo, kana, Hangul compatibility Jamo, kana extensions, Han (extension A,
#: the main block, compatibility), Hangul syllables, half-width katakana, Han
#: beyond the BMP.
_IDEOGRAPHS = (
    (0x1100, 0x11FF),
    (0x3040, 0x30FF),
    (0x3130, 0x318F),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7AF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3134F),
)
#: Scripts written without spaces whose single letters mean little: Thai, Lao,
#: Myanmar, Khmer.
_LETTERS_ONLY = ((0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))

#: Characters already placed (a language uses a few thousand).
_SCRIPTS: dict[str, int] = {}
_SCRIPTS_MAX = 200_000


def script(char: str) -> int:
    """:data:`IDEOGRAPH` for a Han, kana or Hangul character, :data:`SPACELESS_LETTER`
    for a letter of another spaceless script, else 0."""
    found = _SCRIPTS.get(char)
    if found is None:
        code = ord(char)
        found = 0
        if any(first <= code <= last for first, last in _IDEOGRAPHS):
            found = IDEOGRAPH
        elif any(first <= code <= last for first, last in _LETTERS_ONLY):
            found = SPACELESS_LETTER
        if len(_SCRIPTS) < _SCRIPTS_MAX:
            _SCRIPTS[char] = found
    return found


def scripts_of(token: str) -> list[int]:
    """:func:`script` of each character of ``token`` (the memo read in place: this
    runs for every character of every such text indexed)."""
    known = _SCRIPTS
    return [known[c] if c in known else script(c) for c in token]


def spaceless(text: str) -> bool:
    """Whether ``text`` holds a character of a script written without spaces."""
    return not text.isascii() and any(script(c) for c in text)


def ideograph(char: str) -> bool:
    """Whether ``char`` is a Han, kana or Hangul character (often a word alone)."""
    return script(char) == IDEOGRAPH
