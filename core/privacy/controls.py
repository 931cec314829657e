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

from .lazy import lazy

__all__ = ["has_controls", "strip_controls"]

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
