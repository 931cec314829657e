"""``store.log``: a folder store's write-ahead log, one record per commit.

A commit appends one record and fsyncs the log once: that is the commit point.
Readers apply the records after ``store.json`` over the table files; past a size
or an age the log is *folded* into the table files (one journaled multi-file
commit, :mod:`core.storage.journal`, that also starts a fresh log), so the table
files stay the store a person can read and diff.

The file::

    header   b"memwork-log\\n", u32 format (1), u64 base generation   (24 bytes)
    record   u32 payload length, u32 CRC-32 of (generation + payload), u64 generation,
             then the payload

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

A record that a crash cut short fails its length or its checksum and is dropped
whole: it was never acknowledged, since a commit returns only after the fsync
that follows its append. A record that fails its checksum *before* later good
records is damage, not a crash, and the store is refused untouched.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..base.errors import StoreUnreadable
from .backend import Commit, Docs, TableWrite
from .codec import dumps_compact, loads
from .manifest import Manifest, is_table_name

if TYPE_CHECKING:
    from ..base.filepaths import StrPath

LOG_NAME = "store.log"
MAGIC = b"memwork-log\n"
FORMAT_VERSION = 1
_HEAD = struct.Struct("<IQ")
HEADER_SIZE = len(MAGIC) + _HEAD.size
_RECORD = struct.Struct("<IIQ")
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
    head = json.dumps(index, separators=(",", ":"), ensure_ascii=False).encode()
    payload = b"".join([head, b"\n", *blobs])
    generation = commit.generation
    return _RECORD.pack(len(payload), _crc(generation, payload), generation) + payload


class Tail:
    """What reading a log from some offset found."""

    __slots__ = ("records", "times", "end", "torn")

    def __init__(self) -> None:
        #: The whole records, in order, each a commit with its generation set.
        self.records: list[Commit] = []
        #: When each record was written (unix seconds).
        self.times: list[float] = []
        #: The offset just past the last whole record.
        self.end = 0
        #: Bytes after ``end`` that are no whole record (a commit a crash cut short).
        self.torn = 0


def read_header(path: StrPath, data: bytes) -> int:
    """The base generation a log's first bytes name (StoreUnreadable when they are not
    a memwork log)."""
    if len(data) < HEADER_SIZE or not data.startswith(MAGIC):
        raise StoreUnreadable(f"{path} is not a memwork log; it was left untouched")
    version, base = _HEAD.unpack_from(data, len(MAGIC))
    if version != FORMAT_VERSION:
        raise StoreUnreadable(
            f"{path} is a log of format {version}, which this memwork does not read; "
            "upgrade memwork. Nothing was changed."
        )
    return int(base)


def read_records(path: StrPath, data: bytes, start: int, after: int, skip: int = 0) -> Tail:
    """The records in ``data`` (the log's bytes from offset ``start``, the first ``skip``
    of them not records: a header) that follow generation ``after``; earlier ones are
    skipped, a gap is refused."""
    tail = Tail()
    view = memoryview(data)
    pos = skip
    expect = after + 1
    while pos + RECORD_HEADER <= len(data):
        length, crc, generation = _RECORD.unpack_from(data, pos)
        body = pos + RECORD_HEADER
        if body + length > len(data) or _crc(generation, view[body : body + length]) != crc:
            if _whole_record_at(data, body + length):
                raise StoreUnreadable(
                    f"{path} is damaged at byte {start + pos}: a record fails its checksum "
                    "and later commits follow it; nothing was changed (run `memwork doctor`)"
                )
            break  # a commit a crash cut short: never acknowledged, dropped whole
        if generation > after:
            if generation != expect:
                raise StoreUnreadable(
                    f"{path} holds commit {generation} where commit {expect} should follow "
                    "store.json; nothing was changed (run `memwork doctor`)"
                )
            commit, at = _decode(path, data, body, body + length, generation)
            tail.records.append(commit)
            tail.times.append(at)
            expect += 1
        pos = body + length
    tail.end = start + pos
    tail.torn = len(data) - pos
    return tail


def _whole_record_at(data: bytes, pos: int) -> bool:
    """Whether a whole record with a good checksum starts at ``pos``."""
    if pos < 0 or pos + RECORD_HEADER > len(data):
        return False
    length, crc, generation = _RECORD.unpack_from(data, pos)
    body = pos + RECORD_HEADER
    end: int = body + length
    return end <= len(data) and _crc(generation, data[body:end]) == int(crc)


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
        index = json.loads(data[start:newline])
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
    generation = read_header(path, data)
    pos = HEADER_SIZE
    while pos + RECORD_HEADER <= len(data):
        length, _, record = _RECORD.unpack_from(data, pos)
        if pos + RECORD_HEADER + length > len(data):
            break
        generation, pos = record, pos + RECORD_HEADER + length
    return int(generation)
