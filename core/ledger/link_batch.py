"""Episode references kept in memory while episodes are recorded, written once at the end.

Recording an episode links the rules it derives (``derived_from``) and the cards it
sights (``sighted_in``) to it, keeping each record's newest
:data:`~core.ledger.links.EPISODE_REFS`; a rule that leaves the active window takes its
links to an archive chunk (:func:`core.ledger.links.rehome`) and back when it returns.
Done one link at a time, a bulk recording made, wrote and dropped links that did
not survive the batch, and moved a thrashing rule's links on every step: in a
million-episode import that upkeep was a fifth of the time.

Inside :func:`deferred`, :func:`core.ledger.links.note_episode` and
:func:`core.ledger.links.rehome` only update a small model of each touched record's links
(what is stored, plus what would have been added, in the same order and with the
same ``seq``, and which links would have been dropped), and :meth:`Batch.flush`
writes the difference once: the links that survive, in the record's final home,
made exactly as one-at-a-time recording would have made them. Any other reader or
writer of links flushes first (``core.ledger.links._settle``), so nothing reads a link
table that is behind. A transaction that fails drops the model with everything
else it did.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from operator import attrgetter

from ..base.clock import iso
from ..storage.store import Store
from . import links

#: Records a batch models before it writes them out (bounds its memory in a bulk import).
MAX_RECORDS = 50_000


class _Ref:
    """One of a record's links as the model holds it: stored (``link``), or to be made."""

    __slots__ = ("kind", "to", "seq", "key", "link", "now", "made")

    def __init__(
        self,
        kind: str,
        to: str,
        seq: int,
        key: tuple[str, int, str],
        link: links.Link | None,
        now: datetime | None,
        made: int,
    ) -> None:
        self.kind = kind
        self.to = to
        self.seq = seq
        #: links.order without ``from`` (the same for a record's links).
        self.key = key
        self.link = link
        self.now = now
        #: When the model made it (new links are written in that order).
        self.made = made


_KEY = attrgetter("key")


def _stored_ref(link: links.Link) -> _Ref:
    seq = int(link.get("seq", 0))
    return _Ref(link["kind"], link["to"], seq, (link["created_at"], seq, link["id"]), link, None, 0)


class _Record:
    """A record's links as they would be: where they are stored, where they go, all of
    them oldest first (:func:`core.ledger.links.order`), and what answers "already linked?",
    "how many of this kind?" and "the next seq" without a scan."""

    __slots__ = ("stored_home", "home", "stored", "refs", "linked", "counts", "top")

    def __init__(self, home: str, stored: list[links.Link]) -> None:
        self.stored_home = home
        self.home = home
        self.stored = stored
        self.refs = sorted((_stored_ref(link) for link in stored), key=_KEY)
        # Counts, not sets: an old store may hold the same link twice.
        self.linked: dict[tuple[str, str], int] = Counter((r.kind, r.to) for r in self.refs)
        self.counts: dict[str, int] = Counter(r.kind for r in self.refs)
        self.top = max((r.seq for r in self.refs), default=0)


class Batch:
    """The model of the links of the records a recording touched (see the module)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.records: dict[str, _Record] = {}
        self._made = 0

    def _record(self, frm: str, home: str, stored: list[links.Link] | None = None) -> _Record:
        """Record ``frm``'s model, made from its table (or from ``stored``, read already)
        if the batch does not hold it in ``home``."""
        record = self.records.get(frm)
        if record is not None:
            if record.home == home:
                return record
            # Told another home than the model's: write what it holds and start again.
            self.flush()
        elif len(self.records) >= MAX_RECORDS:
            self.flush()
        if stored is None:
            stored = self._stored(home, frm)
        record = self.records[frm] = _Record(home, stored)
        return record

    def _stored(self, home: str, frm: str) -> list[links.Link]:
        """Record ``frm``'s links as its table holds them (read past the batch itself)."""
        with self.suspended():
            return list(links.from_record(self.store, home, frm))

    def note(self, kind: str, frm: str, home: str, episode_id: str, now: datetime) -> None:
        """:func:`core.ledger.links.note_episode`, on the model."""
        record = self.records.get(frm)
        if record is None or record.home != home:
            record = self._record(frm, home)
        linked, counts = record.linked, record.counts
        pair = (kind, episode_id)
        if linked.get(pair):
            return  # already linked
        refs = record.refs
        seq = record.top + 1
        overflow = counts.get(kind, 0) + 1 - links.EPISODE_REFS
        if overflow > 0:
            # The oldest of the record's others go (never the one being added), as one at a
            # time would have dropped them.
            at = 0
            while overflow:
                ref = refs[at]
                if ref.kind == kind:
                    del refs[at]
                    linked[kind, ref.to] -= 1
                    counts[kind] -= 1
                    overflow -= 1
                else:
                    at += 1
        self._made += 1
        new = _Ref(kind, episode_id, seq, (iso(now), seq, ""), None, now, self._made)
        if not refs or refs[-1].key <= new.key:
            refs.append(new)
        else:  # made at an earlier instant than the newest (a clock that went back)
            insort(refs, new, key=_KEY)
        linked[pair] = 1
        counts[kind] = counts.get(kind, 0) + 1
        record.top = seq

    def rehome(self, frm: str, old_home: str, new_home: str) -> int:
        """:func:`core.ledger.links.rehome`, on the model."""
        stored = None
        if frm not in self.records:
            stored = self._stored(old_home, frm)
            if not stored:
                return 0  # no links to move
        record = self._record(frm, old_home, stored)
        record.home = new_home
        return len(record.refs)

    @contextmanager
    def suspended(self) -> Iterator[None]:
        """Links' own reads and writes, made by the batch itself, go straight through."""
        held = self.store.derived.pop(links.BATCH, None)
        try:
            yield
        finally:
            if held is not None:
                self.store.derived[links.BATCH] = held

    def flush(self) -> None:
        """Write what the model holds: drop the links that went, move those whose record
        moved, make the new ones; one delete and one write per table."""
        if not self.records:
            return
        records, self.records = self.records, {}
        deletes: dict[str, list[links.Link]] = {}
        puts: dict[str, list[tuple[int, links.Link]]] = {}
        for frm, record in records.items():
            kept_ids = {id(ref.link) for ref in record.refs if ref.link is not None}
            moved = record.home != record.stored_home
            gone = [x for x in record.stored if moved or id(x) not in kept_ids]
            if gone:
                deletes.setdefault(record.stored_home, []).extend(gone)
            out = puts.setdefault(record.home, [])
            for ref in record.refs:
                if ref.link is None:
                    assert ref.now is not None
                    link = links.make(ref.kind, frm, ref.to, record.home, ref.now, seq=ref.seq)
                    out.append((ref.made, link))
                elif moved:
                    out.append((0, {**ref.link, "home": record.home}))
        with self.suspended():
            for gone in deletes.values():
                links.delete(self.store, gone)
            for home, made in puts.items():
                if made:
                    made.sort(key=lambda pair: pair[0])
                    links.put_all(self.store, home, [link for _, link in made])


@contextmanager
def deferred(store: Store) -> Iterator[Batch]:
    """Model episode references while the block runs and write them when it ends (call
    inside a transaction; an exception drops the model, the transaction rolls back)."""
    if links.BATCH in store.derived:  # already inside one: it writes at its own end
        yield store.derived[links.BATCH]
        return
    batch = Batch(store)
    store.derived[links.BATCH] = batch
    try:
        yield batch
        batch.flush()
    finally:
        store.derived.pop(links.BATCH, None)
