"""How the recall index holds each word's postings: for every term, the records that
hold it with their counts (:class:`DocPostings`), and the sessions that hold it with
theirs (:class:`SessionPostings`, the session field).

A loaded index keeps each word as the bytes its saved file holds and decodes it on
first use (:class:`LazyPostings`): a query or a write touches a few hundred of its
words. What is added to a saved word not read yet is kept apart from it
(:class:`KeptApart`) and joined when the word is read or saved, so a process catching
up with a few notes never copies a common word's postings to append one.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Iterator
from typing import Any

from .mapped import TermBytes


class LazyPostings:
    """term → postings, each term's decoded from its bytes on first use (a loaded
    index of 100,000 records decodes only the words queries and writes touch)."""

    __slots__ = ("live", "raw")

    def __init__(self, raw: TermBytes | None = None) -> None:
        self.live: dict[str, Any] = {}
        self.raw = raw if raw is not None else TermBytes()

    @staticmethod
    def decode(packed: bytes | memoryview) -> Any:
        """One term's postings from their bytes."""
        raise NotImplementedError

    @staticmethod
    def saved_view(found: Any) -> bool:
        """Whether ``found`` is read in place from a saved file, unchanged since."""
        return False

    @staticmethod
    def encode(found: Any) -> bytes:
        """One term's postings as bytes (what :meth:`decode` reads)."""
        raise NotImplementedError

    def get(self, term: str) -> Any:
        found = self.live.get(term)
        if found is None:
            packed = self.raw.pop(term, None)
            if packed is None:
                return None
            found = self.live[term] = self.decode(packed)
        return found

    def drop(self, term: str) -> None:
        self.live.pop(term, None)
        self.raw.pop(term, None)

    def __contains__(self, term: str) -> bool:
        return term in self.live or term in self.raw

    def terms(self) -> Iterator[str]:
        yield from self.live
        yield from self.raw

    def __len__(self) -> int:
        return len(self.live) + len(self.raw)

    def fold(self) -> None:
        """Bring postings kept apart into their words' own (see ``DocPostings``)."""

    def fold_one(self) -> bool:
        """:meth:`fold` one word; False when none was left."""
        return False

    def pack(self) -> TermBytes:
        """Every term's bytes, in a copy later changes do not reach."""
        packed = self.raw.copy()
        for term, found in self.live.items():
            if self.saved_view(found):
                packed.restore(term)  # the saved row is these very bytes
            else:
                packed[term] = self.encode(found)
        return packed


class KeptApart(LazyPostings):
    """Postings that take what is added to a saved word not read yet apart from it
    (:attr:`added`), joined when the word is read (``get``) or saved: appending to a
    saved word would copy or decode all of it first."""

    __slots__ = ("added",)

    def __init__(self, raw: TermBytes | None = None) -> None:
        super().__init__(raw)
        self.added: dict[str, Any] = {}

    @staticmethod
    def joined(found: Any, grown: Any) -> Any:
        """A saved word's postings with those kept apart for it added."""
        raise NotImplementedError

    def get(self, term: str) -> Any:
        found = super().get(term)
        if self.added:
            grown = self.added.pop(term, None)
            if grown is not None:
                # (Never None: a word is kept apart only while saved and not read.)
                joined = grown if found is None else self.joined(found, grown)
                found = self.live[term] = joined
        return found

    def fold(self) -> None:
        """Join every word's additions kept apart (:attr:`added`) to the word's own."""
        while self.fold_one():
            pass

    def fold_one(self) -> bool:
        for term in self.added:
            self.get(term)  # joins them (and takes the word out of ``added``)
            return True
        return False

    def drop(self, term: str) -> None:
        self.added.pop(term, None)
        super().drop(term)

    def pack(self) -> TermBytes:
        self.fold()
        return super().pack()


class DocPostings(KeptApart):
    """term → (slots, tenths): two parallel int32 sequences per term.

    Arrays, not dicts: a query reads a term's postings as numpy views (no copy) and
    scores them in one vectorised step, and 100,000 long records' postings take a
    fraction of the memory a dict per term would. A term read from its bytes is two
    int32 views of them (no copy: a query's first use of a common word would otherwise
    copy its postings, and a background save packs them back to bytes, so every query
    paid it again); the first write to the term turns them into arrays. Adding appends;
    removing finds the slot (rare: forget, redact, restore, a reordered session)."""

    __slots__ = ()

    @staticmethod
    def decode(packed: bytes | memoryview) -> tuple[memoryview, memoryview]:
        # bytes data and a saved word's run are 8-aligned, and half is a multiple of 4:
        # the int32 views are aligned.
        view = memoryview(packed)
        if len(view) % 8:
            raise ValueError("postings of a saved word are not whole (slot, tenths) pairs")
        half = len(view) // 2
        return view[:half].cast("i"), view[half:].cast("i")

    @staticmethod
    def _own_bytes(docs: Any, tfs: Any) -> bool:
        """Whether the views are of one bytes object that holds just them."""
        obj = docs.obj
        return obj is tfs.obj and isinstance(obj, bytes) and len(obj) == docs.nbytes + tfs.nbytes

    @staticmethod
    def saved_view(found: Any) -> bool:
        docs, tfs = found
        # Read-only views that are not of their own bytes: of a saved file's pages.
        return isinstance(docs, memoryview) and not DocPostings._own_bytes(docs, tfs)

    @staticmethod
    def encode(found: tuple[Any, Any]) -> bytes:
        docs, tfs = found
        if isinstance(docs, memoryview) and DocPostings._own_bytes(docs, tfs):
            # Views of the bytes they were read from, never written since: those bytes.
            packed: bytes = docs.obj  # type: ignore[assignment]  # checked: bytes
            return packed
        return bytes(docs.tobytes() + tfs.tobytes())

    def __init__(self, raw: TermBytes | None = None) -> None:
        super().__init__(raw)
        #: Postings added to saved words not read since, kept apart until one is: a
        #: process catching up with a few notes appends to ~100 words, most of them held
        #: by most records, and copying each saved word's postings to append one would
        #: cost a CLI search more memory than the rest of its index.
        self.added: dict[str, tuple[array[int], array[int]]] = {}

    @staticmethod
    def joined(found: Any, grown: Any) -> Any:
        docs, tfs = copied(found)
        docs.extend(grown[0])
        tfs.extend(grown[1])
        return docs, tfs

    def parts(self, term: str) -> list[tuple[Any, Any]]:
        """``term``'s postings as held, those kept apart (:attr:`added`) not joined to
        the saved ones: what a plain-Python query reads, one part after another.
        Joining copies the saved ones (~0.6 MB for a common word at 100,000 records),
        which a CLI search one note behind its index file paid for each query word the
        note holds. Empty: no such term."""
        found = LazyPostings.get(self, term)
        grown = self.added.get(term)
        if grown is None:
            return [] if found is None else [found]
        return [grown] if found is None else [found, grown]

    def _writable(self, term: str) -> tuple[array[int], array[int]] | None:
        """``term``'s postings as arrays that take writes (None: no such term)."""
        found = self.get(term)
        if found is None:
            return None
        if isinstance(found[0], array):
            kept: tuple[array[int], array[int]] = found
            return kept
        docs, tfs = self.live[term] = copied(found)
        return docs, tfs

    def add(self, term: str, slot: int, tf: int) -> None:
        grown = self.added.get(term)
        if grown is None:
            found = self.live.get(term)
            if found is not None and isinstance(found[0], array):
                grown = found  # writable already
            elif found is None and term not in self.raw:
                grown = self.live[term] = (array("i"), array("i"))  # a new word
            else:
                grown = self.added[term] = (array("i"), array("i"))  # saved: kept apart
        grown[0].append(slot)
        grown[1].append(tf)

    def add_all(self, slot: int, posted: dict[str, int]) -> None:
        """:meth:`add` for every (term, tf) of ``posted`` with a tf above 0: a build's
        inner loop (~140 terms a long note), with the common case, a word already
        held as arrays, in line."""
        live, added = self.live, self.added
        for term, tf in posted.items():
            if tf <= 0:
                continue
            grown = added.get(term) if added else None
            if grown is None:
                found = live.get(term)
                if found is None or not isinstance(found[0], array):
                    self.add(term, slot, tf)  # a new word, or a saved one
                    continue
                grown = found
            grown[0].append(slot)
            grown[1].append(tf)

    def remove(self, term: str, slots: set[int]) -> None:
        """Take ``slots`` out of ``term``'s postings (the term goes when none are left)."""
        found = self._writable(term)
        if found is None:
            return
        docs, tfs = found
        if len(slots) == 1:
            (slot,) = slots
            try:
                at = docs.index(slot)
            except ValueError:
                return
            del docs[at]
            del tfs[at]
        else:
            keep = [i for i, d in enumerate(docs) if d not in slots]
            if len(keep) == len(docs):
                return
            docs = array("i", [docs[i] for i in keep])
            self.live[term] = (docs, array("i", [tfs[i] for i in keep]))
        if not docs:
            self.drop(term)

    def put_in_order(self, term: str) -> tuple[array[int], array[int]]:
        """``term``'s postings in the order of their slots, kept so (new arrays: a save
        may be reading the old ones). Their order is otherwise the order of adding."""
        docs, tfs = self.get(term)
        pairs = sorted(zip(docs, tfs, strict=True))
        ordered = array("i", [d for d, _ in pairs]), array("i", [t for _, t in pairs])
        self.live[term] = ordered
        return ordered

    def df(self, term: str) -> int:
        """How many records hold ``term``."""
        found = self.get(term)
        return len(found[0]) if found else 0


class SessionPostings(KeptApart):
    """term → {session: tenths} (the session field)."""

    __slots__ = ()

    def __init__(self, raw: TermBytes | None = None) -> None:
        super().__init__(raw)
        #: Tenths added to saved words not read since: a note's ~100 words, each a
        #: saved word's sessions decoded to add one, cost a CLI search one note behind
        #: its index file ~1 MB at 100k notes.
        self.added: dict[str, dict[int, int]] = {}

    @staticmethod
    def decode(packed: bytes | memoryview) -> dict[int, int]:
        found: dict[int, int] = marshal.loads(packed)
        return found

    @staticmethod
    def encode(found: dict[int, int]) -> bytes:
        return marshal.dumps(found)

    @staticmethod
    def joined(found: Any, grown: Any) -> Any:
        for session, tenths in grown.items():
            found[session] = found.get(session, 0) + tenths
        return found

    def add(self, term: str, session: int, tenths: int) -> None:
        """Add ``tenths`` to ``term`` in ``session``; to a saved word not read yet, apart."""
        found = self.live.get(term)
        if found is None:
            if term in self.raw:
                found = self.added.setdefault(term, {})
            else:
                found = self.setdefault(term)
        found[session] = found.get(session, 0) + tenths

    def setdefault(self, term: str) -> dict[int, int]:
        found: dict[int, int] | None = self.get(term)
        if found is None:
            found = self.live[term] = {}
        return found


def copied(found: tuple[Any, Any]) -> tuple[array[int], array[int]]:
    """A word's postings (views or arrays) as new int32 arrays that take writes."""
    docs, tfs = array("i"), array("i")
    docs.frombytes(memoryview(found[0]).cast("B"))
    tfs.frombytes(memoryview(found[1]).cast("B"))
    return docs, tfs
