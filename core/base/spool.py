"""A list of byte strings that moves to a temporary file once it grows: what a bulk
command holds between reading its input and writing its output.

``memwork record-episode FILE`` validates every item before it touches the store and
prints every recorded episode after the commit; a million of them as Python objects
would be gigabytes, and even as compact JSON hundreds of megabytes. A :class:`Spool`
keeps items in memory up to :data:`MEMORY_BYTES`, then writes them all to an unnamed
temporary file (private, removed when closed or when the process dies) and reads them
back in order, one at a time.
"""

from __future__ import annotations

import os
import struct
from array import array
from collections.abc import Iterator
from typing import IO

from .numbers import is_whole_number

#: Bytes a spool holds in memory before it moves to a file (``MEMWORK_SPOOL_BYTES``).
MEMORY_BYTES = 32 * 1024 * 1024
_LENGTH = struct.Struct("<I")
_CHUNK = 1 << 20


def memory_bytes() -> int:
    """The in-memory limit (``MEMWORK_SPOOL_BYTES`` lets tests make it small)."""
    raw = os.environ.get("MEMWORK_SPOOL_BYTES")
    return int(raw) if raw and is_whole_number(raw) else MEMORY_BYTES


class Spool:
    """Byte strings in order: in memory while small, then in a temporary file."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = memory_bytes() if limit is None else limit
        # In memory, items sit end to end in one buffer: a bytes object per item would
        # cost its header, and orjson's output keeps the room it grew into (kilobytes).
        self._buffer = bytearray()
        self._ends = array("Q")
        self._count = 0
        self._file: IO[bytes] | None = None

    def __len__(self) -> int:
        return self._count

    @property
    def on_disk(self) -> bool:
        """Whether the items moved to a file."""
        return self._file is not None

    def append(self, item: bytes) -> None:
        """Add one item at the end."""
        self._count += 1
        if self._file is not None:
            self._file.write(_LENGTH.pack(len(item)) + item)
            return
        self._buffer += item
        self._ends.append(len(self._buffer))
        if len(self._buffer) > self._limit:
            import tempfile  # only a batch past its memory bound spools (tempfile costs ~3 ms)

            self._file = tempfile.TemporaryFile(prefix="memwork-spool-")
            for kept in self._in_memory():
                self._file.write(_LENGTH.pack(len(kept)) + kept)
            self._buffer = bytearray()
            self._ends = array("Q")

    def _in_memory(self) -> Iterator[bytes]:
        start = 0
        for end in self._ends:
            yield bytes(self._buffer[start:end])
            start = end

    def __iter__(self) -> Iterator[bytes]:
        if self._file is None:
            yield from self._in_memory()
            return
        self._file.flush()
        # pread at offsets of its own: reading never moves where the next append goes.
        fd = self._file.fileno()
        buffer, at, offset = b"", 0, 0
        for _ in range(self._count):
            while len(buffer) - at < _LENGTH.size:
                buffer, at, offset = _more(fd, buffer, at, offset, _CHUNK)
            (length,) = _LENGTH.unpack_from(buffer, at)
            while len(buffer) - at < _LENGTH.size + length:
                buffer, at, offset = _more(fd, buffer, at, offset, max(_CHUNK, length))
            yield buffer[at + _LENGTH.size : at + _LENGTH.size + length]
            at += _LENGTH.size + length

    def close(self) -> None:
        """Remove the file (if any) and forget the items."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._buffer = bytearray()
        self._ends = array("Q")


def _more(fd: int, buffer: bytes, at: int, offset: int, size: int) -> tuple[bytes, int, int]:
    """The unread part of ``buffer`` with the next ``size`` bytes of the file after it."""
    chunk = os.pread(fd, size, offset)
    if not chunk:
        raise OSError("the spool file ended early")
    return buffer[at:] + chunk, 0, offset + len(chunk)
