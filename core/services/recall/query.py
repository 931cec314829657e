"""What a recall query may return, and what it returns: the filter every search passes
to the index (kinds, a time span, a session, per-agent visibility, records left out, the
span of time the question points at), and each record found with its score."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple


class Filter(NamedTuple):
    """Which records a query may return."""

    kinds: frozenset[str] | None = None
    since: float | None = None
    until: float | None = None
    session: str | None = None
    now: float | None = None  # working-memory keys that expired by then are left out
    #: Whether the caller may see a record: (kind, ref, session id, table) → bool, asked
    #: once per candidate (per-agent isolation: core/ledger/isolation.py); None: every record.
    visible: Callable[[str, str, str | None, str], bool] | None = None
    #: Slots left out like the filters above (the context's lessons it lists already):
    #: part of the mask, so the ranking still prunes as it does without them.
    without: frozenset[int] = frozenset()
    #: The span of time the query points at ("a week ago": :mod:`.when`), seconds since
    #: the epoch, from and to: records written in it rank higher, none is left out.
    near: tuple[float, float] | None = None


class Visibility:
    """A visibility test (:attr:`Filter.visible`) by kind: the records of
    ``by_session`` are decided by their session alone (``session(session_id)``), those
    of ``by_record`` by ``record(kind, ref, session, table)``, and every other record
    is visible.

    Calling it is the whole definition; the index uses the split only to ask once per
    session rather than once per record, and to decode a record's reference only for
    the kinds whose test reads it."""

    __slots__ = ("by_session", "session", "by_record", "record")

    def __init__(
        self,
        by_session: frozenset[str],
        session: Callable[[str | None], bool],
        by_record: frozenset[str],
        record: Callable[[str, str, str | None, str], bool],
    ) -> None:
        self.by_session, self.session = by_session, session
        self.by_record, self.record = by_record, record

    def __call__(self, kind: str, ref: str, session: str | None, table: str) -> bool:
        if kind in self.by_session:
            return self.session(session)
        if kind in self.by_record:
            return self.record(kind, ref, session, table)
        return True


#: A record that fills a search its words left short scores at most this share of the
#: last record the words found (so below every one of them).
FILL_SHARE = 0.5


class Scored(NamedTuple):
    """A record the query found, with its score (``filled``: it holds no word of the
    query, and came in to fill a search its words left short)."""

    slot: int
    ref: str
    kind: str
    title: str
    session: str | None
    score: float
    table: str
    filled: bool = False
