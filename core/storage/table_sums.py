"""The checksum ``store.json`` keeps of every table file a fold writes.

A table file is JSON a person may read; a flipped bit in it can still parse (a digit
changed, a letter of a name), so its bytes are checked against the CRC-32 the fold
that wrote them recorded. A file that does not match is refused, never rewritten:
its documents are not what memwork committed, and nothing tells which ones changed.
Files written by an older memwork carry no checksum until their next fold.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from ..base.errors import StoreUnreadable

if TYPE_CHECKING:
    from ..base.filepaths import StrPath


def checksum(data: bytes) -> str:
    """The checksum of a table file's bytes, as ``store.json`` keeps it (8 hex digits)."""
    return f"{zlib.crc32(data):08x}"


def is_checksum(value: object) -> bool:
    """Whether ``value`` reads as a checksum :func:`checksum` made."""
    return (
        isinstance(value, str) and len(value) == 8 and all(c in "0123456789abcdef" for c in value)
    )


def verify(path: StrPath, data: bytes, expected: str | None) -> None:
    """Refuse (StoreUnreadable, exit 2 at the CLI) a table file whose bytes do not match
    the checksum ``store.json`` keeps for it (None: it keeps none)."""
    if expected is not None and checksum(data) != expected:
        raise StoreUnreadable(
            f"{path} does not match the checksum store.json keeps for it: its bytes changed "
            "on disk after memwork wrote them; it was left untouched (run `memwork doctor`)"
        )
