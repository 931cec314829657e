"""Seals: a short digest that says a text was found clean, so it need not be scrubbed again.

Scrubbing a hit's title on its way out costs ~10 µs for a short line, a fifth of a
search at 100k records. The recall index checks each record's title once, and keeps
beside the title the seal of what it found clean (0 when the title held something to
redact: that one is scrubbed every time it is shown). A catch-up checks the few titles
a write adds as they come in; a build (or an index far behind) leaves its titles
unchecked (negative), and the save checks them before it writes the file.

A seal is a 63-bit BLAKE2b digest of the title under a key drawn from the scrubber
itself: the bytes of every file of this package (its code and its rule set) and the
Python version. A seal made by another memwork, or before a rule changed, does not
match, and neither does one beside a title changed by hand in the index's file (a
person editing a cached file does not recompute a keyed digest): either way the title
is scrubbed when shown, as if it had no seal. Only titles the secrets rules find
nothing in are sealed (``personal=False``, as hits are shown).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from . import is_clean

#: The scrubber's key, and a digest already fed it: each seal copies the digest and
#: adds the text.
_KEY: bytes | None = None
_KEYED: Any = None


def _key_of(folder: Path) -> bytes:
    """A digest of the scrubber's files in ``folder`` (its code and its ``data``) and of
    the Python version: any change to a rule changes it."""
    from ..base.hashing import blake2b

    digest = blake2b(digest_size=32)
    digest.update(repr(sys.version_info[:2]).encode())
    files = sorted([*folder.glob("*.py"), *(folder / "data").glob("*")])
    read = 0
    for path in files:
        try:
            body = path.read_bytes()
        except OSError:
            continue
        read += 1
        digest.update(path.name.encode() + b"\0" + len(body).to_bytes(8, "big"))
        digest.update(body)
    if not read:  # no source to key on (an unusual install): seals last a process
        import os

        digest.update(os.urandom(16))
    return digest.digest()


def _key() -> bytes:
    """The scrubber's key, drawn from its own files on first use."""
    global _KEY
    if _KEY is None:
        _KEY = _key_of(Path(__file__).parent)
    return _KEY


def _keyed() -> Any:
    """The keyed digest seals start from."""
    global _KEYED
    if _KEYED is None:
        from ..base.hashing import blake2b

        _KEYED = blake2b(digest_size=8, key=_key())
    return _KEYED


def key_id() -> str:
    """A short name of this scrubber's key: an index records it beside its seals, and
    one read under another key has its titles checked again."""
    from ..base.hashing import blake2b

    return blake2b(_key(), digest_size=8).hexdigest()


def seal(text: str) -> int:
    """The seal of ``text`` (never 0), whether or not it is clean: see :func:`seal_if_clean`."""
    digest = (_KEYED or _keyed()).copy()
    digest.update(text.encode("utf-8", "surrogatepass"))
    return (int.from_bytes(digest.digest(), "big") >> 1) or 1


def seal_if_clean(text: str) -> int:
    """``text``'s seal if scrubbing it (secrets only) would leave it as it is, else 0.

    Nothing is counted as a redaction: this only looks."""
    return seal(text) if is_clean(text, personal=False) else 0


def sealed(text: str, found: int) -> bool:
    """Whether ``found`` is ``text``'s seal (so ``text`` was found clean by this scrubber)."""
    return found > 0 and seal(text) == found
