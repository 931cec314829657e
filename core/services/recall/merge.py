"""Two recall indexes built from two parts of one store, joined into the one a single
build makes.

A build gives slots in table order (tables sorted by name) and session codes in the
order sessions first appear. Built from a prefix of the sorted tables and from the
rest, two indexes join slot for slot into what one build of all of them makes: the
second's slots come after the first's, its table codes after the first's, its new
sessions after the first's (a session both parts name, through an episode in one and
its notes in the other, keeps the first's code and sums what both counted), and each
word's postings, ascending by slot in each part, stay ascending once the second's
follow the first's. A session's notes are one table, so no link between notes, nor
the share of the note before that a note's postings carry, crosses the parts.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from .engine import RecallIndex
from .mapped import _CODEC
from .postings import LazyPostings, copied


def join(first: RecallIndex, second: RecallIndex) -> RecallIndex:
    """``first`` with ``second`` after it (``first`` is changed and returned; both are
    fresh builds of disjoint tables, ``first``'s all sorting before ``second``'s)."""
    import numpy as np

    if first.free or second.free or set(first.table_names) & set(second.table_names):
        raise ValueError("only fresh builds of disjoint tables join")
    slots = len(first.kinds)
    tables = len(first.table_names)
    codes = _sessions(first, second)

    first.kinds.extend(second.kinds)
    first.tables.extend(array("i", [t + tables for t in second.tables]))
    first.sessions.extend(array("i", [codes[s] if s >= 0 else -1 for s in second.sessions]))
    for mine, theirs in ((first.prev, second.prev), (first.next, second.next)):
        mine.extend(array("i", [s + slots if s >= 0 else -1 for s in theirs]))
    for name in ("times", "expires", "lens", "fps", "seals", "asks", "ages"):
        getattr(first, name).extend(getattr(second, name))
    for name in ("refs", "titles", "fields"):
        mine, theirs = getattr(first, name), getattr(second, name)
        for row in range(len(theirs)):
            mine.append(theirs[row])

    second.post.fold()  # postings kept apart join their words first
    second.sess_post.fold()
    live = first.post.live
    for term, (docs, tfs) in _postings(second.post):
        if len(docs) < _VECTOR:
            shifted = array("i", [d + slots for d in docs])
        else:
            moved = np.frombuffer(docs, dtype=np.int32) + np.int32(slots)
            shifted = array("i")
            shifted.frombytes(moved.astype(np.int32).tobytes())
        held = first.post.get(term)
        if held is None:
            live[term] = (shifted, array("i", tfs))
            continue
        grown = held if isinstance(held[0], array) else copied(held)
        grown[0].extend(shifted)
        grown[1].extend(array("i", tfs))
        live[term] = grown
    for term, found in _postings(second.sess_post):
        into = first.sess_post.setdefault(term)
        for code, tenths in found.items():
            at = codes[code]
            into[at] = into.get(at, 0) + tenths

    first.total_len += second.total_len
    first.live += second.live
    first.expiring += second.expiring
    for name in second.table_names:
        first.table_codes[name] = len(first.table_names)
        first.table_names.append(name)
    first.table_keys.update(second.table_keys)
    first.generation += 1
    first._vocab = None
    first._slots_of = None
    first._derived = {}
    first.drop_session_counts()  # its sessions' codes are first's now, and counts grew
    return first


#: Postings from which a word's slots are shifted with numpy rather than one by one.
_VECTOR = 64


def _postings(postings: LazyPostings) -> Iterator[tuple[str, Any]]:
    """Every word of ``postings`` with its postings: the decoded ones, then the saved
    ones read in their file's order (looking each up by its word would search the
    saved word list once per word)."""
    yield from postings.live.items()
    for row, packed in postings.raw.sorted_items():
        yield str(row[:-1], *_CODEC), postings.decode(packed)


def _sessions(first: RecallIndex, second: RecallIndex) -> list[int]:
    """``second``'s session codes as the joined index numbers them (``first`` gains the
    sessions it lacks, in ``second``'s order, and the counts of those both name)."""
    codes = []
    for sid, length, docs in zip(
        second.session_ids, second.session_lens, second.session_docs, strict=True
    ):
        code = first.session_codes.get(sid)
        if code is None:
            code = first.session_codes[sid] = len(first.session_ids)
            first.session_ids.append(sid)
            first.session_lens.append(length)
            first.session_docs.append(docs)
        else:
            first.session_lens[code] += length
            first.session_docs[code] += docs
        codes.append(code)
    return codes
