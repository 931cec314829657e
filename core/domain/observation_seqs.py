"""A session's observation numbers (``seq``), kept in step with the store between calls.

Every observe numbers its note past the session's last, and a session at its cap drops
its oldest note (by seq, then id) on every call: both are asked of all its notes, up
to 500, under the store's lock. Scanning them each time is cheap for one writer with
warm caches, but eight writers on one session each scan 500 documents that other
processes' commits keep putting back cold: taking the scan out raised such a fleet's
commit rate by about a third.

So, per store and session table, this keeps each note's seq and a heap of (seq, id),
and brings them up to date from the commits since it last looked, which a folder store
tells without reading the table (:meth:`core.storage.store.Store.changed_since`).
Where it cannot tell (a store that keeps no log, a log folded since, a table replaced
or written in the transaction under way), or a seq is not a whole number, the caller
scans the notes as before: the answers are the same either way.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from typing import Any
from weakref import WeakKeyDictionary

from ..storage.store import Store

#: Below this many notes the scan costs less than keeping the numbers.
KEPT_FROM = 64
#: Session tables kept per store (the ones observed into most recently).
TABLES_KEPT = 32


class _Numbers:
    """One table's notes: id → seq, a heap of (seq, id) with ids since removed or
    renumbered left in it until they reach its top, and the largest seq."""

    __slots__ = ("seq_of", "heap", "top", "version", "stamp")

    def __init__(self, seq_of: dict[str, int], version: int, stamp: int) -> None:
        self.seq_of = seq_of
        self.heap = [(seq, doc_id) for doc_id, seq in seq_of.items()]
        heapq.heapify(self.heap)
        self.top = max(seq_of.values(), default=0)
        self.version = version
        self.stamp = stamp

    @classmethod
    def read(
        cls, docs: Mapping[str, Mapping[str, Any]], version: int, stamp: int
    ) -> _Numbers | None:
        """The numbers of ``docs``; None when a seq is not an int (the caller's scan
        says what such a note means)."""
        seq_of = {}
        for doc_id, doc in docs.items():
            seq = doc.get("seq")
            if type(seq) is not int:
                return None
            seq_of[doc_id] = seq
        return cls(seq_of, version, stamp)

    def take(self, changes: Mapping[str, Mapping[str, Any] | None]) -> bool:
        """Apply documents put (their last form) and deleted (None) since; False when a
        put seq is not an int."""
        seq_of, heap = self.seq_of, self.heap
        top_gone = False
        for doc_id, doc in changes.items():
            old = seq_of.pop(doc_id, None)
            if old is not None and old == self.top:
                top_gone = True
            if doc is None:
                continue
            seq = doc.get("seq")
            if type(seq) is not int:
                return False
            seq_of[doc_id] = seq
            heapq.heappush(heap, (seq, doc_id))
            if seq >= self.top:
                self.top, top_gone = seq, False
        if top_gone:
            self.top = max(seq_of.values(), default=0)
        if len(heap) > 2 * len(seq_of) + KEPT_FROM:  # mostly ids gone: start it again
            self.heap = [(seq, doc_id) for doc_id, seq in seq_of.items()]
            heapq.heapify(self.heap)
        return True

    def oldest(self) -> str | None:
        """The id of the note with the least (seq, id)."""
        heap, seq_of = self.heap, self.seq_of
        while heap:
            seq, doc_id = heap[0]
            if seq_of.get(doc_id) == seq:
                return doc_id
            heapq.heappop(heap)
        return None


_KEPT: WeakKeyDictionary[Store, dict[str, _Numbers]] = WeakKeyDictionary()


def last_and_oldest(
    store: Store, table: str, docs: Mapping[str, Mapping[str, Any]]
) -> tuple[int, str | None] | None:
    """The largest seq among ``docs`` (table ``table``'s notes, as :meth:`Store.docs`
    gave them, inside a transaction that has not written them) and the id of the note
    with the least (seq, id); None when the caller must scan ``docs`` itself."""
    if len(docs) < KEPT_FROM or not store.tells_changes:
        return None
    version = store.table_version(table)
    if version is None or not store.holds_committed(table, docs):
        return None
    # A write through TinyDB's API (documents edited in place) or a cache cleared
    # moves the first part of the stamp: what was kept may no longer match.
    stamp = store.table_stamp(table)[0]
    tables = _KEPT.get(store)
    if tables is None:
        tables = _KEPT[store] = {}
    numbers = tables.pop(table, None)
    if numbers is not None and (numbers.stamp != stamp or numbers.version > version):
        numbers = None
    if numbers is not None and numbers.version < version:
        changes = store.changed_since(table, numbers.version)
        if changes is None or not numbers.take(changes):
            numbers = None
    if numbers is None or len(numbers.seq_of) != len(docs):
        numbers = _Numbers.read(docs, version, stamp)
        if numbers is None:
            return None
    numbers.version = version
    tables[table] = numbers  # the most recent last
    while len(tables) > TABLES_KEPT:
        del tables[next(iter(tables))]
    return numbers.top, numbers.oldest()
