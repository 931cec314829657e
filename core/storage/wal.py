"""``store.log``: a folder store's write-ahead log, one record per commit.

A commit appends one record and fsyncs the log once: that is the commit point.
Readers apply the records after ``store.json`` over the table files; past a size
or an age the log is *folded* into the table files (one journaled multi-file
commit, :mod:`core.storage.journal`, that also starts a fresh log), so the table
files stay the store a person can read and diff.

The file::

    header   b"memwork-log\\n", u32 format (2), u64 base generation   (24 bytes)
    record   4-byte sync marker b"\\xffmw\\xfe", u32 payload length,
             u32 CRC-32 of (generation + payload), u64 generation, then the payload

A payload is one line of JSON, the record's index, then the documents each table
was given, one JSON object per table::

    {"at": 1767225600.5, "drops": [...], "schema": null, "txid": "...",
     "tables": {"<table>": [offset, length, replace, [ids put], [ids deleted]], ...}}\\n
    {"<id>": {...}, ...}{"<id>": {...}}...

so a reader learns what every record touched, down to the ids, from the small
index, and decodes a table's documents only when it reads that table, and only
those no later record replaces (:func:`core.storage.backend.replay`): an aggregate
rewritten by every commit is decoded once. Documents are encoded with the rules
table files follow (:func:`core.storage.codec.dumps_compact`: orjson's values, with
or without orjson), so a value reads back the same from the log and from a folded
file, and one that cannot be encoded fails the commit before anything is written.

Damage. A payload is UTF-8 text, which never holds the bytes 0xFF or 0xFE, so the
marker never occurs inside one: a reader that meets a record it cannot verify finds
the next record by its marker and goes on from there, keeping a
:class:`~core.storage.log_damage.Damage` for the bytes it skipped (the commits they
held, known from the generations around them). A damaged length, generation or
checksum field is recovered: the payload between two markers still verifies. A
record that a crash cut short is a torn tail: it was never acknowledged, since a
commit returns only after the fsync that follows its append, but a reader cannot
tell it from a last record damaged or cut later, so it says so too. Format 1 (no
marker, written by earlier memwork) is read alike, finding the next record by its
generation; the next fold writes format 2.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..base import lazyjson
from ..base.errors import StoreUnreadable
from .backend import Commit, Docs, TableWrite
from .codec import dumps_compact, loads
from .log_damage import Damage
from .manifest import Manifest, is_table_name

if TYPE_CHECKING:
    from ..base.filepaths import StrPath

LOG_NAME = "store.log"
MAGIC = b"memwork-log\n"
FORMAT_VERSION = 2
#: The formats this memwork reads (1: no sync marker; the next fold writes 2).
READS = (1, 2)
_HEAD = struct.Struct("<IQ")
HEADER_SIZE = len(MAGIC) + _HEAD.size
MARK = b"\xffmw\xfe"
_RECORD = struct.Struct("<4sIIQ")
_RECORD_V1 = struct.Struct("<IIQ")
RECORD_HEADER = _RECORD.size
_GENERATION = struct.Struct("<Q")


def header(base_generation: int) -> bytes:
    """The first bytes of a log that follows the store at ``base_generation``."""
    return MAGIC + _HEAD.pack(FORMAT_VERSION, base_generation)


def _crc(generation: int, payload: bytes | memoryview) -> int:
    return zlib.crc32(payload, zlib.crc32(_GENERATION.pack(generation)))


def encode(commit: Commit, at: float) -> bytes:
    """The record of ``commit`` (its ``generation`` set); raises on a value that is not
    JSON, before anything is written."""
    blobs: list[bytes] = []
    tables: dict[str, list[Any]] = {}
    offset = 0
    for name, write in commit.writes.items():
        put = write.put
        blob = dumps_compact(put)
        tables[name] = [offset, len(blob), 1 if write.replace else 0, list(put), write.delete]
        blobs.append(blob)
        offset += len(blob)
    index = {
        "at": at,
        "drops": commit.drops,
        "schema": commit.schema_version,
        "tables": tables,
        "txid": commit.txid,
    }
    fast = lazyjson.loaded()
    if fast is not None:  # the same compact JSON (keys in this order), several times faster
        head = fast.dumps(index)
    else:
        head = json.dumps(index, separators=(",", ":"), ensure_ascii=False).encode()
    payload = b"".join([head, b"\n", *blobs])
    generation = commit.generation
    return _RECORD.pack(MARK, len(payload), _crc(generation, payload), generation) + payload


class Tail:
    """What reading a log from some offset found."""

    __slots__ = ("records", "times", "end", "torn", "damage", "version")

    def __init__(self) -> None:
        #: The records that verify, in order, each a commit with its generation set.
        self.records: list[Commit] = []
        #: When each record was written (unix seconds).
        self.times: list[float] = []
        #: The offset just past the last record that verifies.
        self.end = 0
        #: Bytes after ``end`` that are no whole record (a torn tail).
        self.torn = 0
        #: Every stretch a record could not be proven from, in file order.
        self.damage: list[Damage] = []
        #: The log's format.
        self.version = FORMAT_VERSION


def read_version(path: StrPath, data: bytes) -> tuple[int, int]:
    """The format and base generation a log's first bytes name (StoreUnreadable when
    they are not a memwork log this memwork reads)."""
    if len(data) < HEADER_SIZE or not data.startswith(MAGIC):
        raise StoreUnreadable(f"{path} is not a memwork log; it was left untouched")
    version, base = _HEAD.unpack_from(data, len(MAGIC))
    if version not in READS:
        raise StoreUnreadable(
            f"{path} is a log of format {version}, which this memwork does not read; "
            "upgrade memwork. Nothing was changed."
        )
    return int(version), int(base)


def read_log(
    path: StrPath, data: bytes, after: int, known: Mapping[int, Commit] | None = None
) -> Tail:
    """A whole log's records that follow generation ``after`` (``store.json``'s);
    ``known``: commits already decoded, by generation (see :func:`read_records`).

    A header whose magic is damaged (or a file too short to hold one) is damage, not a
    refusal: every record proves itself by its checksum, so the records are read all
    the same and the header is reported with them. A header that names a format this
    memwork does not know, or a base past ``after``, is refused: that is a newer memwork's
    log, or one that does not belong with this ``store.json``.
    """
    if len(data) >= HEADER_SIZE and data.startswith(MAGIC):
        version, base = read_version(path, data)
        if base > after:
            raise StoreUnreadable(
                f"{path} follows commit {base} but store.json is at commit {after}; "
                "nothing was changed (run `memwork doctor`)"
            )
        tail = read_records(path, data, 0, after, skip=HEADER_SIZE, version=version, known=known)
        tail.version = version
        return tail
    head = min(HEADER_SIZE, len(data))
    version = FORMAT_VERSION if MARK in data[head:] or len(data) <= HEADER_SIZE else 1
    tail = read_records(path, data, 0, after, skip=head, version=version)
    tail.version = version
    damage = Damage(0, head, tail=len(data) < HEADER_SIZE)
    damage.header = True
    damage.follows = len(tail.records)
    tail.damage.insert(0, damage)
    return tail


def read_header(path: StrPath, data: bytes) -> int:
    """The base generation a log's first bytes name (see :func:`read_version`)."""
    return read_version(path, data)[1]


def read_records(
    path: StrPath,
    data: bytes,
    start: int,
    after: int,
    skip: int = 0,
    version: int = FORMAT_VERSION,
    known: Mapping[int, Commit] | None = None,
) -> Tail:
    """The records in ``data`` (the log's bytes from offset ``start``, the first ``skip``
    of them not records: a header) that follow generation ``after``; earlier ones are
    skipped. Bytes no record can be proven from are skipped to the next record that
    verifies and kept in :attr:`Tail.damage`; a gap in the generations with no damage
    before it is refused.

    ``known`` holds commits this process decoded already, by generation: a record that
    verifies and carries one of those generations is that commit (a fold starts the
    new log with the old one's last records, as they were), so it is taken as it is
    rather than decoded again. The first record is decoded all the same: its time is
    the log's age."""
    tail = Tail()
    view = memoryview(data)
    size = len(data)
    pos = skip
    expect = after + 1
    verified = 0
    counted: list[int] = []  # records verified before each damage
    skipped: Damage | None = None  # the damage just before pos, when nothing was recovered
    while pos < size:
        found = _whole(data, view, pos, version)
        if found is None:
            later = _next_start(data, view, pos, version, expect)
            end = size if later is None else later
            damage = Damage(start + pos, end - pos, tail=later is None)
            tail.damage.append(damage)
            counted.append(verified)
            found = _salvage(path, data, view, pos, end, version, expect)
            if found is None:
                if later is None:
                    tail.torn = size - pos
                    damage.cut = _cut(data, pos, version)
                    break
                skipped, pos = damage, later
                continue
            damage.recovered = found[1]
        length, generation = found
        body = pos + (RECORD_HEADER if version >= 2 else _RECORD_V1.size)
        if generation > after:
            if generation != expect:
                if skipped is None or generation < expect:
                    raise StoreUnreadable(
                        f"{path} holds commit {generation} where commit {expect} should "
                        "follow store.json; nothing was changed (run `memwork doctor`)"
                    )
                skipped.lost = (expect, generation - 1)
            reused = known.get(generation) if known is not None and tail.records else None
            if reused is None:
                commit, at = _decode(path, data, body, body + length, generation)
            else:
                commit, at = reused, tail.times[-1]
            tail.records.append(commit)
            tail.times.append(at)
            expect = generation + 1
        verified += 1
        skipped = None
        pos = body + length
    for damage, before in zip(tail.damage, counted, strict=True):
        damage.follows = verified - before - (1 if damage.recovered is not None else 0)
    tail.end = start + pos
    return tail


def read_settled(
    path: StrPath, data: bytes, start: int, after: int, version: int = FORMAT_VERSION
) -> Tail:
    """The records at the front of ``data`` (the log's bytes from offset ``start``) that
    follow generation ``after``, up to the first record that does not verify, decode or
    follow the one before: what a process that does not hold the lock may take in. A
    writer may be appending the next record while it reads, so whatever stops this read
    is left to a read under the lock to judge (damage, a torn tail, or a record that
    was simply not whole yet); :attr:`Tail.end` is where it stopped."""
    tail = Tail()
    view = memoryview(data)
    head = RECORD_HEADER if version >= 2 else _RECORD_V1.size
    pos = 0
    expect = after + 1
    while pos < len(data):
        found = _whole(data, view, pos, version)
        if found is None:
            break
        length, generation = found
        body = pos + head
        if generation > after:
            if generation != expect:
                break
            try:
                commit, at = _decode(path, data, body, body + length, generation)
            except StoreUnreadable:
                break
            tail.records.append(commit)
            tail.times.append(at)
            expect = generation + 1
        pos = body + length
    tail.end = start + pos
    return tail


def _whole(data: bytes, view: memoryview, pos: int, version: int) -> tuple[int, int] | None:
    """(payload length, generation) of the record at ``pos`` when its checksum verifies."""
    if version >= 2:
        if pos + RECORD_HEADER > len(data):
            return None
        _, length, crc, generation = _RECORD.unpack_from(data, pos)
        body = pos + RECORD_HEADER
    else:
        if pos + _RECORD_V1.size > len(data):
            return None
        length, crc, generation = _RECORD_V1.unpack_from(data, pos)
        body = pos + _RECORD_V1.size
    end = body + length
    if end > len(data) or _crc(generation, view[body:end]) != crc:
        return None
    return length, generation


def _cut(data: bytes, pos: int, version: int) -> bool:
    """Whether the bytes from ``pos`` to the end look like a crash's torn tail: zeros (a
    file extended before its data landed), or a record's header naming more bytes than
    follow it."""
    rest = data[pos:]
    if not rest.strip(b"\0"):
        return True
    head = RECORD_HEADER if version >= 2 else _RECORD_V1.size
    if len(rest) < head:
        return version < 2 or MARK.startswith(rest[:4])
    if version >= 2:
        mark, length, _, _ = _RECORD.unpack_from(data, pos)
        return bool(mark == MARK and head + length > len(rest))
    length = _RECORD_V1.unpack_from(data, pos)[0]
    return bool(head + length > len(rest))


def _next_start(data: bytes, view: memoryview, pos: int, version: int, expect: int) -> int | None:
    """Where the first record after ``pos`` that verifies starts (None: none does)."""
    if version >= 2:
        at = data.find(MARK, pos + 1)
        while at >= 0:
            if _whole(data, view, at, version) is not None:
                return at
            at = data.find(MARK, at + 1)
        return None
    # Format 1 has no marker: a later record names a generation from ``expect`` on, whose
    # six high bytes are (almost always) those of ``expect``.
    best: int | None = None
    for first in (expect, expect + 0x10000):
        high = _GENERATION.pack(first)[2:]
        at = data.find(high, pos + 1)
        while at >= 0:
            record = at - 10  # the generation is the last field of a 16-byte header
            if record > pos and (best is None or record < best):
                (generation,) = _GENERATION.unpack_from(data, record + 8)
                if generation >= expect and _whole(data, view, record, version) is not None:
                    best = record
                    break
            elif best is not None and record >= best:
                break
            at = data.find(high, at + 1)
    return best


def _salvage(
    path: StrPath, data: bytes, view: memoryview, pos: int, end: int, version: int, expect: int
) -> tuple[int, int] | None:
    """The record in ``data[pos:end]`` when one damaged header field is all that kept it
    from verifying: a length (the payload runs to ``end``, where the next record
    starts), a generation (the one expected) or one bit of the checksum. Its payload
    must then verify, and decode."""
    head = RECORD_HEADER if version >= 2 else _RECORD_V1.size
    body = pos + head
    if body > end:
        return None
    if version >= 2:
        _, length, crc, generation = _RECORD.unpack_from(data, pos)
    else:
        length, crc, generation = _RECORD_V1.unpack_from(data, pos)
    lengths = {end - body}
    if body + length <= end:
        lengths.add(length)
    for size in lengths:
        for number in {generation, expect}:
            got = _crc(number, view[body : body + size])
            wrong = (size != length) + (number != generation)
            if (got == crc and wrong <= 1) or (wrong == 0 and (got ^ crc).bit_count() == 1):
                try:
                    _decode(path, data, body, body + size, number)
                except StoreUnreadable:
                    continue
                return size, number
    return None


def _decode(
    path: StrPath, data: bytes, start: int, end: int, generation: int
) -> tuple[Commit, float]:
    """The commit whose payload is ``data[start:end]``: its index is parsed now, its
    tables' documents only when read (each loader slices ``data``; nothing is copied
    before, since a reader opening the store decodes every record of the log)."""
    newline = data.find(b"\n", start, end)
    if newline < 0:
        raise _damaged(path, generation)
    try:
        index = loads(data[start:newline])  # orjson's speed in a process that loaded it
    except ValueError:
        raise _damaged(path, generation) from None
    if not isinstance(index, dict) or not isinstance(index.get("tables"), dict):
        raise _damaged(path, generation)
    body = newline + 1
    writes: dict[str, TableWrite] = {}
    for name, span in index["tables"].items():
        if not is_table_name(name) or not _span(span):
            raise _damaged(path, generation)
        offset, length, replace, put_ids, delete_ids = span
        if offset < 0 or length < 0 or body + offset + length > end:
            raise _damaged(path, generation)
        # The lists are the index's own, fresh from the parser: no copies.
        load = _loader(path, data, body + offset, length, generation)
        writes[name] = TableWrite.logged(bool(replace), put_ids, delete_ids, load)
    drops = index.get("drops")
    schema_version = index.get("schema")
    if not isinstance(drops, list) or not all(is_table_name(n) for n in drops):
        raise _damaged(path, generation)
    if schema_version is not None and type(schema_version) is not int:
        raise _damaged(path, generation)
    at = index.get("at")
    commit = Commit(
        writes,
        drops,
        schema_version=schema_version,
        txid=str(index.get("txid", "")),
        generation=generation,
    )
    return commit, float(at) if isinstance(at, int | float) else 0.0


def _damaged(path: StrPath, generation: int) -> StoreUnreadable:
    return StoreUnreadable(
        f"{path}: the record of commit {generation} is not laid out as "
        "memwork writes it; nothing was changed"
    )


def _span(span: object) -> bool:
    """Whether an index entry reads ``[offset, length, replace, put ids, deleted ids]``."""
    # Plain loops: every reader checks every entry of every record of the log.
    if type(span) is not list or len(span) != 5:
        return False
    offset, length, replace, put, deleted = span
    if type(offset) is not int or type(length) is not int or type(replace) is not int:
        return False
    if type(put) is not list or type(deleted) is not list:
        return False
    for doc_id in put:
        if type(doc_id) is not str:
            return False
    for doc_id in deleted:
        if type(doc_id) is not str:
            return False
    return True


def _loader(
    path: StrPath, body: bytes, offset: int, length: int, generation: int
) -> Callable[[], Docs]:
    def load() -> Docs:
        try:
            put: Any = loads(body[offset : offset + length])
        except ValueError:
            put = None
        if not isinstance(put, dict) or not all(isinstance(d, dict) for d in put.values()):
            raise StoreUnreadable(
                f"{path}: a table of commit {generation} is not laid out as memwork writes "
                "it; nothing was changed"
            )
        return put

    return load


def head_after(base: Manifest, records: list[Commit]) -> Manifest:
    """The head once ``records`` are applied to ``base``: a table a commit writes takes
    that commit's generation as its version."""
    if not records:
        return base
    tables = dict(base.tables)
    schema_version = base.schema_version
    for commit in records:
        for name in commit.writes:
            tables[name] = commit.generation
        for name in commit.drops:
            tables.pop(name, None)
        schema_version = commit.schema_version or schema_version
    return Manifest(schema_version=schema_version, generation=records[-1].generation, tables=tables)


def last_generation(path: StrPath, data: bytes) -> int:
    """The generation of the last whole record in a log's bytes (the base when it has
    none), from the record headers alone: a cheap look for a poller, not a check."""
    version, generation = read_version(path, data)
    layout = _RECORD if version >= 2 else _RECORD_V1
    pos = HEADER_SIZE
    while pos + layout.size <= len(data):
        *_, length, _, record = layout.unpack_from(data, pos)
        if pos + layout.size + length > len(data):
            break
        generation, pos = record, pos + layout.size + length
    return int(generation)
