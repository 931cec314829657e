"""Values of a saved recall index, read in place from the file's bytes.

A saved index of 100,000 long notes is ~220 MB: the texts, fields and references of
every record and every word's postings. Decoding it whole made each CLI ``memwork
search`` read and hold all of it (~470 MB at its peak) to answer from a few words'
postings and ten titles. The file is instead mapped, and these types read what a
query asks for, when it asks: one record's text, one word's postings.

Both take writes on top of what they read (a process catching up with the store),
held beside the mapped bytes, which are never written. The buffer may be a ``bytes``
object as well as an ``mmap``: both slice to ``bytes``.
"""

from __future__ import annotations

import contextlib
import os
import struct
from array import array
from collections.abc import Iterator
from typing import Any, Protocol

_CODEC = ("utf-8", "surrogatepass")


class Buffer(Protocol):
    """What the saved file is read from: ``bytes`` or a read-only ``mmap``."""

    def __getitem__(self, key: slice, /) -> bytes: ...

    def __len__(self) -> int: ...


def encode(text: str) -> bytes:
    """``text`` as the file holds it (UTF-8, lone surrogates kept)."""
    return text.encode(*_CODEC)


class FileReader:
    """A saved file read with ``pread``, slice by slice: a :class:`Buffer` whose reads
    never enter the process's resident memory as mapped pages.

    A query reads rows of text and their offsets here and there in a file of 100 MB or
    more. Each page of a mapping it touches makes the system map the pages around it
    too (64 KB at a time): a one-call process (the CLI) that read a few hundred rows
    held ~10 MB of the file's pages. Read this way, it holds only the bytes it asked
    for, for as long as it uses them."""

    __slots__ = ("fd", "size")

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size  # the reader owns ``fd`` and closes it

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key: slice, /) -> bytes:
        start, stop, _ = key.indices(self.size)
        if stop <= start:
            return b""
        data = os.pread(self.fd, stop - start, start)
        if len(data) != stop - start:  # the file is never cut short in place: damage
            raise ValueError("the saved file ends before a row it lists")
        return data

    def read_into(self, into: memoryview, start: int) -> None:
        """Fill ``into`` with the file's bytes from ``start`` on."""
        done = 0
        while done < len(into):
            got = os.preadv(self.fd, [into[done:]], start + done)
            if got <= 0:  # the file is never cut short in place: damage
                raise ValueError("the saved file ends before a column it lists")
            done += got

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        with contextlib.suppress(OSError):
            self.close()


class Offsets:
    """A saved run of little-endian int64 offsets, read from a :class:`FileReader`
    (what ``memoryview.cast("q")`` of a mapping gives in place), a block at a time:
    a catch-up reads the rows of a table one after another, and one ``pread`` per
    row cost it thousands of system calls."""

    __slots__ = ("reader", "start", "count", "_first", "_block")

    #: Offsets read at once (4 KB).
    BLOCK = 512

    def __init__(self, reader: FileReader, start: int, length: int) -> None:
        self.reader, self.start, self.count = reader, start, length // 8
        self._first = 0
        self._block: tuple[int, ...] = ()

    def __len__(self) -> int:
        return self.count

    def _load(self, i: int) -> None:
        first = i - i % self.BLOCK
        last = min(self.count, first + self.BLOCK + 1)  # one more: a row's end
        data = self.reader[self.start + 8 * first : self.start + 8 * last]
        self._first, self._block = first, struct.unpack(f"<{last - first}q", data)

    def __getitem__(self, i: int, /) -> int:
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError("offset out of range")
        if not self._first <= i < self._first + len(self._block):
            self._load(i)
        return self._block[i - self._first]

    def raw(self, first: int) -> bytes:
        """Offsets ``first`` to the last, as the file holds them."""
        at = self.start + 8 * max(0, first)
        return self.reader[at : self.start + 8 * self.count]

    def pair(self, i: int) -> tuple[int, int]:
        """Offsets ``i`` and ``i + 1``."""
        if not 0 <= i < self.count - 1:
            raise IndexError("offset out of range")
        if not self._first <= i < self._first + len(self._block) - 1:
            self._load(i)
        at = i - self._first
        return self._block[at], self._block[at + 1]


def positions(values: array[Any], value: int) -> list[int]:
    """The indexes of ``value`` in an integer array, found by a search of its bytes, a
    block at a time (a copy of a whole column would be as big as the column); a match
    that does not start on an element is a coincidence of two neighbours. A block ends
    on an element, so no element is cut between two."""
    width = values.itemsize
    needle = array(values.typecode, [value]).tobytes()
    step = 65_536 // width
    found = []
    for first in range(0, len(values), step):
        data = values[first : first + step].tobytes()
        at = data.find(needle)
        while at >= 0:
            if at % width:
                at = data.find(needle, at + 1)
            else:
                found.append(first + at // width)
                at = data.find(needle, at + width)
    return found


class SavedNumbers:
    """A saved number column (``array`` typecode ``code``) read from a
    :class:`FileReader` a block at a time, with the writes of a catch-up held beside it:
    values set at saved slots, and slots appended after them.

    A one-call process (the CLI) reads a few slots of most columns: the best records'
    sessions and neighbours, a new note's neighbour. Read whole, each column of
    100,000 records is 400-800 KB more of its memory, and a catch-up that appends one
    note used to read all nine. A loop over every slot asks for the column whole
    instead (:meth:`whole`); from then on this object reads and writes that array, so
    a reference taken before stays right."""

    __slots__ = ("reader", "start", "code", "count", "over", "tail", "_first", "_block", "_whole")

    #: Numbers read at once.
    BLOCK = 512
    #: Numbers searched at once by :meth:`positions` (64 KB of int32).
    SCAN = 16_384

    def __init__(self, reader: FileReader, start: int, length: int, code: str) -> None:
        self.reader, self.start, self.code = reader, start, code
        self.count = length // array(code).itemsize
        self.over: dict[int, int | float] = {}
        self.tail: array[Any] = array(code)
        self._first = 0
        self._block: array[Any] = array(code)
        self._whole: array[Any] | None = None

    def __len__(self) -> int:
        whole = self._whole
        return len(whole) if whole is not None else self.count + len(self.tail)

    def __getitem__(self, i: int, /) -> int | float:
        whole = self._whole
        if whole is not None:
            return whole[i]  # type: ignore[no-any-return]
        count = self.count
        if i < 0:
            i += count + len(self.tail)
        if i >= count:
            return self.tail[i - count]  # type: ignore[no-any-return]
        if i < 0:
            raise IndexError("slot out of range")
        over = self.over
        if over and i in over:
            return over[i]
        if not self._first <= i < self._first + len(self._block):
            first = i - i % self.BLOCK
            self._first, self._block = first, self._read(first, min(count, first + self.BLOCK))
        return self._block[i - self._first]  # type: ignore[no-any-return]

    def __setitem__(self, i: int, value: int | float, /) -> None:
        whole = self._whole
        if whole is not None:
            whole[i] = value
            return
        count = self.count
        if i < 0:
            i += count + len(self.tail)
        if i >= count:
            self.tail[i - count] = value
        elif i < 0:
            raise IndexError("slot out of range")
        else:
            self.over[i] = value

    def append(self, value: int | float, /) -> None:
        if self._whole is not None:
            self._whole.append(value)
        else:
            self.tail.append(value)

    def _read(self, first: int, last: int) -> array[Any]:
        width = self._block.itemsize
        found: array[Any] = array(self.code)
        found.frombytes(self.reader[self.start + width * first : self.start + width * last])
        return found

    def positions(self, value: int) -> list[int]:
        """The slots holding ``value``, in order, a block of the file at a time."""
        if self._whole is not None:
            return positions(self._whole, value)
        over = self.over
        found: list[int] = []
        for first in range(0, self.count, self.SCAN):
            block = self._read(first, min(self.count, first + self.SCAN))
            found += [first + at for at in positions(block, value) if first + at not in over]
        found += [i for i, v in over.items() if v == value]
        found.sort()
        found += [self.count + at for at in positions(self.tail, value)]
        return found

    def whole(self) -> array[Any]:
        """The column as one array, with every write made to it; this object reads and
        writes that array from now on."""
        if self._whole is None:
            column: array[Any] = array(self.code, [0]) * self.count
            if self.count:
                self.reader.read_into(memoryview(column).cast("B"), self.start)
            for i, v in self.over.items():
                column[i] = v
            column.extend(self.tail)
            self._whole = column
            self.over, self.tail, self._block = {}, array(self.code), array(self.code)
        return self._whole


def offset_bytes(offsets: memoryview | Offsets, first: int) -> bytes | memoryview:
    """Offsets ``first`` to the last as the file holds them (little-endian int64)."""
    if isinstance(offsets, Offsets):
        return offsets.raw(first)
    return offsets[first:].cast("B")


class TextRows:
    """Saved texts by row: one run of bytes and where each row starts (``offsets``
    holds one more entry than there are rows). ``mapped``, when given, is what
    :meth:`view` reads in place (``buf`` then reads by ``pread``)."""

    __slots__ = ("buf", "start", "offsets", "_view", "mapped", "_span_at", "_span")

    #: Bytes of text read at once through a :class:`FileReader` (rows read one after
    #: another, as a catch-up reads a table's references, come from one read).
    SPAN = 16384

    def __init__(
        self,
        buf: Buffer,
        start: int,
        offsets: memoryview | Offsets,
        mapped: Buffer | None = None,
    ) -> None:
        self.buf, self.start, self.offsets = buf, start, offsets
        self.mapped = buf if mapped is None else mapped
        self._view: memoryview | None = None
        self._span_at = 0
        self._span = b""

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def _bounds(self, row: int) -> tuple[int, int]:
        offsets = self.offsets
        if isinstance(offsets, Offsets):
            return offsets.pair(row)
        return offsets[row], offsets[row + 1]

    def __getitem__(self, row: int) -> str:
        at = self.start
        first, last = self._bounds(row)
        if last < first:
            raise ValueError("a saved row ends before it starts")
        if not isinstance(self.buf, FileReader):
            return str(self.buf[at + first : at + last], *_CODEC)
        begin, end = at + first, at + last
        held = self._span_at
        if not (held <= begin and end <= held + len(self._span)):
            stop = min(len(self.buf), max(end, begin + self.SPAN))
            self._span_at, self._span = begin, self.buf[begin:stop]
            held = begin
        return str(self._span[begin - held : end - held], *_CODEC)

    def in_place(self) -> tuple[Buffer, int, memoryview] | None:
        """(the mapped bytes, where the rows start, the offsets) when both are read in
        place, for a compiled reader of many rows; None when read by ``pread``."""
        if isinstance(self.buf, FileReader) or isinstance(self.offsets, Offsets):
            return None
        return self.buf, self.start, self.offsets

    def span(self, first: int, last: int) -> bytes:
        """Rows ``first`` to ``last`` (excluded), as the file holds them."""
        at, offsets = self.start, self.offsets
        if last == first + 1:
            begin, end = self._bounds(first)
        else:
            begin, end = offsets[first], offsets[last]
        return self.buf[at + begin : at + end]

    def view_span(self, first: int, last: int) -> memoryview:
        """Rows ``first`` to ``last`` (excluded) in place: no copy."""
        if self._view is None:
            self._view = memoryview(self.mapped)  # type: ignore[arg-type]
        at, offsets = self.start, self.offsets
        return self._view[at + offsets[first] : at + offsets[last]]

    def view(self, row: int) -> memoryview:
        """Row ``row`` in place: no copy (its bytes stay the file's pages)."""
        if self._view is None:
            self._view = memoryview(self.mapped)  # type: ignore[arg-type]
        at = self.start
        first, last = self._bounds(row)
        if last < first:
            raise ValueError("a saved row ends before it starts")
        return self._view[at + first : at + last]


#: Terms whose rows :meth:`TermTable.row_of` remembers at most (~5 MB at the most).
_ROWS_KEPT = 50_000


class TermTable:
    """Saved words, sorted by their bytes, each with its bytes of postings. Each word's
    row ends in a newline (no word holds one), so all of them decode in one step."""

    __slots__ = ("words", "data", "_rows")

    def __init__(self, words: TextRows, data: TextRows) -> None:
        self.words, self.data = words, data
        # The row found for each term asked (-1: none). A saved table never changes, so
        # neither does an answer; a question naming a kind asks for its members, most
        # of them absent, each a binary search of ~17 steps in Python otherwise.
        self._rows: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.words)

    def find(self, word: bytes) -> int:
        """The row of ``word`` (its encoded form), or -1."""
        word += b"\n"  # a word sorts before its longer neighbours with the newline too
        row = self.before(word)
        return row if row < len(self.words) and self.words.span(row, row + 1) == word else -1

    def before(self, word: bytes) -> int:
        """How many saved words sort before ``word`` (a word's row: its bytes and the
        newline)."""
        words = self.words
        lo, hi = 0, len(words)
        while lo < hi:
            mid = (lo + hi) // 2
            if words.span(mid, mid + 1) < word:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def row_of(self, term: str) -> int:
        """:meth:`find` for a term (its text), remembered."""
        rows = self._rows
        row = rows.get(term)
        if row is None:
            if len(rows) >= _ROWS_KEPT:
                rows.clear()  # a long-lived process asked about many words: start again
            row = rows[term] = self.find(encode(term))
        return row

    def all_words(self) -> list[str]:
        """Every saved word, in order."""
        n = len(self.words)
        return str(self.words.span(0, n), *_CODEC).split("\n")[:-1] if n else []

    def postings(self, row: int) -> memoryview:
        """A word's postings in place (8-aligned: every word's run is whole int32 pairs,
        and the section starts aligned)."""
        return self.data.view(row)


class TermBytes:
    """term → its postings' bytes: the saved ones, read on demand, and those set since.

    A word is in ``extra`` (set since), or in the saved table unless ``gone`` names it;
    ``gone`` only ever holds saved words. A fresh index has no table: a dict, then.
    """

    __slots__ = ("table", "gone", "extra")

    def __init__(self, table: TermTable | None = None) -> None:
        self.table = table
        self.gone: set[str] = set()
        self.extra: dict[str, bytes] = {}

    def _saved(self, term: str) -> int:
        table = self.table
        if table is None or term in self.gone:
            return -1
        return table.row_of(term)

    def __contains__(self, term: object) -> bool:
        return term in self.extra or (isinstance(term, str) and self._saved(term) >= 0)

    def __len__(self) -> int:
        saved = len(self.table) - len(self.gone) if self.table is not None else 0
        return len(self.extra) + saved

    def __iter__(self) -> Iterator[str]:
        yield from self.extra
        table, gone = self.table, self.gone
        if table is not None:
            for term in table.all_words():
                if term not in gone:
                    yield term

    def __setitem__(self, term: str, packed: bytes) -> None:
        if term not in self.extra and self._saved(term) >= 0:
            self.gone.add(term)
        self.extra[term] = packed

    def pop(self, term: str, default: bytes | None = None) -> bytes | memoryview | None:
        """Take ``term`` out; its bytes (a saved word's in place), or ``default``."""
        found = self.extra.pop(term, None)
        if found is not None:
            return found
        row = self._saved(term)
        if row < 0:
            return default
        self.gone.add(term)
        assert self.table is not None
        return self.table.postings(row)

    def restore(self, term: str) -> None:
        """Let the saved row serve ``term`` again (taken out with :meth:`pop` and never
        changed since)."""
        if term not in self.extra:  # bytes set since stay what the word holds
            self.gone.discard(term)

    def copy(self) -> TermBytes:
        """A copy later changes to this one do not reach (the saved bytes are shared)."""
        out = TermBytes(self.table)
        out.gone = set(self.gone)
        out.extra = dict(self.extra)
        return out

    def sorted_runs(
        self,
    ) -> Iterator[tuple[int, int] | tuple[bytes, bytes | memoryview]]:
        """:meth:`sorted_items`, with each run of saved words that nothing set or took
        out since as one ``(first row, last row excluded)``: a save then copies the
        run's words and postings as the file holds them, not word by word."""
        extra = sorted((encode(term) + b"\n", term) for term in self.extra)
        table = self.table
        if table is None:
            for word, term in extra:
                yield word, self.extra[term]
            return
        skipped = sorted({row for row in map(table.row_of, self.gone) if row >= 0})
        # Where each word set since goes among the saved rows: before the first saved
        # word that sorts after it (its own saved row, if any, is among ``skipped``).
        places = [(table.before(word), word, term) for word, term in extra]
        at, i, j, n = 0, 0, 0, len(table)
        while at < n or i < len(places):
            stop = min(
                places[i][0] if i < len(places) else n,
                skipped[j] if j < len(skipped) else n,
            )
            if at < stop:
                yield at, stop
                at = stop
            while i < len(places) and places[i][0] == at:
                yield places[i][1], self.extra[places[i][2]]
                i += 1
            if j < len(skipped) and skipped[j] == at:
                at += 1
                j += 1

    def sorted_items(self) -> Iterator[tuple[bytes, bytes | memoryview]]:
        """(word's row, postings) for every term in the order a saved table keeps: by
        the bytes of each word's row (the word and its newline)."""
        extra = sorted((encode(term) + b"\n", term) for term in self.extra)
        table, gone = self.table, self.gone
        saved = range(len(table)) if table is not None else range(0)
        at = 0
        for row in saved:
            assert table is not None
            word = table.words.span(row, row + 1)
            while at < len(extra) and extra[at][0] < word:
                yield extra[at][0], self.extra[extra[at][1]]
                at += 1
            if gone and str(word[:-1], *_CODEC) in gone:
                continue
            yield word, table.postings(row)
        for word, term in extra[at:]:
            yield word, self.extra[term]
