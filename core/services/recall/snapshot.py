"""A copy of a recall index to save, taken in steps short enough for queries to interleave.

Saving means :meth:`~core.services.recall.engine.RecallIndex.to_bytes`, whose cost is
mostly encoding each word's postings that this process decoded (every word a query or a
write touched: ~1 s at 10k long notes, ~18 s at 100k). A background save takes that
cost in slices, each under the follower's lock and about a millisecond long:

1. :func:`pack_some` encodes decoded postings back into the bytes the index keeps
   for words it has not touched (what a freshly loaded index holds), a slice at a time.
   The index still answers alike: a word is decoded again when a query asks for it.
2. Once (almost) none are left, :func:`copy_of` takes a consistent copy in one short
   step: arrays and lists copied, postings shared as immutable bytes.
3. Outside the lock, :func:`pack_columns` joins the copy's text columns a slice at a
   time, and :func:`encoded` turns what ``to_bytes`` would write into marshal pieces
   of at most a few hundred kilobytes each (version 2, which refers to no earlier object, so
   pieces made apart join into one stream that ``marshal.loads`` reads as a whole).
   One ``marshal.dumps`` of it all would hold the interpreter for ~0.6 s at 30k notes.

Nothing here changes what the index holds or how it ranks, nor what a saved file
holds: :meth:`~core.services.recall.engine.RecallIndex.from_bytes` reads it as it
reads a synchronous save.
"""

from __future__ import annotations

import marshal
import struct
import time
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from .engine import _SEP, LazyPostings, RecallIndex, _Column

#: Strings joined in one slice of :func:`pack_columns`.
_ROWS = 256
#: Entries of a dict, or characters of a text, encoded in one piece by :func:`encoded`.
_ITEMS = 256
_CHARS = 1 << 18
_VERSION = 2  # no references between objects: pieces encoded apart join up


def _postings(index: RecallIndex) -> list[LazyPostings]:
    return [value for value in vars(index).values() if isinstance(value, LazyPostings)]


def live_terms(index: RecallIndex) -> int:
    """How many words' postings are decoded (what :func:`pack_some` has left to do)."""
    return sum(len(post.live) for post in _postings(index))


def pack_some(index: RecallIndex, seconds: float) -> bool:
    """Encode decoded postings for about ``seconds`` (call under the follower's lock);
    True once none are left."""
    deadline = time.perf_counter() + seconds
    for post in _postings(index):
        live, raw = post.live, post.raw
        while live:
            term, found = live.popitem()
            raw[term] = post.encode(found)
            if time.perf_counter() >= deadline:
                return not any(p.live for p in _postings(index))
    return True


def copy_of(index: RecallIndex) -> RecallIndex:
    """A copy of ``index`` that later changes to it do not reach (call under the
    follower's lock, after :func:`pack_some` left few decoded words): only for saving."""
    frozen = RecallIndex.__new__(RecallIndex)
    for name, value in vars(index).items():
        copied: Any = value
        if isinstance(value, array):
            copied = value[:]
        elif isinstance(value, _Column):
            copied = _copy_column(value)
        elif isinstance(value, LazyPostings):
            # Encoded bytes never change in place: sharing them is a copy.
            copied = type(value)(value.pack())
        elif isinstance(value, list):
            copied = list(value) if name != "listeners" else []
        elif isinstance(value, dict):
            copied = dict(value)
        setattr(frozen, name, copied)
    return frozen


def _copy_column(column: _Column) -> _Column:
    if column._list is not None:
        return _Column(list(column._list))
    return _Column.packed(column._blob, column._offsets[:])


def pack_columns(frozen: RecallIndex, pause: Callable[[], None]) -> None:
    """Join the copy's text columns into the buffers ``to_bytes`` writes, calling
    ``pause`` between slices (so other threads run)."""
    for name, value in list(vars(frozen).items()):
        if not isinstance(value, _Column) or value._list is None:
            continue
        values = value._list
        offsets = array("q", [0])
        parts = []
        total = 0
        for start in range(0, len(values), _ROWS):
            chunk = values[start : start + _ROWS]
            for text in chunk:
                total += len(text) + 1
                offsets.append(total)
            parts.append(_SEP.join(chunk) + _SEP if chunk else "")
            pause()
        setattr(frozen, name, _Column.packed("".join(parts), offsets))


def encoded(value: Any) -> Iterator[bytes]:
    """``marshal.dumps(value, 2)`` in pieces: long dicts, lists and tuples a slice of
    entries at a time, long texts a slice of characters at a time."""
    if not _big(value):
        yield marshal.dumps(value, _VERSION)
    elif isinstance(value, dict):
        yield b"{"
        items = list(value.items())
        for start in range(0, len(items), _ITEMS):
            chunk = items[start : start + _ITEMS]
            if any(_big(item) for _, item in chunk):
                for key, item in chunk:
                    yield marshal.dumps(key, _VERSION)
                    yield from encoded(item)
            else:
                yield marshal.dumps(dict(chunk), _VERSION)[1:-1]  # the entries alone
        yield b"0"
    elif isinstance(value, list | tuple):
        yield (b"[" if isinstance(value, list) else b"(") + struct.pack("<i", len(value))
        for start in range(0, len(value), _ITEMS):
            chunk = list(value[start : start + _ITEMS])
            if any(_big(item) for item in chunk):
                for item in chunk:
                    yield from encoded(item)
            else:
                yield marshal.dumps(chunk, _VERSION)[5:]  # the items alone
    else:
        assert isinstance(value, str)
        parts = [
            value[start : start + _CHARS].encode("utf-8", "surrogatepass")
            for start in range(0, len(value), _CHARS)
        ]
        yield b"u" + struct.pack("<i", sum(len(p) for p in parts))
        yield from parts


def _big(value: Any) -> bool:
    """Whether ``value`` is worth encoding in pieces."""
    if isinstance(value, str):
        return len(value) > _CHARS
    if isinstance(value, dict):
        return len(value) > _ITEMS or any(_big(v) for v in value.values())
    if isinstance(value, list | tuple):
        return len(value) > _ITEMS or any(_big(v) for v in value)
    return False
