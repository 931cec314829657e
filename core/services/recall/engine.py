"""The recall index: BM25 over stems, kept incrementally, ranked for agents' questions.

An agent asks in words ("when did we rotate the staging keys?") and wants the
records that answer. The index ranks by BM25 (``k1`` 0.6, ``b`` 0.2: short
notes are not rewarded for being short, and a word said twice counts little
more than once; past ``LONG_FROM`` a record's length weighs more, so a long
reply does not outrank the line that answers) with OR semantics: a record needs
some of the query's words, and more and rarer words rank it higher. Words pass
:mod:`core.services.recall.words` (stop words out, Snowball stems), so "deploying"
finds "deployed".

Four ideas from conversation retrieval apply to observations, whose sessions
are conversations (each measured on held-out data; see docs/RECALL.md):

* a note's words also count a tenth for the note after it (an answer often
  continues the question before it), half when the note only asks ("what did you
  do?" / "went skiing"), and a word the note after it says again counts half there (a
  reply that repeats its question's words is not where the answer is);
* a note gains 0.3 of its best neighbour's score (evidence comes in runs);
* the whole session is a second field, worth 0.2 of the best score;
* a note that only asks ("Can you recommend a restaurant in Rome?") loses a fifth of
  its score: it shares a later question's words, but the answer is in its reply.

Field weights count a word where it stands (:mod:`core.services.recall.extract`).
A query word the vocabulary lacks is taken for a typo or a fragment and stands
for the nearest vocabulary words (one edit from 4 letters, two from 8, or the
words it starts), counted lower. Query words side by side in a record add a
small proximity bonus inside the score, never a band above it.

Queries are answered term at a time, rarest first. A term's postings are two int32
arrays, read as views of the saved file (:mod:`core.services.recall.postings` holds
them). Where the install built the compiled loops (``_scoring.c``), one pass sums
every posting a window of records at a time and keeps the best ``DEPTH`` as it goes;
otherwise each term's postings are scored at once as numpy arrays, with MaxScore
pruning: once the terms left could not lift an unseen record into the best
``DEPTH``, common terms only update the records still in the running (the few
neighbours the shares then read are completed by a binary search in each term's
postings). Term frequencies and lengths are kept in tenths, as integers, so adding
and removing records is exact: an index kept incrementally equals one rebuilt from
scratch.

numpy is imported by the first query; rapidfuzz only when a word needs the typo
fallback. Not thread-safe: callers serialise access (a query's views of the
postings must be gone before a write appends to them).
"""

from __future__ import annotations

import bisect
import functools
import heapq
import marshal
import math
import mmap
import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any, NamedTuple

from ...base.hashing import blake2b
from ...privacy.seal import key_id, seal_if_clean
from . import words as wordlib
from .ages import age_key
from .best import DenseScores, best_slots, get_score, kth_best
from .categories import MEMBER_WEIGHT, member_stems, word_members
from .extract import KIND_NAMES, NEVER, Unit
from .fields import counts_of, decode_fields, encode_fields, pair_bonus
from .mapped import FileReader, SavedNumbers, TextRows, encode, positions
from .postings import DocPostings, SessionPostings
from .query import Filter, Scored, Visibility

try:
    # The scoring loops compiled (_scoring.c, built by setup.py where a C compiler is
    # found): the same scores to the bit, ~6x faster than numpy on a long-note query.
    from . import _scoring as _compiled
except ImportError:  # an install that could not build it scores in Python and numpy
    _compiled = None  # type: ignore[assignment]

FORMAT = 8
#: A title not checked yet (see ``RecallIndex.seals``; a seal is never negative).
UNSEALED = -1
K1 = 0.6
B = 0.2
# Past LONG_FROM tenths of words (about 40 words, 400-odd characters), a record's length
# weighs LONG more for each LONG_FROM it runs on: a reply or a document that holds the
# query's words far apart ranks below the line that says them together. Below it,
# length weighs only what B gives it (a chat line that says more is no worse for it).
# In a store whose records average more than LONG_FROM (whole sessions, documents), the
# extra weight shrinks in proportion (:func:`long_weight`): long is then the usual.
LONG_FROM = 400
LONG = 4.0
# tenths: a word a note repeats from the note before it counts half in that note (a
# reply that says its question's words again is not where the answer is)
ECHO = 5
PREV_TURN = 1  # tenths: the previous observation's words count 0.1
# tenths: half, when the previous observation only asks (see ASKING): "what did you do
# last weekend?" / "went skiing at Tahoe": what the question names is what its reply is
# about
ASKED_TURN = 5
NEIGHBOUR = 0.3
SESSION_WEIGHT = 0.2
PROXIMITY = 0.25
# A query of more distinct words than this is a passage (a stretch of conversation, a
# task's text), not a question: a word of it the index lacks is a word the memory does
# not hold rather than a typo, so it is not spread to the words spelled like it.
PASSAGE_TERMS = 20
#: A record written in the span of time the query points at ("two weeks ago") scores
#: this much more (:attr:`Filter.near`).
WHEN_BOOST = 0.5
#: The share of its score a note that only asks loses ("Can you recommend a restaurant
#: in Rome?"): it shares a later question's words, but the answer is in the reply
#: (:mod:`core.services.recall.asking`), which takes half its words (``ASKED_TURN``).
ASKING = 0.2
# Records re-scored with the session field and neighbours: 100 ranked the tuning sets
# (synthetic and REALTALK) exactly as 200 did, in ~70% of the time at 10k records.
_TABLES_SCANNED = 32  # tables found one by one before every table's map is made at once
DEPTH = 100
#: A query that reads up to this many postings is scored in plain Python, unless numpy
#: is already loaded: a few milliseconds either way, and a one-shot CLI search on a
#: small store skips numpy's import (~80 ms).
SMALL = 20_000
#: The same for a process that answers one call (the CLI): numpy's import (~60 ms and
#: ~20 MB with its libraries) is then paid for a single query. Plain Python (~0.35 µs
#: a posting) took as long as numpy's import and sums on long notes' ~460k postings at
#: 100k records, in half the memory; past this many, numpy is worth its cost.
ONE_CALL_SMALL = 600_000


def compiled_scoring() -> bool:
    """Whether the compiled scoring loops (``_scoring.c``) were built for this install."""
    return _compiled is not None


def one_call_small() -> int:
    """:data:`ONE_CALL_SMALL`, or no limit with the compiled loops: they sum a query of
    any size faster than numpy loads, in less memory."""
    return ONE_CALL_SMALL if _compiled is None else sys.maxsize


PROXIMITY_DEPTH = 50
#: The longest record whose length the summing pass reads in two bytes (see
#: ``RecallIndex._by_length``); an index holding a longer one reads a float per slot.
_LONGEST = 65_535
#: A term whose postings reach 1 / _DENSE of the slots is summed densely (np.bincount).
_DENSE = 8
#: Sessions past which a word's counts stay a dict (an array by session would cost more to
#: make, after each write with the word, than the ~100 sessions a query reads are worth),
#: and the bytes of such arrays kept at most.
_BY_SESSION_MOST = 20_000
_BY_SESSION_BYTES = 32 << 20
#: Pruning picks out the records in the running (and their neighbours) only when they are
#: under 1 / _WORTH of all: past that, picking them out of each term's postings costs more
#: than scoring every record.
_WORTH = 3
TYPO_WEIGHT = (1.0, 0.8, 0.6)  # by edit distance
PREFIX_WEIGHT = 0.7
MAX_EXPANSIONS = 5
#: A kind's code in the index's ``kinds`` column.
_KIND_CODES = {name: code for code, name in enumerate(KIND_NAMES)}


class _Column:
    """Strings by slot: the saved rows of a loaded index (read in place), those
    changed since, and those appended since (all of them, for an index built here)."""

    __slots__ = ("base", "over", "tail")

    def __init__(self, values: list[str] | None = None, base: TextRows | None = None) -> None:
        self.base = base
        self.over: dict[int, str] = {}
        self.tail: list[str] = values if values is not None else []

    def __getitem__(self, i: int) -> str:
        base = self.base
        if base is None:
            return self.tail[i]
        saved = len(base)
        if i >= saved:
            return self.tail[i - saved]
        found = self.over.get(i) if self.over else None
        return base[i] if found is None else found

    def __len__(self) -> int:
        return len(self.tail) + (len(self.base) if self.base is not None else 0)

    def append(self, value: str) -> None:
        self.tail.append(value)

    def saved_apart(self, slots: list[int]) -> tuple[list[int], list[int]]:
        """The positions in ``slots`` of rows that are the saved file's, unchanged
        since, and of the others."""
        saved: list[int] = []
        other: list[int] = []
        if self._all_saved(slots):
            return list(range(len(slots))), other  # a loaded index, before edits
        n = len(self.base) if self.base is not None else 0
        over = self.over
        for i, d in enumerate(slots):
            (saved if 0 <= d < n and d not in over else other).append(i)
        return saved, other

    def in_place(self) -> tuple[Any, int, memoryview] | None:
        """The saved rows' bytes as mapped (see :meth:`TextRows.in_place`), or None."""
        return None if self.base is None else self.base.in_place()

    def many(self, slots: list[int]) -> list[str]:
        """``[self[i] for i in slots]``: saved rows unchanged since, all of them, read
        by the compiled loops in one call (a search's hits: ~1 µs a row otherwise)."""
        if _compiled is not None and self._all_saved(slots):
            placed = self.in_place()
            if placed is not None:
                return _compiled.rows(*placed, slots)
        return [self[i] for i in slots]

    def _all_saved(self, slots: list[int]) -> bool:
        """Whether every one of ``slots`` (at least one) is a saved row unchanged since
        (a loaded index, before edits)."""
        base = self.base
        return (
            base is not None
            and bool(slots)
            and min(slots) >= 0
            and max(slots) < len(base)
            and not self.over.keys() & slots
        )

    def __setitem__(self, i: int, value: str) -> None:
        saved = len(self.base) if self.base is not None else 0
        if i >= saved:
            self.tail[i - saved] = value
        else:
            self.over[i] = value

    def copy(self) -> _Column:
        """A copy later changes to this one do not reach (saved rows are shared)."""
        out = _Column(list(self.tail), self.base)
        out.over = dict(self.over)
        return out


#: The per-slot number columns (as :meth:`RecallIndex.numeric` orders them) and their
#: array type codes.
NUMBER_TYPES = {
    "kinds": "b",
    "tables": "i",
    "sessions": "i",
    "prev": "i",
    "next": "i",
    "times": "d",
    "expires": "d",
    "lens": "q",
    "fps": "q",
    "seals": "q",
    "asks": "b",
    "ages": "q",
}


def _passage(terms: Iterable[str]) -> bool:
    """Whether distinct ``terms`` make a passage (more than :data:`PASSAGE_TERMS`)."""
    # Words, not terms: a pair of ideographs is two characters counted already.
    return sum(map(wordlib.length_share, terms)) > PASSAGE_TERMS


class RecallIndex:
    """Records by slot, their postings, and the sessions observations belong to.

    Tables are the unit of change: :meth:`sync_table` makes the index hold
    exactly a table's units (adding, replacing and removing by fingerprint), and
    :meth:`drop_table` forgets one. ``table_keys`` says which version of each
    table the index holds (what the store follower compares).
    """

    def __init__(self) -> None:
        self.kinds = array("b")  # index into KIND_NAMES; -1: a free slot
        self.tables = array("i")
        self.sessions = array("i")  # -1: none
        self.prev = array("i")  # the observation before, in its session (-1: none)
        self.next = array("i")
        self.times = array("d")
        self.expires = array("d")
        self.lens = array("q")  # tenths
        self.fps = array("q")
        #: The title's seal when the scrubber found it clean (0: it did not, so the
        #: title is scrubbed when shown; UNSEALED: not looked at yet).
        self.seals = array("q")
        self.asks = array("b")  # 1: an observation that only asks (see ASKING)
        #: Each record's age (:func:`.ages.age_key`): what orders equal scores.
        self.ages = array("q")
        #: Slots given to units since the follower last looked, their titles not yet
        #: checked (~11 µs a title): it checks a few at once and leaves many (a build,
        #: ~1 s at 100k records) to its saver, outside every query.
        self.fresh: list[int] = []
        #: The scrubber's key the seals were made under (``privacy.seal.key_id``;
        #: None: none made yet). Seals made under another are checked again.
        self.seal_key: str | None = None
        self.refs = _Column()
        self.titles = _Column()
        self.fields = _Column()
        self.post = DocPostings()
        self.total_len = 0
        self.live = 0
        self.expiring = 0  # units that expire (working-memory keys with a TTL)
        self.free: list[int] = []
        self.table_names: list[str] = []
        self.table_codes: dict[str, int] = {}
        self.table_keys: dict[str, str] = {}
        self.session_ids: list[str] = []
        self.session_codes: dict[str, int] = {}
        self.session_lens: list[int] = []  # tenths of the session's observations
        self.session_docs: list[int] = []
        self.sess_post = SessionPostings()
        self._slots_of: dict[int, dict[str, int]] | None = None  # table code → ref → slot
        self._slots_whole = False  # whether _slots_of holds every table
        self.from_file = False  # read from a saved file (whose bytes queries read)
        #: The saved file's identity (device, inode) while its bytes are read in place.
        self.source: tuple[int, int] | None = None
        #: The mapping of the saved file queries read in place (None: all in memory).
        self.mapped: mmap.mmap | None = None
        #: Whether a record read from the saved file was taken out since (its text is
        #: still in the file's bytes).
        self.lost_saved_text = False
        self._vocab: list[str] | None = None
        #: The last slot whose term counts were read: (slot, its stored fields, counts).
        self._counted: tuple[int, str, dict[str, int]] | None = None
        #: What queries derive from the records (kind masks, session totals), kept until
        #: the records change (``generation`` counts changes).
        self.generation = 0
        self._derived: dict[object, tuple[int, Any]] = {}
        # Query words' counts as arrays by session (see _session_counts), each kept in
        # step with the word's dict as records come and go (_recount).
        self._by_session: dict[str, Any] = {}
        self._by_session_bytes = 0
        #: Called with (slot, unit) when a unit is indexed and (slot, None) when removed.
        self.listeners: list[Callable[[int, Unit | None], None]] = []

    # ------------------------------------------------------------------ tables

    def slots_of(self, table: str) -> dict[str, int]:
        """ref → slot for one table's units, kept up to date once asked for.

        A process that catches up with a commit or two asks for a table or two: their
        slots are found by a scan of the table codes (in C), and only their references
        read, not the 100,000 others of a saved index read in place. Past a few
        tables, every table's map is made in one pass."""
        code = self._table_code(table)
        if self._slots_of is None:
            self._slots_of = {}
        found = self._slots_of.get(code)
        if found is not None:
            return found
        refs, tables, kinds = self.refs, self.tables, self.kinds
        if self._slots_whole:
            found = self._slots_of[code] = {}
        elif len(self._slots_of) < _TABLES_SCANNED:
            held = tables.positions(code) if isinstance(tables, SavedNumbers) else None
            found = self._slots_of[code] = {
                refs[slot]: slot
                for slot in (positions(tables, code) if held is None else held)
                if kinds[slot] >= 0
            }
        else:
            tables, kinds = self.column("tables"), self.column("kinds")
            by_table: dict[int, dict[str, int]] = {}
            for slot in range(len(kinds)):
                if kinds[slot] >= 0:
                    by_table.setdefault(tables[slot], {})[refs[slot]] = slot
            for kept, current in self._slots_of.items():
                by_table[kept] = current  # the same objects: callers hold them
            self._slots_of = by_table
            self._slots_whole = True
            found = by_table.setdefault(code, {})
        return found

    def slots_in(self, table: str, refs: Iterable[str]) -> frozenset[int]:
        """The slots of ``refs`` in ``table`` (those the index holds; nothing is added)."""
        if table not in self.table_codes:
            return frozenset()
        found = self.slots_of(table)
        return frozenset(slot for ref in refs if (slot := found.get(ref)) is not None)

    def _table_code(self, table: str) -> int:
        code = self.table_codes.get(table)
        if code is None:
            code = self.table_codes[table] = len(self.table_names)
            self.table_names.append(table)
        return code

    def drop_table(self, table: str) -> None:
        """Forget every unit of ``table``."""
        self.drop_tables([table])

    def drop_tables(self, tables: Iterable[str]) -> int:
        """Forget every unit of each of ``tables``; how many units went. Each word's
        postings are walked once for them all: a restore to a checkpoint that lacks 384
        of a 100k index's sessions took them out one table after another in 62 s,
        walking the common words' postings once a table."""
        names = [t for t in tables if t in self.table_codes or t in self.table_keys]
        slots = [slot for t in names if t in self.table_codes for slot in self.slots_of(t).values()]
        if slots:
            self._unpost(slots)
            for slot in slots:
                self._release(slot)
            self._vocab = None
        for t in names:
            self.table_keys.pop(t, None)
        return len(slots)

    def sync_table(
        self, table: str, found: list[Unit], key: str | None, fps: list[int] | None = None
    ) -> int:
        """Make the index hold exactly ``found`` for ``table``; returns how many units
        were added, replaced or removed. ``key`` is recorded as the table's version
        (None: the table is gone); ``fps`` are the units' fingerprints when known."""
        current = self.slots_of(table)
        if fps is None:
            fps = [fingerprint(u) for u in found]
        wanted = {u.ref: i for i, u in enumerate(found)}
        fp_of = self.fps
        removed = [s for ref, s in current.items() if ref not in wanted]
        added = []
        for i, unit in enumerate(found):
            slot = current.get(unit.ref)
            if slot is None:
                added.append(i)
            elif fp_of[slot] != fps[i]:
                removed.append(slot)
                added.append(i)
        ordered = bool(found) and found[0].kind == "observation"
        changed = len(removed) + len(added)
        if changed:
            self._apply(table, found, fps, removed, added, ordered)
        if key is None:
            self.table_keys.pop(table, None)
        else:
            self.table_keys[table] = key
        return changed

    def sync_changes(
        self, table: str, gone: list[str], fresh: list[tuple[Unit, int]], key: str
    ) -> int:
        """Take ``gone`` refs out of ``table`` and put ``fresh`` units (with their
        fingerprints) in, replacing a unit of the same ref; the rest of the table stays.
        For a table whose units keep no order."""
        current = self.slots_of(table)
        removed = list(dict.fromkeys(current[ref] for ref in gone if ref in current))
        added = []
        for i, (unit, fp) in enumerate(fresh):
            slot = current.get(unit.ref)
            if slot is None:
                added.append(i)
            elif self.fps[slot] != fp:
                removed.append(slot)
                added.append(i)
        changed = len(removed) + len(added)
        if changed:
            units = [u for u, _ in fresh]
            self._apply(table, units, [fp for _, fp in fresh], removed, added, False)
        self.table_keys[table] = key
        return changed

    def append_in_order(
        self, table: str, fresh: list[tuple[Unit, int]], after: str | None, key: str
    ) -> int:
        """Add a session's new notes after its last one (``after``, a ref), in order."""
        current = self.slots_of(table)
        code = self._table_code(table)
        last = current.get(after, -1) if after is not None else -1
        for unit, fp in fresh:
            slot = self._claim(unit, fp, code)
            current[unit.ref] = slot
            for listener in self.listeners:
                listener(slot, unit)
            self.prev[slot] = last
            self.next[slot] = -1
            if last >= 0:
                self.next[last] = slot
            self._post(slot)
            last = slot
        if fresh:
            self._vocab = None
        self.table_keys[table] = key
        return len(fresh)

    def _apply(
        self,
        table: str,
        found: list[Unit],
        fps: list[int],
        removed: list[int],
        added: list[int],
        ordered: bool,
    ) -> None:
        current = self.slots_of(table)
        gone = set(removed)
        # An observation's postings hold a tenth of the one before it: every note whose
        # predecessor changes is taken out first (with the links it was posted with)
        # and posted again once the session's new order is linked.
        repost: list[int] = []
        if ordered:
            before: str | None = None
            for unit in found:
                slot = current.get(unit.ref)
                if slot is not None and slot not in gone:
                    prev = self.prev[slot]
                    if prev in gone or (self.refs[prev] if prev >= 0 else None) != before:
                        repost.append(slot)
                before = unit.ref
        repost = list(dict.fromkeys(repost))
        self._unpost([*repost, *removed])
        for slot in removed:
            self._release(slot)
        code = self._table_code(table)
        for i in added:
            slot = self._claim(found[i], fps[i], code)
            current[found[i].ref] = slot
            for listener in self.listeners:
                listener(slot, found[i])
        if ordered or repost:
            last = -1
            for unit in found:
                slot = current[unit.ref]
                self.prev[slot] = last
                self.next[slot] = -1
                if last >= 0:
                    self.next[last] = slot
                last = slot
        for slot in (*repost, *(current[found[i].ref] for i in added)):
            self._post(slot)
        if removed or added:
            self._vocab = None

    def _claim(self, unit: Unit, fp: int, table: int) -> int:
        stored = encode_fields(unit.fields)
        session = -1
        if unit.session is not None:
            session = self.session_codes.get(unit.session, -1)
            if session < 0:
                session = self.session_codes[unit.session] = len(self.session_ids)
                self.session_ids.append(unit.session)
                self.session_lens.append(0)
                self.session_docs.append(0)
        row = (
            KIND_NAMES.index(unit.kind),
            table,
            session,
            -1,
            -1,
            unit.time,
            unit.expires,
            0,
            fp,
            UNSEALED,
            1 if unit.asks else 0,
            age_key(unit.ref),
        )
        if unit.expires != NEVER:
            self.expiring += 1
        if self.free:
            slot = self.free.pop()
            for column, value in zip(self._columns(), row, strict=True):
                column[slot] = value
            self.refs[slot], self.titles[slot], self.fields[slot] = unit.ref, unit.title, stored
            self.fresh.append(slot)
        else:
            slot = len(self.kinds)
            for column, value in zip(self._columns(), row, strict=True):
                column.append(value)
            self.refs.append(unit.ref)
            self.titles.append(unit.title)
            self.fields.append(stored)
            self.fresh.append(slot)
        return slot

    def __getattr__(self, name: str) -> Any:
        # Only asked for an attribute not found: a number column of a saved file that
        # no query read yet (see :meth:`read_later`).
        unread = self.__dict__.get("_unread")
        if not unread or name not in unread:
            raise AttributeError(name)
        buf, start, n = unread.pop(name)
        column: Any
        if isinstance(buf, FileReader):
            # A one-call process: read in place, slot by slot, writes held beside.
            column = SavedNumbers(buf, start, n, NUMBER_TYPES[name])
        else:
            column = array(NUMBER_TYPES[name])
            column.frombytes(buf[start : start + n])
        setattr(self, name, column)
        return column

    def column(self, name: str) -> array[Any]:
        """Number column ``name`` as one array: for a loop over every slot or numpy
        (a column a one-call process reads in place is read whole now, once)."""
        found = getattr(self, name)
        if isinstance(found, SavedNumbers):
            found = found.whole()
            setattr(self, name, found)
        return found  # type: ignore[no-any-return]

    def read_later(self, columns: dict[str, tuple[Any, int, int]]) -> None:
        """Take number columns from a saved file's bytes, each (buffer, start, length),
        read when first asked for: a query that filters on no time, expiry or table
        never copies those columns (of 100,000 records, ~2.6 MB of the file and as much
        again in memory)."""
        for name in columns:
            self.__dict__.pop(name, None)
        self.__dict__.setdefault("_unread", {}).update(columns)

    def numeric(self) -> tuple[array[Any], ...]:
        """The per-slot number columns as arrays, in the order a saved file holds them."""
        return tuple(self.column(name) for name in NUMBER_TYPES)

    def _columns(self) -> tuple[Any, ...]:
        """The per-slot number columns as held (arrays, or read in place and written
        beside: :class:`SavedNumbers`), in the order of :meth:`numeric`."""
        return (
            self.kinds,
            self.tables,
            self.sessions,
            self.prev,
            self.next,
            self.times,
            self.expires,
            self.lens,
            self.fps,
            self.seals,
            self.asks,
            self.ages,
        )

    def _release(self, slot: int) -> None:
        table = self.tables[slot]
        if self._slots_of is not None:
            self._slots_of.get(table, {}).pop(self.refs[slot], None)
        for listener in self.listeners:
            listener(slot, None)
        if self.expires[slot] != NEVER:
            self.expiring -= 1
        self.kinds[slot] = -1
        self.prev[slot] = self.next[slot] = -1
        self.seals[slot] = UNSEALED
        base = self.fields.base
        if base is not None and slot < len(base):
            self.lost_saved_text = True
        self.refs[slot] = self.titles[slot] = self.fields[slot] = ""
        self.free.append(slot)

    def unsealed(self) -> list[int]:
        """The records whose titles this scrubber has not checked yet, in slot order
        (seals made under another key are forgotten first: :meth:`own_seals`)."""
        self.own_seals()
        seals, kinds = self.column("seals"), self.column("kinds")
        if "numpy" in sys.modules:
            np = _numpy()
            waiting = np.frombuffer(seals, dtype=np.int64) == UNSEALED
            found: list[int] = np.flatnonzero(
                waiting & (np.frombuffer(kinds, dtype=np.int8) >= 0)
            ).tolist()
            return found
        return [slot for slot, value in enumerate(seals) if value == UNSEALED and kinds[slot] >= 0]

    def own_seals(self) -> None:
        """Make every seal one of this scrubber's: seals made under another key (an
        index file written by another version of memwork) are forgotten, to be made
        again (call before :meth:`seal`; :meth:`unsealed` does)."""
        current = key_id()
        if self.seal_key == current:
            return
        if self.seal_key is not None or self.from_file:
            seals = self.column("seals")
            if "numpy" in sys.modules:
                np = _numpy()
                np.frombuffer(seals, dtype=np.int64)[:] = UNSEALED
            else:
                seals[:] = array("q", [UNSEALED]) * len(seals)
        self.seal_key = current

    def seal(self, slot: int) -> bool:
        """Check the title of the record at ``slot`` if it was not yet (see ``seals``;
        :meth:`own_seals` first); whether its seal changed."""
        if self.kinds[slot] < 0 or self.seals[slot] != UNSEALED:
            return False
        self.seals[slot] = seal_if_clean(self.titles[slot])
        return True

    def _counts(self, slot: int) -> dict[str, int]:
        """The slot's own term counts (read-only): the last slot counted is kept, as a
        build posts each note right after the one before it, whose counts it needs."""
        stored = self.fields[slot]
        kept = self._counted
        if kept is not None and kept[0] == slot and kept[1] is stored:
            return kept[2]
        counts = counts_of(stored)
        self._counted = (slot, stored, counts)
        return counts

    def _posted(self, slot: int) -> tuple[dict[str, int], dict[str, int]]:
        """(what the slot's postings hold, its own counts)."""
        prev = self.prev[slot]
        before = self._counts(prev) if prev >= 0 else None
        own = self._counts(slot)
        if before is None:
            return own, own
        posted = dict(own)
        share = ASKED_TURN if self.asks[prev] else PREV_TURN
        for term, tenths in before.items():
            if term in own:
                posted[term] = own[term] * ECHO // 10
            posted[term] = posted.get(term, 0) + tenths * share // 10
        return posted, own

    def _post(self, slot: int) -> None:
        self.generation += 1
        posted, own = self._posted(slot)
        length = sum(own.values())
        if not self.fields[slot].isascii():  # ideographs' pairs add nothing to it
            share = wordlib.length_share
            length -= sum(n for term, n in own.items() if len(term) == 2 and not share(term))
        self.lens[slot] = length
        self.total_len += length
        self.live += 1
        self.post.add_all(slot, posted)
        session = self.sessions[slot]
        if session >= 0 and self.kinds[slot] == _OBSERVATION:
            self.session_lens[session] += length
            self.session_docs[session] += 1
            sess_post = self.sess_post
            live = sess_post.live
            kept = self._by_session
            for term, tf in own.items():
                if kept:
                    self._recount(term, session, tf)
                found = live.get(term)
                if found is None:
                    sess_post.add(term, session, tf)  # a new word, or a saved one
                else:
                    found[session] = found.get(session, 0) + tf

    def _unpost(self, slots: Iterable[int]) -> None:
        """Take the slots' postings out (each term's postings are walked once)."""
        gone: dict[str, set[int]] = {}
        self.generation += 1
        for slot in slots:
            posted, own = self._posted(slot)
            self.total_len -= self.lens[slot]
            self.live -= 1
            for term, tf in posted.items():
                if tf > 0:
                    gone.setdefault(term, set()).add(slot)
            session = self.sessions[slot]
            if session >= 0 and self.kinds[slot] == _OBSERVATION:
                self.session_lens[session] -= self.lens[slot]
                self.session_docs[session] -= 1
                for term, tf in own.items():
                    if self._by_session:
                        self._recount(term, session, -tf)
                    found = self.sess_post.get(term)
                    if found is None:
                        continue
                    left = found.get(session, 0) - tf
                    if left > 0:
                        found[session] = left
                    else:
                        found.pop(session, None)
                        if not found:
                            self.sess_post.drop(term)
        for term, which in gone.items():
            self.post.remove(term, which)

    # ------------------------------------------------------------------ queries

    def vocabulary(self) -> list[str]:
        """Every indexed term, sorted (for the typo and prefix fallback)."""
        if self._vocab is None:
            self._vocab = sorted(self.post.terms())
        return self._vocab

    def expand(self, term: str) -> list[tuple[str, float]]:
        """The vocabulary words a term found nowhere stands for, with their weights."""
        if len(term) < 3 or term.isdigit():
            return []
        vocab = self.vocabulary()
        found: dict[str, float] = {}
        lo = bisect.bisect_left(vocab, term)
        hi = bisect.bisect_right(vocab, term + "\U0010ffff", lo)
        for word in vocab[lo:hi]:
            found[word] = PREFIX_WEIGHT
        budget = 2 if len(term) >= 8 else 1 if len(term) >= 4 else 0
        if budget:
            from rapidfuzz import process
            from rapidfuzz.distance import OSA

            lo = bisect.bisect_left(vocab, term[0])
            hi = bisect.bisect_right(vocab, term[0] + "\U0010ffff", lo)
            for word, distance, _ in process.extract(
                term, vocab[lo:hi], scorer=OSA.distance, score_cutoff=budget, limit=None
            ):
                weight = TYPO_WEIGHT[int(distance)]
                if weight > found.get(word, 0.0):
                    found[word] = weight
        # The stem a word begins with ("rotatoin": "rotat"): an ending the stemmer did
        # not know, or a typo past the stem. The longest, of 5 letters or more and at
        # least half the word ("intern" never stands for "internationalization").
        for k in range(len(term) - 1, max(5, -(-len(term) // 2)) - 1, -1):
            if term[:k] in self.post:
                found[term[:k]] = max(found.get(term[:k], 0.0), PREFIX_WEIGHT)
                break
        ranked = sorted(found.items(), key=lambda kv: (-kv[1], -self._df(kv[0]), kv[0]))
        return ranked[:MAX_EXPANSIONS]

    def _df(self, term: str) -> int:
        return self.post.df(term)

    def query_terms(self, query: str) -> list[tuple[str, float]]:
        """The query's terms with their weights: its own stems, and for a stem the index
        lacks, the words it stands for."""
        return self._weighted(wordlib.terms(query))

    def member_terms(
        self, query: str, stems: list[str], weighted: list[tuple[str, float]]
    ) -> list[tuple[str, float]]:
        """The members of the kinds ``query`` names (:mod:`.categories`; ``stems``: its
        terms) that the index holds and ``weighted`` (the query's terms) does not, at
        the members' weight."""
        kinds, by_word, word_stems = _kinds()
        found = [kinds.get(stem, ()) for stem in stems]
        if not word_stems.isdisjoint(stems):  # a kind matched as written: words read
            found += [by_word.get(word, ()) for word in wordlib.words(query)]
        taken = {term for term, _ in weighted}
        out: dict[str, float] = {}
        for members in found:
            for member in members:
                if member not in taken and member in self.post:
                    out[member] = MEMBER_WEIGHT
        return list(out.items())

    def _own_and_members(
        self, query: str
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The query's own terms with their weights, and the members of the kinds it
        names (what :meth:`scores` ranks by and :meth:`query_words` matches)."""
        stems = wordlib.terms(query)
        weighted = self._weighted(stems)
        return weighted, self.member_terms(query, stems, weighted)

    def _weighted(self, stems: list[str]) -> list[tuple[str, float]]:
        """Each query term once, weighted by how often the query says it (a passage
        asked as a query repeats what it is about), and for a term the index lacks, the
        words it may be a misspelling of, unless the query is a passage."""
        said = Counter(stems)
        passage = _passage(said)
        out: dict[str, float] = {}
        for term, times in said.items():
            repeated = 1.0 + math.log(times)
            if term in self.post:
                out[term] = max(out.get(term, 0.0), repeated)
                continue
            if passage:
                continue
            for word, weight in self.expand(term):
                out[word] = max(out.get(word, 0.0), weight * repeated)
        return list(out.items())

    def is_passage(self, query: str) -> bool:
        """Whether ``query`` reads as a passage (a stretch of conversation, a task's
        text) rather than a question: more than :data:`PASSAGE_TERMS` distinct words."""
        return _passage(set(wordlib.terms(query)))

    def _mask(self, where: Filter, np: Any) -> Any:
        """Which slots ``where``'s kinds, session, time window and expiry let through, as
        a numpy bool array (None: all of them; ``visible`` is asked per candidate)."""
        mask = None

        def both(part: Any) -> None:
            nonlocal mask
            mask = part if mask is None else mask & part

        if where.kinds is not None:
            codes = sorted(KIND_NAMES.index(k) for k in where.kinds)
            both(
                self._derive(
                    ("kinds", *codes),
                    lambda: np.isin(np.frombuffer(self.column("kinds"), dtype=np.int8), codes),
                )
            )
        if where.session is not None:
            code = self.session_codes.get(where.session, -2)
            both(np.frombuffer(self.column("sessions"), dtype=np.int32) == code)
        if where.since is not None or where.until is not None:
            # A record with no time (NaN) compares false: outside any window.
            times = np.frombuffer(self.column("times"), dtype=np.float64)
            if where.since is not None:
                both(times >= where.since)
            if where.until is not None:
                both(times <= where.until)
        if where.now is not None and self.expiring:
            both(np.frombuffer(self.column("expires"), dtype=np.float64) > where.now)
        if where.without:
            size = len(self.kinds)
            kept = np.ones(size, dtype=bool)  # a fresh array: masks are shared
            out = np.fromiter(where.without, dtype=np.intp, count=len(where.without))
            kept[out[(out >= 0) & (out < size)]] = False
            both(kept)
        return mask

    def allowed(self, where: Filter) -> Callable[[int], bool] | None:
        """A test of which slots ``where`` lets through (None: all of them)."""
        np = _numpy()
        mask = self._mask(where, np)
        if mask is None and where.visible is None:
            return None
        return self._test(mask, where.visible)

    def _test(
        self, mask: Any, visible: Callable[[str, str, str | None, str], bool] | None
    ) -> Callable[[int], bool]:
        seen: dict[int, bool] = {}
        # A test by kind: a note's session asked once (a query under isolation looks at
        # hundreds of candidates, most of them notes), a reference decoded only where
        # the test reads it.
        split = visible if isinstance(visible, Visibility) else None
        codes = _KIND_CODES
        by_session = frozenset(codes[k] for k in split.by_session if k in codes) if split else ()
        by_record = frozenset(codes[k] for k in split.by_record if k in codes) if split else ()
        sessions_seen: dict[int, bool] = {}

        def ok(slot: int) -> bool:
            if mask is not None and not mask[slot]:
                return False
            if visible is None:
                return True
            known = seen.get(slot)
            if known is None:
                code = self.sessions[slot]
                kind = self.kinds[slot]
                if split is not None and kind in by_session:
                    known = sessions_seen.get(code)
                    if known is None:
                        session = self.session_ids[code] if code >= 0 else None
                        known = sessions_seen[code] = split.session(session)
                elif split is not None and kind not in by_record:
                    known = True
                else:
                    known = visible(
                        KIND_NAMES[kind],
                        self.refs[slot],
                        self.session_ids[code] if code >= 0 else None,
                        self.table_names[self.tables[slot]],
                    )
                seen[slot] = known
            return known

        return ok

    def scores(
        self,
        query: str,
        where: Filter = Filter(),  # noqa: B008
        depth: int = DEPTH,
        small: int = SMALL,
        terms: list[tuple[str, float]] | None = None,
        wanted: int | None = None,
    ) -> dict[int, float]:
        """Every candidate's score (unordered): the best ``depth`` by BM25, their
        neighbours, with the session field, neighbour shares and proximity added, and
        those written in ``where.near`` lifted. A query reading up to ``small``
        postings is scored in plain Python while numpy is not loaded (both ways give
        the same scores). ``terms`` (indexed terms with their weights) stands for the
        query's own when given; it has no word order, so no proximity is added.
        ``wanted``: only the best ``wanted`` scores are read (see :meth:`_proximity`)."""
        n = self.live
        if not n:
            return {}
        # A kind's members count where the question names the kind, apart from its own
        # words: they never make a pair for proximity nor a session's score.
        weighted, members = self._own_and_members(query) if terms is None else (terms, [])
        # Each word's postings in parts (see DocPostings.parts): joined for numpy below.
        info: list[tuple[float, Any, str]] = []
        for term, weight in (*weighted, *members):
            parts = self.post.parts(term)
            if not parts:
                continue
            df = sum(len(docs) for docs, _ in parts)
            kp1 = weight * math.log(1 + (n - df + 0.5) / (df + 0.5)) * (K1 + 1)
            info.append((kp1, parts, term))
        if not info:
            return {}
        info.sort(key=lambda x: (-x[0], x[2]))  # rarest first: the same sums every time
        # Which of some slots the query may see, and their BM25 scores (0 if it may not).
        allowed: Callable[[list[int]], list[bool]]
        lookup: Callable[[list[int]], list[float]]
        # Scores pruned by a cut: the slots the neighbour shares read are completed.
        complete: Callable[[list[int]], None] | None = None
        # The scores as one float per slot, and the mask of slots the query may see
        # (None: all), where the compiled loops can read them.
        flat: tuple[Any, Any] | None = None
        if plain_python(sum(len(docs) for _, parts, _ in info for docs, _ in parts), small):
            # A one-call process (its larger ``small``) keeps its memory to one word's
            # pages at a time.
            top, ok, score_of, flat = self._bm25_small(info, where, depth, small > SMALL)
            allowed = _each(ok)
            lookup = _each(lambda j: score_of(j) if ok(j) else 0.0)
        else:
            info = [(kp1, self.post.get(term), term) for kp1, _, term in info]
            np = _numpy()
            mask = self._mask(where, np)
            ranked: list[tuple[int, float]] | None = None
            if _compiled is not None:
                k = depth if where.visible is None else 4 * depth
                # What reads the scores afterwards is known where no caller's test of
                # what it may see can ask for more than k: the best k and, for the
                # neighbour shares, the slots up to two links from them. Only those are
                # written (see _bm25_compiled).
                links = self._arrays("prev", "next") if where.visible is None else None
                acc, ranked = self._bm25_compiled(info, mask, np, k, links)
            else:
                norms = self._derive("norms", self._norms)
                acc, cut = self._bm25(info, norms, mask, where.visible is None, np, depth)
                if cut is not None:
                    running = cut

                    def complete_at(order: list[int]) -> None:
                        self._complete(acc, order, info, norms, mask, running, np)

                    complete = complete_at
            top, ok = self._best(acc, mask, where.visible, np, depth, ranked)
            if where.visible is None:
                # A record ``mask`` leaves out scores 0 in ``acc``: whole lists at once.
                allowed = _everything if mask is None else _taken(mask)
                lookup = _taken(acc)
                flat = (acc, mask) if complete is None else None
            else:
                allowed = _each(ok)
                lookup = _each(lambda j: acc.item(j) if ok(j) else 0.0)
        if not top:
            return {}
        best = top[0][1] or 1.0
        own = {t for t, _ in weighted}
        session_score = self._session_scores([t for _, _, t in info if t in own], top)
        share = SESSION_WEIGHT * best / max(session_score.values()) if session_score else 0.0
        # The columns read only where the compiled pass can take them.
        compiled = flat is not None and _compiled is not None
        columns = self._arrays("prev", "next", "sessions", "kinds") if compiled else None
        if flat is not None and columns is not None and _compiled is not None:
            before, after, sessions, kinds = columns
            final = _compiled.around(
                top,
                *flat,
                before,
                after,
                sessions,
                kinds,
                session_score,
                share,
                NEIGHBOUR,
                _OBSERVATION,
            )
        else:
            final = self._around(top, allowed, lookup, session_score, share, complete)
        if len(info) > 1 and PROXIMITY and terms is None:
            self._proximity(final, [(t, kp1 / (K1 + 1)) for kp1, _, t in info], weighted, wanted)
        if where.near is not None:
            self._lift_near(final, where.near)
        self._lower_asking(final)
        return final

    def _lower_asking(self, final: dict[int, float]) -> None:
        """Lower the candidates that only ask by ``ASKING`` of their score."""
        asks = self.asks
        for d in final:
            if asks[d]:
                final[d] *= 1 - ASKING

    def _lift_near(self, final: dict[int, float], span: tuple[float, float]) -> None:
        """Lift the candidates written in ``span`` by ``WHEN_BOOST`` (a record without
        a time, NaN, is never in it)."""
        start, end = span
        times = self.times
        for d in final:
            if start <= times[d] <= end:
                final[d] *= 1 + WHEN_BOOST

    def _around(
        self,
        top: list[tuple[int, float]],
        allowed: Callable[[list[int]], list[bool]],
        lookup: Callable[[list[int]], list[float]],
        session_score: dict[int, float],
        share: float,
        complete: Callable[[list[int]], None] | None,
    ) -> dict[int, float]:
        """The candidates' scores: the ``top`` (slot, score) with their session's share,
        and the notes beside them in their sessions that ``allowed`` lets through, from
        their own BM25 score (``lookup``) with their session's share; each gains
        ``NEIGHBOUR`` x the best BM25 score beside it (a neighbour the query may not see
        lends nothing). What ``_scoring.around`` does in one compiled pass."""
        final = dict(top)
        sessions, kinds = self.sessions, self.kinds
        if session_score:
            for d in final:
                s = sessions[d]
                if s in session_score and kinds[d] == _OBSERVATION:
                    final[d] += share * session_score[s]
        prev, nxt = self.prev, self.next
        # The notes beside the best, in the order met (as the compiled pass adds them).
        beside = list(
            dict.fromkeys(j for d, _ in top for j in (prev[d], nxt[d]) if j >= 0 and j not in final)
        )
        candidates = [*final, *(j for j, seen in zip(beside, allowed(beside), strict=True) if seen)]
        needed = {j for c in candidates for j in (prev[c], nxt[c]) if j >= 0}
        needed.update(candidates)
        order = list(needed)
        if complete is not None:
            complete(order)
        bm25 = dict(zip(order, lookup(order), strict=True))
        for c in candidates:
            a, z = prev[c], nxt[c]
            if a < 0 and z < 0:
                continue
            near = max(bm25[a] if a >= 0 else 0.0, bm25[z] if z >= 0 else 0.0)
            if c not in final:
                own = bm25[c]
                if own and share:
                    own += share * session_score.get(sessions[c], 0.0)
                final[c] = own
            final[c] += NEIGHBOUR * near
        return final

    def _arrays(self, *names: str) -> list[array[Any]] | None:
        """Number columns as arrays, or None while one is read in place (a one-call
        process reads a few of its slots rather than all of them)."""
        found = [getattr(self, name) for name in names]
        return None if any(isinstance(f, SavedNumbers) for f in found) else found

    def _bm25_small(
        self,
        info: list[tuple[float, list[tuple[Any, Any]], str]],
        where: Filter,
        depth: int,
        release: bool = False,
    ) -> tuple[
        list[tuple[int, float]],
        Callable[[int], bool],
        Callable[[int], float],
        tuple[Any, Any] | None,
    ]:
        """:meth:`_bm25` and :meth:`_best` for a query that reads few postings, in plain
        Python: the same sums in the same order, so the same scores to the last bit.
        ``release``: let each word's mapped pages go once summed (:func:`_let_go`).

        As there, the filters are asked of every posting and ``visible`` (a call per
        record, reading its reference) only of the best records, until ``depth`` of
        them pass. Last, the scores as one float per slot and the mask of slots the
        query may see, where the compiled loops can read them (else None)."""
        lens = self.column("lens")
        if _compiled is not None:
            return self._bm25_small_compiled(info, where, depth, release, lens)
        fits = self._scalar_test(where._replace(visible=None))
        k, one_b, far = 10 * K1, 1 - B, LONG_FROM
        mean = (self.total_len / self.live if self.live else 1.0) or 1.0
        weight = long_weight(mean)
        counted: dict[int, float] | DenseScores
        # A slot is in one part of a word at most: the parts add up as the word would.
        if sum(len(docs) for _, parts, _ in info for docs, _ in parts) * _DENSE >= len(lens):
            # Most records touched: one float per slot (8 bytes) rather than a dict
            # entry (~100 bytes with its key and value): ~10 MB less at 100,000 records.
            counted = DenseScores(len(lens))
            dense = counted.scores
            for kp1, parts, _ in info:
                for docs, tfs in parts:
                    for d, tf in zip(docs, tfs, strict=True):
                        if fits is None or fits(d):
                            n = lens[d]
                            part = (
                                kp1
                                * tf
                                / (
                                    tf
                                    + k * (one_b + B * n / mean + weight * max(0.0, n / far - 1.0))
                                )
                            )
                            dense[d] = dense[d] + part
                    if release:
                        _let_go(docs)
        else:
            acc: dict[int, float] = {}
            counted, get = acc, acc.get
            for kp1, parts, _ in info:
                for docs, tfs in parts:
                    # What _norms holds, written out (see _length_term), in tenths.
                    for d, tf in zip(docs, tfs, strict=True):
                        if fits is None or fits(d):
                            n = lens[d]
                            part = (
                                kp1
                                * tf
                                / (
                                    tf
                                    + k * (one_b + B * n / mean + weight * max(0.0, n / far - 1.0))
                                )
                            )
                            acc[d] = get(d, 0.0) + part
                    if release:
                        _let_go(docs)
        if where.visible is None:
            if isinstance(counted, DenseScores):
                # The depth-th best (0 when fewer score at all: then every one scoring).
                leading = heapq.nlargest(depth, counted.scores)
                top = counted.at_least(leading[-1] if len(leading) == depth else 0.0)
            elif len(counted) > depth:
                theta = heapq.nlargest(depth, counted.values())[-1]
                top = [(d, v) for d, v in counted.items() if v >= theta]
            else:
                top = list(counted.items())
            top.sort(key=self._best_first())
            return top[:depth], fits or _anything, get_score(counted), None
        ok = self._scalar_test(where)
        assert ok is not None  # (a caller's test is never None)
        many = 4 * depth
        while True:
            if isinstance(counted, DenseScores):
                best = counted.nlargest(many, self.ages)
            else:
                ages = self.ages
                best = heapq.nlargest(
                    many, counted.items(), key=lambda kv: (kv[1], ages[kv[0]], kv[0])
                )
            shown = _first_seen(best, ok, depth)
            if len(shown) >= depth or many >= len(counted):
                return shown[:depth], ok, get_score(counted), None
            many *= 4

    def _bm25_small_compiled(
        self,
        info: list[tuple[float, list[tuple[Any, Any]], str]],
        where: Filter,
        depth: int,
        release: bool,
        lens: array[int],
    ) -> tuple[
        list[tuple[int, float]],
        Callable[[int], bool],
        Callable[[int], float],
        tuple[Any, Any] | None,
    ]:
        """:meth:`_bm25_small` with the compiled loops: every posting the filters let
        through summed into one float per slot, so a query of any size needs neither
        numpy nor a loop in Python; ``visible`` is asked of the best records only."""
        assert _compiled is not None
        counted = DenseScores(len(lens))
        mean = (self.total_len / self.live if self.live else 1.0) or 1.0
        weight = long_weight(mean)
        kept = self._kept(where)
        for kp1, parts, _ in info:
            for docs, tfs in parts:
                _compiled.add_by_length(
                    counted.scores,
                    lens,
                    docs,
                    tfs,
                    kp1,
                    10 * K1,
                    1 - B,
                    B,
                    mean,
                    LONG_FROM,
                    weight,
                    kept,
                )
                if release:
                    _let_go(docs)
        ok = self._test(kept, where.visible)
        if where.visible is None:
            flat = (counted.scores, kept)
            ages = self.column("ages")
            return _compiled.best(counted.scores, depth, ages), ok, get_score(counted), flat
        many = 4 * depth
        while True:
            best = _compiled.best(counted.scores, many, self.column("ages"))
            shown = _first_seen(best, ok, depth)
            if len(shown) >= depth or len(best) < many:
                return shown[:depth], ok, get_score(counted), None
            many *= 4

    def _kept(self, where: Filter) -> bytearray | None:
        """:meth:`_mask` without numpy, by the compiled loops: a byte per slot (None:
        every slot)."""
        assert _compiled is not None
        now = where.now if self.expiring else None  # nothing can have expired
        timed = where.since is not None or where.until is not None
        if where.kinds is None and where.session is None and not timed and now is None:
            if not where.without:
                return None
        allowed = None
        if where.kinds is not None:
            codes = {KIND_NAMES.index(k) for k in where.kinds}
            allowed = bytes(code in codes for code in range(256))
        kept = _compiled.keep_where(
            len(self.kinds),
            self.column("kinds") if allowed is not None else None,
            allowed,
            self.column("sessions") if where.session is not None else None,
            self.session_codes.get(where.session, -2) if where.session is not None else 0,
            self.column("times") if timed else None,
            where.since,
            where.until,
            self.column("expires") if now is not None else None,
            now,
        )
        for slot in where.without:
            if 0 <= slot < len(kept):
                kept[slot] = 0
        return kept

    def _scalar_test(self, where: Filter) -> Callable[[int], bool] | None:
        """:meth:`_mask` and ``visible`` as one test of a slot (None: every slot)."""
        kinds = None if where.kinds is None else {KIND_NAMES.index(k) for k in where.kinds}
        session = None
        if where.session is not None:
            session = self.session_codes.get(where.session, -2)
        since, until = where.since, where.until
        now = where.now if self.expiring else None  # nothing can have expired
        visible, without = where.visible, where.without
        if kinds is None and session is None and since is None and until is None:
            if now is None and visible is None and not without:
                return None
        # Only the columns the filters read: each is a copy of the saved file's bytes
        # (up to 800 KB at 100,000 records) in a process that has not read it yet.
        codes: Any = self.column("kinds") if kinds is not None else None
        sessions: Any = self.column("sessions") if session is not None else None
        times: Any = self.column("times") if since is not None or until is not None else None
        expires: Any = self.column("expires") if now is not None else None
        shown = self._test(None, visible) if visible is not None else None

        def ok(slot: int) -> bool:
            if kinds is not None and codes[slot] not in kinds:
                return False
            if slot in without:
                return False
            if session is not None and sessions[slot] != session:
                return False
            if since is not None or until is not None:
                at = times[slot]
                if not (since is None or at >= since) or not (until is None or at <= until):
                    return False  # (a record with no time, NaN, fails both: outside)
            if now is not None and not expires[slot] > now:
                return False
            return shown is None or shown(slot)

        return ok

    def _bm25(
        self,
        info: list[tuple[float, tuple[array[int], array[int]], str]],
        norms: Any,
        mask: Any,
        prune: bool,
        np: Any,
        depth: int,
    ) -> tuple[Any, tuple[Any, int] | None]:
        """BM25 by slot (0 where ``mask`` says no), term at a time, rarest first; and the
        cut, if one came: (the records in the running, the first term added to them only).

        Exact where it matters, cheaper where it cannot: once the ``DEPTH``-th best score
        so far is above what all the terms left could add together (each adds less than
        its ``kp1``), no record outside the running can reach the best ``DEPTH``, so the
        common terms left are added only for the records in the running. Every other
        record keeps a partial score, and the few the neighbour shares read later are
        completed then (:meth:`_complete`). When most records are still in the running,
        picking them out would cost more than it spares: every record is then scored in
        full, which ranks alike (those outside stay below the best ``DEPTH`` either
        way)."""
        size = len(self.kinds)
        # A record ``mask`` leaves out starts at -inf and stays below every record in.
        acc = np.zeros(size) if mask is None else np.where(mask, 0.0, -np.inf)
        rest = [0.0] * (len(info) + 1)
        for i in range(len(info) - 1, -1, -1):
            rest[i] = rest[i + 1] + info[i][0]
        live = None  # bool by slot: the records still in the running (None: all)
        cut: tuple[Any, int] | None = None
        for i, (kp1, (docs, tfs), _) in enumerate(info):
            slots = np.frombuffer(docs, dtype=np.int32)
            tf = np.frombuffer(tfs, dtype=np.int32)
            # No score is above the terms added so far (each adds under its kp1): while
            # the terms left add as much, the cut cannot apply, and no pass over every
            # record is paid to learn so.
            if prune and i and rest[i] < (rest[0] - rest[i]) * (1 + 1e-9):
                if rest[i] < (best := acc.max()):
                    found = self._contenders(acc, rest[i], best, np, depth)
                    live = None if found is False else found
                    prune = found is None  # False: too many in the running, for good
                    if live is not None:
                        cut = (live, i)
            if live is not None:
                keep = live.take(slots)
                slots, tf = slots[keep], tf[keep]
            # kp1 tf / (tf + norm), one term for all its records at once, each step the
            # same IEEE operation as written out (so the same bits), in place.
            gain = np.multiply(tf, kp1)
            part = norms.take(slots)
            part += tf
            gain /= part
            if len(slots) * _DENSE > size:
                # A term most records hold: summed into a fresh array then added whole
                # (0 + x is x exactly; a slot appears once per term).
                acc += np.bincount(slots, gain, size)
            else:
                acc[slots] += gain
        if mask is not None:
            acc[~mask] = 0.0
        return acc, cut

    def _bm25_compiled(
        self,
        info: list[tuple[float, tuple[array[int], array[int]], str]],
        mask: Any,
        np: Any,
        k: int,
        links: list[array[Any]] | None = None,
    ) -> tuple[Any, list[tuple[int, float]]]:
        """:meth:`_bm25` in one compiled pass, every posting summed (no cut: the pass
        costs less than finding the records in the running would), with the best ``k``
        as :meth:`_best` picks them first. With ``links`` (the slots before and after
        each), each window of scores stays in a buffer of the pass's own and the
        returned scores hold only the best ``k`` and the slots up to two links from
        them, the rest unwritten: 800 KB at 100k records that every query wrote and read
        again, pushing out of the caches what the rest of the search reads next.

        The pass sums a window of slots at a time and picks from each while its scores
        are still in the cache (at 100k records the scores fill 800 KB). It reads each
        word's slots in order: a word whose slots are not (a slot freed and taken again)
        has its postings put in order, once, which changes no score. It reads each
        slot's length term by the slot's length (:meth:`_by_length`) where it can."""
        acc = np.empty(len(self.kinds))
        words = [(kp1, docs, tfs) for kp1, (docs, tfs), _ in info]
        norms, lengths = self._length_terms()
        ages = self.column("ages")
        ordered: set[int] = set()
        while True:
            near = (links[0], links[1]) if links is not None else None
            found = _compiled.sum_best(acc, norms, words, k, mask, lengths, near, ages)
            if not isinstance(found, int):
                return acc, found
            if found in ordered:  # a slot twice in one word: summed as before, below
                break
            ordered.add(found)
            docs, tfs = self.post.put_in_order(info[found][2])
            words[found] = (words[found][0], docs, tfs)
        acc = np.zeros(len(self.kinds))
        norms = self._derive("norms", self._norms)
        for kp1, docs, tfs in words:
            _compiled.add_scaled(acc, norms, docs, tfs, kp1, mask)
        return acc, _compiled.best(acc, k, ages)

    def _complete(
        self,
        acc: Any,
        slots: list[int],
        info: list[tuple[float, tuple[array[int], array[int]], str]],
        norms: Any,
        mask: Any,
        cut: tuple[Any, int],
        np: Any,
    ) -> None:
        """Add to ``acc`` at ``slots`` outside the running the terms the cut kept from
        them, in the order :meth:`_bm25` adds terms, each the same IEEE operations: the
        scores it would have given them (a word's postings are in slot order, so each
        slot is found by a binary search)."""
        live, first = cut
        wanted = np.array(slots, dtype=np.intp)
        wanted = wanted[~live.take(wanted)]
        if mask is not None:
            wanted = wanted[mask.take(wanted)]  # left out: 0, as they are
        if not len(wanted):
            return
        wanted.sort()
        for kp1, (docs, tfs), _ in info[first:]:
            posted = np.frombuffer(docs, dtype=np.int32)
            at = np.searchsorted(posted, wanted)
            inside = at < len(posted)
            at, here = at[inside], wanted[inside]
            held = posted.take(at) == here
            at, here = at[held], here[held]
            tf = np.frombuffer(tfs, dtype=np.int32).take(at)
            gain = np.multiply(tf, kp1)
            part = norms.take(here)
            part += tf
            gain /= part
            acc[here] += gain

    def _contenders(self, acc: Any, left: float, best: float, np: Any, depth: int) -> Any:
        """The slots still in the running when the terms left add under ``left`` (bool by
        slot); None when the best ``depth`` could still change with any record, False
        when so many are in the running that picking them out would cost more than
        scoring every record (the query then stops trying: its terms left are its
        commonest)."""
        # The depth-th best is above ``left`` only if ``depth`` records are: one count
        # says so before any partition is paid for.
        size = len(acc)
        if np.count_nonzero(acc > left) < depth:
            return None
        reach = left * (1 + 1e-9)
        if np.count_nonzero(acc >= best - reach) * _WORTH > size:
            # Already too many within reach of the best score, let alone of the depth-th.
            return False
        theta = kth_best(acc, depth, np)
        if theta is None:  # cannot be: ``depth`` records score above ``left``
            return None
        running = np.flatnonzero(acc >= theta - reach)
        if len(running) * _WORTH > size:
            return False
        live = np.zeros(size, dtype=bool)
        live[running] = True
        return live

    def _best(
        self,
        acc: Any,
        mask: Any,
        visible: Callable[[str, str, str | None, str], bool] | None,
        np: Any,
        depth: int,
        ranked: list[tuple[int, float]] | None = None,
    ) -> tuple[list[tuple[int, float]], Callable[[int], bool]]:
        """The best ``DEPTH`` (slot, score) by ``acc`` that the caller may see, best first
        (ties: the higher age, then slot), and the test of which slots ``mask`` and ``visible`` let
        through. ``ranked``: the first pick, made already (by :meth:`_bm25_compiled`)."""
        ok = self._test(mask, visible)
        # The best k (ties at the k-th score all kept), then the few sorted; while the
        # caller may not see enough of them, k grows.
        k = depth if visible is None else 4 * depth
        loops = _compiled
        while True:
            if loops is not None:
                if ranked is None:
                    ranked = loops.best(acc, k, self.column("ages"))
                top = ranked if visible is None else _first_seen(ranked, ok, depth)
                if len(top) >= depth or len(ranked) < k:
                    return top[:depth], ok
                k *= 4
                ranked = None
                continue
            theta, chosen = best_slots(acc, k, np)
            ranked = sorted(
                zip(chosen.tolist(), acc.take(chosen).tolist(), strict=True),
                key=self._best_first(),
            )
            top = ranked if visible is None else _first_seen(ranked, ok, depth)
            if len(top) >= depth or theta is None:
                return top[:depth], ok
            k *= 4

    def _session_scores(self, terms: list[str], top: list[tuple[int, float]]) -> dict[int, float]:
        """The session field's BM25 score of each session the observations among
        ``top`` belong to ({} when none scores)."""
        columns = self._arrays("sessions", "kinds") if _compiled is not None else None
        if columns is None:
            of = self.sessions
            sessions = {of[d] for d, _ in top if of[d] >= 0 and self.kinds[d] == _OBSERVATION}
            if not sessions:
                return {}
        sn, total = self._derive("sessions", self._session_totals)
        ten_k1 = 10 * K1
        c1, c2 = ten_k1 * (1 - B), ten_k1 * B / total
        info: list[tuple[float, Any]] = []
        for term in terms:
            post = self.sess_post.get(term)
            if post:
                df = len(post)
                kp1 = math.log(1 + (sn - df + 0.5) / (df + 0.5)) * (K1 + 1)
                # For the compiled sums, the counts as one array by session where they
                # are kept: a dict's entries lie all over the heap, and ~100 sessions x
                # 4 words of them were a fifth of a search on short notes, each read a
                # miss of the caches.
                info.append((kp1, post if columns is None else self._session_counts(term, post)))
        if columns is not None and _compiled is not None:
            # The same sums in the same order, without a dict lookup in Python each.
            in_session, kinds = columns
            return _compiled.session_sums(
                top, in_session, kinds, _OBSERVATION, info, c1, c2, self.session_lens
            )
        out = {}
        for s in sessions:
            value = 0.0
            for kp1, post in info:
                tf = post.get(s)
                if tf:
                    value += kp1 * tf / (tf + c1 + c2 * self.session_lens[s])
            out[s] = value
        return out if any(out.values()) else {}

    def _norms(self) -> Any:
        """BM25's length term by slot, in tenths (:func:`_length_term`; kept until the
        records change: a term's score is then one gather and a division)."""
        np = _numpy()
        mean = self.total_len / self.live if self.live else 1.0
        return _length_term(np.frombuffer(self.column("lens"), dtype=np.int64), mean)

    def _by_length(self) -> tuple[Any, Any] | None:
        """What :meth:`_norms` holds, as a table by length and each slot's length in
        two bytes (None when a length does not fit in them): the summing pass then reads
        a quarter of the bytes it would read from one float per slot. Each entry is
        worked out as :meth:`_norms` works out a slot's, so the scores are the same to
        the bit."""
        np = _numpy()
        lens = np.frombuffer(self.column("lens"), dtype=np.int64)
        if not len(lens) or lens.min() < 0 or lens.max() > _LONGEST:
            return None
        mean = self.total_len / self.live if self.live else 1.0
        return _length_term(np.arange(int(lens.max()) + 1), mean), lens.astype(np.uint16)

    def _session_counts(self, term: str, post: dict[int, int]) -> Any:
        """``term``'s counts by session (``post``) as one int64 array indexed by session,
        made once and kept in step with ``post`` as records come and go (``post``
        itself when that array would be larger than it is worth keeping, or where
        numpy is not loaded)."""
        found = self._by_session.get(term)
        if found is not None:
            return found
        sessions = len(self.session_ids)
        # A process that has not loaded numpy (a CLI call: one search) reads the dict.
        if sessions > _BY_SESSION_MOST or "numpy" not in sys.modules:
            return post
        np = _numpy()
        codes = np.fromiter(post, dtype=np.intp, count=len(post))
        if len(codes) and (codes.min() < 0 or codes.max() >= sessions):
            return post  # a damaged saved file's codes: the dict's lookups never misread
        counts = np.zeros(sessions, dtype=np.int64)
        counts[codes] = np.fromiter(post.values(), dtype=np.int64, count=len(post))
        if self._by_session_bytes + counts.nbytes > _BY_SESSION_BYTES:
            self.drop_session_counts()  # many words asked since: start again
        self._by_session[term] = counts
        self._by_session_bytes += counts.nbytes
        return counts

    def drop_session_counts(self) -> None:
        """Let go of every word's counts kept as an array by session (made again when a
        query next asks): after a change their codes or counts no longer follow."""
        self._by_session.clear()
        self._by_session_bytes = 0

    def _recount(self, term: str, session: int, tenths: int) -> None:
        """``term``'s kept counts by session (if kept) as its dict now holds them, after
        a record added (``tenths`` > 0) or taken out (< 0) ``tenths`` in ``session``: a
        count that falls to 0 or under is gone from the dict, and 0 here. A session past
        the array's end lets the array go (it is made again when next asked for)."""
        counts = self._by_session.get(term)
        if counts is None:
            return
        if session < len(counts):
            left = int(counts[session]) + tenths
            counts[session] = left if left > 0 else 0
        else:
            del self._by_session[term]
            self._by_session_bytes -= counts.nbytes

    def _session_totals(self) -> tuple[int, float]:
        """(sessions holding observations, their mean length in tenths)."""
        sn = sum(1 for c in self.session_docs if c > 0) or 1
        return sn, sum(self.session_lens) / sn or 1.0

    def ready(self) -> None:
        """Work out now what the first query would otherwise (a long-lived process's
        head start: :mod:`.warm`): the kinds' member words, and where a query's sums will
        want numpy (more than ``SMALL // 4`` records: a few common words then read more
        than ``SMALL`` postings), numpy itself and each record's length term; and the
        sessions' slots, which the hits' titles read."""
        _kinds()
        if "sessions" in self.table_codes:
            self.slots_of("sessions")
        if self.live > SMALL // 4:
            _numpy()
            if _compiled is None:
                self._derive("norms", self._norms)
            else:
                self._length_terms()

    def _length_terms(self) -> tuple[Any, Any]:
        """What the compiled pass reads a slot's length term from: the table by length
        and each slot's length (:meth:`_by_length`), else the term per slot and None."""
        by_length = self._derive("by length", self._by_length)
        return by_length or (self._derive("norms", self._norms), None)

    def kept(self, key: str) -> dict[Any, Any]:
        """A dict for a caller to keep what it works out from the records in (its own
        ``key``), found empty again once the records change."""
        found: dict[Any, Any] = self._derive(("kept", key), dict)
        return found

    def _derive(self, key: object, make: Callable[[], Any]) -> Any:
        """``make()``, remembered until the records change."""
        found = self._derived.get(key)
        if found is not None and found[0] == self.generation:
            return found[1]
        value = make()
        self._derived[key] = (self.generation, value)
        return value

    def _proximity(
        self,
        final: dict[int, float],
        idf: list[tuple[str, float]],
        weighted: list[tuple[str, float]],
        wanted: int | None = None,
    ) -> None:
        """Consecutive query words side by side in one field add ``PROXIMITY`` x the
        rarer word's idf (half when in the other order), for the best ``PROXIMITY_DEPTH``.

        ``wanted``: only the best ``wanted`` scores will be read. A candidate that the
        largest bonus could not lift to the ``wanted``-th score is then left without
        its bonus: the best ``wanted`` and their scores are the same, for less reading
        of the candidates' fields."""
        order = [t for t, _ in weighted]
        weight_of = dict(idf)
        pairs = []
        for a, b in zip(order, order[1:], strict=False):
            least = min(weight_of.get(a, 0.0), weight_of.get(b, 0.0))
            if least:  # a word no record holds adds nothing
                pairs.append((f" {a} {b} ", f" {b} {a} ", least))
        if not pairs:
            return
        k = max(PROXIMITY_DEPTH, wanted or 0)
        # The bar's rank (0: no bar), with room for the sums' rounding: whoever is left
        # out cannot reach it.
        at = wanted if wanted is not None and 0 < wanted < len(final) else 0
        most = PROXIMITY * sum(least for _, _, least in pairs) if at else 0.0
        fields = self.fields
        placed = fields.in_place() if _compiled is not None and not fields.over else None
        chosen: list[int]
        encoded = None
        if placed is not None:
            # The same choice and sums in one compiled call, while the rows are the saved
            # file's; it hands back the chosen when one is not.
            encoded = _encoded(pairs)
            ages = self.column("ages")
            found = _compiled.proximity(
                final, k, at, most, PROXIMITY_DEPTH, PROXIMITY, *placed, encoded, ages
            )
            if found is None:
                return
            chosen = found
        else:
            # Of equal scores, the later made (as everywhere): a choice among ties that
            # hangs neither on the order the candidates were gathered in nor on slots.
            best = self._best_of(final, k)
            if at:
                bar = best[at - 1][0] - most - 1e-9 * (abs(best[at - 1][0]) + most)
                chosen = [d for score, d in best[:PROXIMITY_DEPTH] if score >= bar]
            else:
                chosen = [d for _, d in best[:PROXIMITY_DEPTH]]
        for d, bonus in zip(chosen, self._pair_bonuses(chosen, pairs, encoded), strict=True):
            if bonus:
                final[d] += PROXIMITY * bonus

    def _pair_bonuses(
        self,
        slots: list[int],
        pairs: list[tuple[str, str, float]],
        encoded: list[tuple[bytes, bytes, float]] | None = None,
    ) -> list[float]:
        """Each slot's sum of ``least`` for the ``pairs`` side by side in one of its
        fields, field by field (half for the other order). Rows read in place from the
        saved file are summed by the compiled loops, without decoding them (``encoded``:
        the pairs as they read them, when made already)."""
        fields = self.fields
        out = [0.0] * len(slots)
        rest: list[int] | range = range(len(slots))
        placed = fields.in_place() if _compiled is not None else None
        if placed is not None:
            saved, rest = fields.saved_apart(slots)
            if saved:
                texts, start, offsets = placed
                encoded = encoded or _encoded(pairs)
                if not rest:  # every one a saved row (a loaded index, before edits)
                    bonuses: list[float] = _compiled.near_pairs(
                        texts, start, offsets, slots, encoded
                    )
                    return bonuses
                found = _compiled.near_pairs(
                    texts, start, offsets, [slots[i] for i in saved], encoded
                )
                for i, bonus in zip(saved, found, strict=True):
                    out[i] = bonus
        for i in rest:
            out[i] = pair_bonus(fields[slots[i]], pairs)
        return out

    def query_words(self, query: str) -> frozenset[str]:
        """The terms a record may hold to match ``query`` by its own words: the query's
        terms and the members of the kinds it names (worked out once for many records:
        see :meth:`own_match`)."""
        weighted, members = self._own_and_members(query)
        return frozenset(t for t, _ in (*weighted, *members))

    def own_match(self, slot: int, words: frozenset[str]) -> bool:
        """Whether the record's own words hold any of ``words`` (:meth:`query_words`; a
        note can also be found through its neighbours or the note before it)."""
        return any(words.intersection(found) for _, found in decode_fields(self.fields[slot]))

    def search(
        self,
        query: str,
        limit: int,
        where: Filter = Filter(),  # noqa: B008
        small: int = SMALL,
        terms: list[tuple[str, float]] | None = None,
    ) -> list[Scored]:
        """The best ``limit`` records, best first (ties: the later made first, by
        their ages); ``small`` and ``terms`` as for :meth:`scores`."""
        # A caller asking for more than the usual depth gets what it asked for.
        found = self.scores(query, where, max(DEPTH, limit), small, terms, limit)
        best = self._best_of(found, limit)
        return self.scored_many([(d, s) for s, d in best if s > 0])

    def _best_of(self, scores: dict[int, float], k: int) -> list[tuple[float, int]]:
        """The ``k`` best (score, slot) of ``scores``, best first (ties: the higher age,
        then the higher slot)."""
        if _compiled is not None:
            return _compiled.best_of(scores, k, self.column("ages"))
        ages = self.ages
        best = heapq.nlargest(k, ((v, ages[d], d) for d, v in scores.items()))
        return [(v, d) for v, _, d in best]

    def _best_first(self) -> Callable[[tuple[int, float]], tuple[float, int, int]]:
        """The sort key putting (slot, score) pairs best first: by score, then age,
        then slot, each the higher first."""
        ages = self.ages

        def key(item: tuple[int, float]) -> tuple[float, int, int]:
            return -item[1], -ages[item[0]], -item[0]

        return key

    def scored_many(self, found: list[tuple[int, float]]) -> list[Scored]:
        """:meth:`scored` of each (slot, score), their texts read together."""
        slots = [d for d, _ in found]
        refs, titles = self.refs.many(slots), self.titles.many(slots)
        sessions, kinds, ids = self.sessions, self.kinds, self.session_ids
        tables, names = self.tables, self.table_names
        out = []
        for (d, score), ref, title in zip(found, refs, titles, strict=True):
            session = sessions[d]
            out.append(
                Scored(
                    d,
                    ref,
                    KIND_NAMES[kinds[d]],
                    title,
                    ids[session] if session >= 0 else None,
                    score,
                    names[tables[d]],
                )
            )
        return out

    def scored(self, slot: int, score: float) -> Scored:
        """What a hit needs of ``slot``, with its ``score``."""
        return self.scored_many([(slot, score)])[0]

    # ------------------------------------------------------------------ persistence

    def file_shrunk(self) -> bool:
        """Whether the saved file this index reads in place is now shorter than its
        mapping: cut in place by something other than memwork (which replaces the file
        by a rename). Reading a page past its new end would end the process (SIGBUS)."""
        mapped = self.mapped
        if mapped is None:
            return False
        try:
            return mapped.size() < len(mapped)  # (the file's size now, by its descriptor)
        except (OSError, ValueError):  # a closed map: nothing is read from it
            return False

    def state(self) -> dict[str, Any]:
        """What the index holds, independent of slot numbers (tests compare a rebuilt
        index with an incrementally kept one)."""
        by_slot = {}
        for slot in range(len(self.kinds)):
            if self.kinds[slot] >= 0:
                key = (self.table_names[self.tables[slot]], self.refs[slot])
                by_slot[slot] = key
        postings = {}
        for term in sorted(self.post.terms()):
            docs, tfs = self.post.get(term) or (array("i"), array("i"))
            postings[term] = sorted((by_slot[s], tf) for s, tf in zip(docs, tfs, strict=True))
        sessions = {}
        for term in sorted(self.sess_post.terms()):
            found = self.sess_post.get(term) or {}
            sessions[term] = sorted((self.session_ids[s], tf) for s, tf in found.items())
        return {
            "records": sorted(
                (
                    key,
                    self.titles[s],
                    self.fields[s],
                    by_slot.get(self.prev[s]),
                    by_slot.get(self.next[s]),
                    self.lens[s],
                    self.asks[s],
                    self.ages[s],
                )
                for s, key in by_slot.items()
            ),
            "postings": postings,
            "sessions": sessions,
            "totals": (self.total_len, self.live),
            "tables": dict(sorted(self.table_keys.items())),
        }


_OBSERVATION = KIND_NAMES.index("observation")


def long_weight(mean: float) -> float:
    """What each ``LONG_FROM`` past ``LONG_FROM`` adds to a record's length term, in a
    store whose records average ``mean`` tenths: ``LONG``, shrunk in proportion where
    the average itself runs past ``LONG_FROM``."""
    return LONG * min(1.0, LONG_FROM / (mean or 1.0))


def _length_term(lens: Any, mean: float) -> Any:
    """BM25's length term for an array of lengths, in tenths: ``k1 (1 - b + b len /
    mean)``, plus :func:`long_weight` for each ``LONG_FROM`` a length runs past
    ``LONG_FROM``. The plain-Python and compiled sums write it out as the same
    operations, in the same order, so every way of summing gives the same bits."""
    np = _numpy()
    weight = long_weight(mean)
    return (
        10
        * K1
        * (1 - B + B * lens / (mean or 1.0) + weight * np.maximum(0.0, lens / LONG_FROM - 1.0))
    )


def plain_python(postings: int, small: int = SMALL) -> bool:
    """Whether a query that reads ``postings`` postings is scored without numpy."""
    return postings <= small and "numpy" not in sys.modules


def _anything(slot: int) -> bool:
    return True


def _each(test: Callable[[int], Any]) -> Callable[[list[int]], list[Any]]:
    """``test`` asked of each slot of a list."""

    def each(slots: list[int]) -> list[Any]:
        return [test(slot) for slot in slots]

    return each


def _first_seen(
    ranked: list[tuple[int, float]], ok: Callable[[int], bool], depth: int
) -> list[tuple[int, float]]:
    """The first ``depth`` of ``ranked`` that ``ok`` lets through: it is asked no
    further (under isolation each answer may read a record)."""
    return list(islice((kv for kv in ranked if ok(kv[0])), depth))


def _taken(values: Any) -> Callable[[list[int]], list[Any]]:
    """A numpy array's values at a list of slots, as Python values."""

    def taken(slots: list[int]) -> list[Any]:
        return values.take(slots).tolist() if slots else []

    return taken


def _everything(slots: list[int]) -> list[bool]:
    return [True] * len(slots)


def _let_go(docs: Any) -> None:
    """Let the pages of a saved file that ``docs`` (a view of the mapped file) was read
    from go from this process's memory. They stay in the system's cache and come back
    if read again; a plain-Python query reads one word's postings after another, so a
    CLI search holds one word's pages at a time instead of every word's (~4 MB for a
    query of common words at 100,000 long notes)."""
    owner = getattr(docs, "obj", None)
    if isinstance(owner, mmap.mmap) and _DONTNEED is not None:
        owner.madvise(_DONTNEED)


#: Where the system has it (not on Windows): pages a process lets go of.
_DONTNEED: int | None = getattr(mmap, "MADV_DONTNEED", None)


class _Kinds(NamedTuple):
    """:mod:`.categories` as the queries read it."""

    by_stem: dict[str, tuple[str, ...]]  # a kind's stem: its members' stems
    by_word: dict[str, tuple[str, ...]]  # a kind matched as written: its members' stems
    word_stems: frozenset[str]  # the stems of the kinds matched as written


@functools.cache
def _kinds() -> _Kinds:
    """The kinds and their members, worked out on the first query."""
    by_word = word_members(wordlib.stem)
    return _Kinds(member_stems(wordlib.stem), by_word, frozenset(wordlib.stem(w) for w in by_word))


def _numpy() -> Any:
    """numpy, imported when the first query needs it (a CLI run that only writes never
    pays for it)."""
    import numpy

    return numpy


def _encoded(pairs: list[tuple[str, str, float]]) -> list[tuple[bytes, bytes, float]]:
    """Proximity pairs (" a b ", " b a ", least) as the compiled loops read them."""
    return [(encode(f[1:-1]), encode(b[1:-1]), least) for f, b, least in pairs]


def fingerprint(unit: Unit) -> int:
    """A stable 63-bit digest of everything the index keeps of a unit."""
    digest = blake2b(marshal.dumps(tuple(unit)), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def params_key() -> tuple[object, ...]:
    """The ranking constants a saved index was built with (a change rebuilds it)."""
    from . import extract as records

    stop = " ".join(sorted(wordlib.STOP_WORDS)).encode("utf-8")
    return (
        K1,
        B,
        ECHO,
        PREV_TURN,
        ASKED_TURN,
        blake2b(stop, digest_size=8).hexdigest(),
        wordlib.VERSION,
        records.W_MAIN,
        records.W_LABEL,
        records.W_SIDE,
        records.W_TAG,
        records.W_ID,
        KIND_NAMES,
    )
