"""Control characters: removed from stored text and from what the CLI prints.

A terminal acts on control characters: ``ESC [2J`` clears the screen, an OSC
sequence sets the window title (or, in some terminals, writes the clipboard),
BEL rings, a bare carriage return lets a later line overwrite an earlier one.
Text from agents must never drive the terminal of the person reading it, so
whole escape sequences are removed (not only their ESC, which would leave
``[2J`` behind), then every other control character. Newlines and tabs stay,
and so does the carriage return of a CRLF line end.
"""

from __future__ import annotations

import re

from ..base.lazy_regex import lazy

__all__ = ["escape_json_output", "has_controls", "strip_controls", "terminal_text"]

# Any C0 control but TAB and LF, a CR not followed by LF, DEL, and the C1 range
# (U+0080-U+009F: U+009B alone starts a CSI sequence in some terminals).
_ANY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_SEQUENCES = lazy(
    r"\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC ... BEL / ST (or cut short)
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC ... ST
    r"|(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI: parameters, intermediates, final byte
    r"|\x1b[ -/]*[0-~]?"  # two-byte escapes such as ESC c (reset) or ESC 7
)


def has_controls(text: str) -> bool:
    """Whether ``text`` holds a character :func:`strip_controls` would remove."""
    return _ANY.search(text) is not None


def strip_controls(text: str) -> str:
    """``text`` without escape sequences and control characters (newline, tab and CRLF kept).

    Clean text is returned unchanged (the same object), after one regex search.
    """
    if _ANY.search(text) is None:
        return text
    return _ANY.sub("", _SEQUENCES.sub("", text))


# Characters that reorder what a terminal shows without being control characters: the
# bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
# marks (U+200E, U+200F, U+061C). "deploy\u202e.vne" shows as "deploy" + "env." reversed
# ("Trojan Source"); stored text may hold them (they are text), what memwork prints never
# drives the terminal with them.
_BIDI = lazy("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
# The same, and the C1 controls (U+0080-U+009F; U+009B alone starts a CSI sequence in some
# terminals), as UTF-8 bytes inside a JSON document.
_JSON_UNSAFE = rb"\xc2[\x80-\x9f]|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]|\xd8\x9c"


_SURROGATE = lazy("[\ud800-\udfff]")


def terminal_text(text: str) -> str:
    """``text`` as a terminal may show it: no control characters (:func:`strip_controls`),
    no bidirectional overrides. Clean text is returned unchanged."""
    text = strip_controls(text)
    if text.isascii():  # nearly every text; the pattern is then never compiled
        return text
    text = shown_unicode(text)
    return _BIDI.sub("", text) if _BIDI.search(text) else text


def shown_unicode(text: str) -> str:
    """``text`` with each character no UTF-8 output can hold shown as U+FFFD: a path
    named by bytes that are not UTF-8 reaches the output as such characters (the only
    text that does: every value from outside is checked for them)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _escaped(m: re.Match[bytes]) -> bytes:
    return f"\\u{ord(m[0].decode()):04x}".encode()


def escape_json_output(raw: bytes) -> bytes:
    """A JSON document with C1 controls and bidirectional overrides written as ``\\uXXXX``
    escapes: the same JSON values, and nothing a terminal acts on when it is printed.
    (They can only occur inside strings: JSON's own syntax is ASCII.)"""
    if raw.isascii():  # nearly every document; the pattern is then never compiled
        return raw
    unsafe = re.compile(_JSON_UNSAFE)
    return unsafe.sub(_escaped, raw) if unsafe.search(raw) else raw
