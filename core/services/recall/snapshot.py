"""A copy of a recall index to save, taken in steps short enough for queries to interleave.

Saving means writing :func:`~core.services.recall.saved_file.pieces` of the index,
whose cost is mostly encoding each word's postings that this process decoded (every
word a query or a write touched). A background save takes that cost in slices, each
under the follower's lock and about a millisecond long:

1. :func:`pack_some` encodes decoded postings back into the bytes the index keeps
   for words it has not touched (what a freshly loaded index holds), a slice at a time.
   The index still answers alike: a word is decoded again when a query asks for it.
2. Once (almost) none are left, :func:`copy_of` takes a consistent copy in one short
   step: arrays and lists copied, postings and saved texts shared as immutable bytes.
3. Outside the lock, the saver writes the copy's pieces (a few hundred kilobytes
   each), resting between them.

Before all three, :func:`seal_some` checks the titles a build left unchecked, a slice
at a time, so that the file carries their seals (``RecallIndex.seals``).

Apart from the seals, nothing here changes what the index holds or how it ranks, nor
what a saved file holds: :func:`~core.services.recall.saved_file.read` reads it as it reads a
synchronous save.
"""

from __future__ import annotations

import time
from array import array
from typing import Any

from .engine import RecallIndex, _Column
from .postings import LazyPostings


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
        while post.fold_one():  # a word held by most records: ~1 MB copied, a slice
            if time.perf_counter() >= deadline:
                return False
        live, raw = post.live, post.raw
        while live:
            term, found = live.popitem()
            if post.saved_view(found):
                raw.restore(term)  # served from the saved file again, as it was
            else:
                raw[term] = post.encode(found)
            if time.perf_counter() >= deadline:
                return not any(p.live for p in _postings(index))
    return True


def seal_some(index: RecallIndex, slots: list[int], at: int, seconds: float) -> tuple[int, int]:
    """Check the titles of ``slots`` from position ``at`` on for about ``seconds`` (call
    under the follower's lock; a slot changed since it was listed is passed over):
    where the next slice starts, and how many seals changed."""
    deadline = time.perf_counter() + seconds
    changed = 0
    while at < len(slots):
        changed += index.seal(slots[at])
        at += 1
        if time.perf_counter() >= deadline:
            break
    return at, changed


def copy_of(index: RecallIndex) -> RecallIndex:
    """A copy of ``index`` that later changes to it do not reach (call under the
    follower's lock, after :func:`pack_some` left few decoded words): only for saving."""
    frozen = RecallIndex.__new__(RecallIndex)
    index.numeric()  # the number columns not read yet: the copy holds them all
    for name, value in vars(index).items():
        copied: Any = value
        if isinstance(value, array):
            copied = value[:]
        elif isinstance(value, _Column):
            copied = value.copy()
        elif isinstance(value, LazyPostings):
            # Encoded bytes never change in place: sharing them is a copy.
            copied = type(value)(value.pack())
        elif isinstance(value, list):
            copied = list(value) if name != "listeners" else []
        elif isinstance(value, dict):
            copied = dict(value)
        setattr(frozen, name, copied)
    return frozen
