"""Small text rules shared by several memory kinds."""

from __future__ import annotations

import re

_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Collapse whitespace and lower-case: the form fingerprints and matching use."""
    return _SPACES.sub(" ", text).strip().lower()


def fingerprint(text: str) -> str:
    """sha256 of the normalised text."""
    import hashlib  # OpenSSL's start-up costs several ms; the context path never needs it

    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def cut(text: str, limit: int) -> str:
    """At most ``limit`` characters (a plain cut, as the spec's formats expect)."""
    return text[:limit]


def ellipsize(text: str, limit: int) -> str:
    """At most ``limit`` characters; a cut text ends with "…" so a reader sees it was cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)] + "…"


def one_line(text: str) -> str:
    """Text on one line, for summaries and list views."""
    return _SPACES.sub(" ", text).strip()


def clip(text: str, width: int) -> str:
    """Text on one line, at most ``width`` characters; an ellipsis marks a cut."""
    flat = one_line(text)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def not_unicode(text: str) -> str | None:
    """Why ``text`` cannot be stored (no UTF-8 file holds it), or None when it can: it
    holds an unpaired surrogate, as JSON may spell one (``"\\ud800"``), or a byte that is
    not UTF-8, as Python reads one from a command line or the environment."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        what = (
            f"a byte that is not UTF-8 (0x{code - 0xDC00:02X})"
            if 0xDC80 <= code <= 0xDCFF
            else f"an unpaired surrogate (U+{code:04X})"
        )
        return f"must be Unicode text: it holds {what} at character {exc.start + 1:,}"
    return None
