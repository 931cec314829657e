"""The recall index as a file: written in pieces, read in place.

Layout (all numbers little-endian)::

    b"MWRECALL"                      8 bytes
    sections, each 8-aligned         the number columns, the text columns, the words
    head                             marshal of a dict: what the index holds besides the
                                     sections, and where each section lies
    head offset, head length, b"MWRECALL"   <QQ8s, the last 24 bytes

The sections hold what grows with the records: per-slot numbers, the texts of every
record (references, titles, the fields removal and proximity read) and every word's
postings, each a run of bytes with its offsets. :func:`read` maps none of them into
Python objects: a column is a :class:`~core.services.recall.mapped.TextRows`, the
words a :class:`~core.services.recall.mapped.TermTable`, read when a query needs
them. So a process that answers one query from a file of a 100,000-note store holds
the words it asked for, not the file. The file is replaced by a rename, never
written in place, so a mapping of it stays valid until its reader lets go.
"""

from __future__ import annotations

import marshal
import mmap
import struct
from array import array
from collections.abc import Generator, Iterable, Iterator
from typing import Any

from .engine import FORMAT, NUMBER_TYPES, RecallIndex, _Column, params_key
from .mapped import (
    Buffer,
    FileReader,
    Offsets,
    TermBytes,
    TermTable,
    TextRows,
    encode,
    offset_bytes,
)
from .postings import DocPostings, LazyPostings, SessionPostings, copied

MAGIC = b"MWRECALL"
_TRAILER = struct.Struct("<QQ8s")
_PIECE = 1 << 18  # bytes gathered into one piece of the writer (the saver rests between)
_ROWS = 256  # text rows encoded in one step
_COLUMNS = ("refs", "titles", "fields")
_POSTINGS = ("post", "sess_post")


def pieces(index: RecallIndex) -> Iterator[bytes]:
    """The file of ``index``, in pieces of at most a few hundred kilobytes (a background
    save rests between them; call it on a copy nothing else changes)."""
    out = _Writer()
    yield from out.put(MAGIC)
    sections: dict[str, tuple[int, int]] = {}
    numeric = []
    for numbers in index.numeric():
        numeric.append((yield from out.section(_chunks(numbers.tobytes()))))
    for name in _COLUMNS:
        offsets = array("q", [0])
        sections[name] = yield from out.section(_rows(getattr(index, name), offsets))
        sections[name + ".at"] = yield from out.section(_chunks(offsets.tobytes()))
    for name in _POSTINGS:
        postings: LazyPostings = getattr(index, name)
        word_at, data_at = array("q", [0]), array("q", [0])
        packed = postings.pack()
        words: list[bytes] = []
        sections[name + ".data"] = yield from out.section(_words(packed, words, word_at, data_at))
        sections[name + ".data.at"] = yield from out.section(_chunks(data_at.tobytes()))
        sections[name + ".words"] = yield from out.section(_chunks(b"".join(words)))
        sections[name + ".words.at"] = yield from out.section(_chunks(word_at.tobytes()))
    head = marshal.dumps(
        {
            "format": FORMAT,
            "params": params_key(),
            "numeric": numeric,
            "sections": sections,
            "totals": (index.total_len, index.live, index.expiring),
            "free": index.free,
            "tables": (index.table_names, index.table_keys),
            "sessions": (index.session_ids, index.session_lens, index.session_docs),
            "seal_key": index.seal_key,
        }
    )
    at = out.at
    yield from out.put(head)
    yield from out.put(_TRAILER.pack(at, len(head), MAGIC))
    yield from out.flush()


def to_bytes(index: RecallIndex) -> bytes:
    """The whole file of ``index`` at once (a test, or a save with nothing to wait for)."""
    return b"".join(pieces(index))


def read(buf: Buffer, reader: FileReader | None = None) -> RecallIndex | None:
    """The index saved in ``buf``, or None when it is not one this code reads (another
    format or ranking, cut short, damaged where it can tell). With a ``reader`` of the
    same file, rows, offsets and number columns are read through it (by ``pread``),
    and only postings in place from ``buf``: what a one-call process wants (see
    :class:`~core.services.recall.mapped.FileReader`)."""
    size = len(buf)
    try:
        if size < len(MAGIC) + _TRAILER.size or buf[: len(MAGIC)] != MAGIC:
            return None
        at, length, magic = _TRAILER.unpack(buf[size - _TRAILER.size : size])
        if magic != MAGIC or at + length > size - _TRAILER.size:
            return None
        head = marshal.loads(buf[at : at + length])
        if head.get("format") != FORMAT or head.get("params") != params_key():
            return None
        sections: dict[str, tuple[int, int]] = head["sections"]
        if any(s < 0 or s + n > at for s, n in [*sections.values(), *head["numeric"]]):
            return None
        self = RecallIndex()
        numbers = dict(zip(NUMBER_TYPES, head["numeric"], strict=True))
        widths = {name: array(code).itemsize for name, code in NUMBER_TYPES.items()}
        counts = {n // widths[name] for name, (_, n) in numbers.items()}
        if len(counts) != 1 or any(n % widths[name] for name, (_, n) in numbers.items()):
            return None  # every column holds one number per record
        source = buf if reader is None else reader
        self.read_later({name: (source, start, n) for name, (start, n) in numbers.items()})

        def offsets(name: str) -> memoryview | Offsets:
            # Read in place too (sections start 8-aligned): a query reads a few of them.
            # Their runs must end where their section does (whether each offset follows
            # the one before is checked as a row is read: ``TextRows``).
            start, n = sections[name]
            found: memoryview | Offsets
            if reader is None:
                found = memoryview(buf)[start : start + n].cast("q")  # type: ignore[arg-type]
            else:
                found = Offsets(reader, start, n)
            if not len(found) or found[0] != 0 or found[-1] != n_bytes(name[: -len(".at")]):
                raise ValueError(name)
            return found

        def n_bytes(name: str) -> int:
            return sections[name][1]

        def rows(name: str) -> TextRows:
            return TextRows(source, sections[name][0], offsets(name + ".at"), buf)

        for name in _COLUMNS:
            setattr(self, name, _Column(base=rows(name)))
        words, sessions = (TermTable(rows(n + ".words"), rows(n + ".data")) for n in _POSTINGS)
        if len(words.words) != len(words.data) or len(sessions.words) != len(sessions.data):
            return None
        self.post = DocPostings(TermBytes(words))
        self.sess_post = SessionPostings(TermBytes(sessions))
        self.total_len, self.live, self.expiring = head["totals"]
        self.free = head["free"]
        self.table_names, self.table_keys = head["tables"]
        self.table_codes = {name: i for i, name in enumerate(self.table_names)}
        self.session_ids, self.session_lens, self.session_docs = head["sessions"]
        self.session_codes = {sid: i for i, sid in enumerate(self.session_ids)}
        self.seal_key = head.get("seal_key")
        (count,) = counts
        if not count == len(self.refs) == len(self.titles) == len(self.fields):
            return None
        if len(self.free) > count or len(self.session_ids) != len(self.session_lens):
            return None
        self.from_file = True
        self.mapped = buf if isinstance(buf, mmap.mmap) else None
        return self
    except (ValueError, EOFError, TypeError, KeyError, AttributeError, struct.error):
        return None


class _Writer:
    """Where the file stands while its pieces are made: gathers small writes into
    pieces and pads each section to 8 bytes (so number columns start aligned)."""

    def __init__(self) -> None:
        self.at = 0
        self._held: list[bytes | memoryview] = []
        self._size = 0

    def put(self, data: bytes | memoryview) -> Iterator[bytes]:
        self._held.append(data)
        self._size += len(data)
        self.at += len(data)
        if self._size >= _PIECE:
            yield from self.flush()

    def flush(self) -> Iterator[bytes]:
        if self._held:
            yield b"".join(self._held)
            self._held, self._size = [], 0

    def section(
        self, parts: Iterable[bytes | memoryview]
    ) -> Generator[bytes, None, tuple[int, int]]:
        """Write ``parts`` as one section, padded; returns (start, length)."""
        start = self.at
        for part in parts:
            yield from self.put(part)
        length = self.at - start
        if self.at % 8:
            yield from self.put(b"\0" * (8 - self.at % 8))
        return start, length


def unmap(index: RecallIndex) -> None:
    """Read into memory all that ``index`` still reads from its saved file, so that it
    holds no reference to the file's bytes and their mapping can go (with it, the last
    copy of a forgotten record's text on disk when the file was removed)."""
    index.numeric()  # the number columns not read yet
    for name in _COLUMNS:
        column: _Column = getattr(index, name)
        if column.base is not None:
            setattr(index, name, _Column([column[i] for i in range(len(column))]))
    for post in (index.post, index.sess_post):
        post.fold()
        if post.raw.table is not None:
            kept = TermBytes()
            for row, data in post.raw.sorted_items():
                kept.extra[str(row[:-1], "utf-8", "surrogatepass")] = bytes(data)
            post.raw = kept
        for term, found in list(post.live.items()):
            if post.saved_view(found):
                post.live[term] = copied(found)
    index.from_file = False
    index.source = None
    index.mapped = None


def _chunks(data: bytes) -> Iterator[bytes]:
    for start in range(0, len(data), _PIECE):
        yield data[start : start + _PIECE]


def _rows(column: _Column, offsets: array[int]) -> Iterator[bytes]:
    """A text column's bytes, filling ``offsets`` (the end of every row)."""
    base = column.base
    rows: Iterable[int] = range(len(column))
    if base is not None and not column.over:
        # Unchanged saved rows: their bytes as they are, a piece at a time.
        offsets.frombytes(offset_bytes(base.offsets, 1))
        for first in range(0, len(base), _ROWS):
            yield base.span(first, min(len(base), first + _ROWS))
        rows = range(len(base), len(column))
    elif base is not None and base.in_place() is not None:
        # A few saved rows changed (a record taken out, its neighbours): the runs
        # between them as they are, each changed row written anew.
        at = 0
        for changed in [*sorted(r for r in column.over if r < len(base)), len(base)]:
            for first in range(at, changed, _ROWS):
                last = min(changed, first + _ROWS)
                yield base.span(first, last)
                offsets.extend(_shifted(base.offsets, first, last, offsets[-1]))
            if changed < len(base):
                text = encode(column[changed])
                offsets.append(offsets[-1] + len(text))
                yield text
            at = changed + 1
        rows = range(len(base), len(column))
    total = offsets[-1]
    batch: list[bytes] = []
    for i in rows:
        text = encode(column[i])
        total += len(text)
        offsets.append(total)
        batch.append(text)
        if len(batch) >= _ROWS:
            yield b"".join(batch)
            batch = []
    if batch:
        yield b"".join(batch)


def _words(
    packed: TermBytes, words: list[bytes], word_at: array[int], data_at: array[int]
) -> Iterator[bytes | memoryview]:
    """Every word's postings in the order of the words' bytes, filling the words and
    both offset columns. A run of saved words nothing changed is copied as the file
    holds it, its offsets shifted in one pass (where the offsets are read in place)."""
    table = packed.table
    in_place = table is not None and None not in (table.words.in_place(), table.data.in_place())
    items = packed.sorted_runs() if in_place else packed.sorted_items()
    words_total = data_total = 0
    for first, last in items:
        if isinstance(first, int):
            assert table is not None and isinstance(last, int)
            word_rows, data_rows = table.words, table.data
            words.append(word_rows.span(first, last))
            word_at.extend(_shifted(word_rows.offsets, first, last, words_total))
            words_total = word_at[-1]
            # The postings in place, a piece at a time (a run may be most of the file).
            run = data_rows.view_span(first, last)
            for start in range(0, len(run), _PIECE):
                yield run[start : start + _PIECE]
            data_at.extend(_shifted(data_rows.offsets, first, last, data_total))
            data_total = data_at[-1]
            continue
        word, data = first, last
        assert isinstance(word, bytes) and not isinstance(data, int)
        words.append(word)
        words_total += len(word)
        word_at.append(words_total)
        data_total += len(data)
        data_at.append(data_total)
        yield data


def _shifted(offsets: Any, first: int, last: int, total: int) -> array[int]:
    """The ends of rows ``first`` to ``last`` (excluded) counted from ``total`` rather
    than from where row ``first`` starts."""
    ends = array("q")
    ends.frombytes(offsets[first + 1 : last + 1].cast("B"))
    delta = total - offsets[first]
    return array("q", [end + delta for end in ends]) if delta else ends
