"""How tables look on disk: sorted keys, two-space indent, a trailing newline.

Sorted keys and one document per line-block make a store diff well in git.

Two encoders write these bytes: orjson, several times faster on big tables,
and :mod:`core.base.plainjson` (the standard library), which saves
orjson's ~12 ms import. A commit re-encodes only the documents it changed and
keeps the bytes of the others from the file it replaces (:func:`table_bytes`),
so recording one episode encodes a few small documents with the standard
library and never imports orjson. A process that works through a lot of JSON
(a bulk recording, an import, the workbench) turns to orjson once it pays
(:mod:`core.base.lazyjson`).
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

from ..base import lazyjson
from ..base.errors import StoreUnreadable

if TYPE_CHECKING:
    from ..base.filepaths import StrPath

#: Documents a commit re-encodes with the standard library; more go through orjson.
ORJSON_AFTER_DOCUMENTS = 64


def dumps(value: Any) -> bytes:
    """Encode with a stable key order (sorted keys, two-space indent), with orjson."""
    import orjson

    return orjson.dumps(
        value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
    )


def dumps_small(value: Any) -> bytes:
    """The same bytes as :func:`dumps`, for a value too small to be worth orjson's import."""
    if "orjson" in sys.modules:
        return dumps(value)
    from ..base import plainjson  # not on the read-only path (`memwork context`)

    return plainjson.dumps(value)


def dumps_compact(value: Any) -> bytes:
    """Encode without whitespace (sorted keys), with orjson once it is loaded, else with
    the standard library: the same bytes, and the same values refused, either way."""
    if "orjson" in sys.modules:
        import orjson

        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    from ..base import plainjson

    return plainjson.dumps_compact(value)


def loads(raw: bytes) -> Any:
    """Decode JSON bytes (ValueError when they are not JSON)."""
    fast = lazyjson.fast(len(raw))
    if fast is not None:
        return fast.loads(raw)
    return json.loads(raw)


# -- table files ---------------------------------------------------------------------------
_HEAD = b'{\n  "documents": {'
_TAIL = b'\n  },\n  "table": '
_ENTRY = b'\n    "'
_NEXT_ENTRY = b',\n    "'
_INDENT = "    "
#: Where a document sits in a table file: inside the file's object and ``documents``.
_DOC_DEPTH = 2


def _quoted(text: str) -> bytes:
    return json.encoder.encode_basestring(text).encode("utf-8")


def table_bytes(
    name: str,
    docs: Mapping[str, Any],
    version: int,
    *,
    before: bytes | None = None,
    before_docs: Mapping[str, Any] | None = None,
    before_version: int | None = None,
    touched: Collection[str] = (),
) -> bytes:
    """The file of table ``name`` at ``version``.

    ``before`` is the file being replaced (version ``before_version``) and
    ``before_docs`` the documents it holds, as this process read or wrote them;
    ``touched`` are the ids written since. A document neither
    touched nor replaced (the very object of ``before_docs``) keeps its bytes
    from ``before``; the rest are encoded.
    Without ``before``, or when the file does not read as memwork wrote it,
    everything is encoded.
    """
    if before is not None and before_docs is not None and docs:
        ending = _TAIL + _quoted(name) + b',\n  "version": ' + str(before_version).encode()
        if not before.endswith(ending + b"\n}\n"):
            before = b""  # not the file these documents came from: encode everything
        kept = _kept_blocks(before, before_docs, docs, touched)
        if kept is not None:
            return _spliced(name, docs, version, kept)
    value = {"documents": docs, "table": name, "version": version}
    if len(docs) > ORJSON_AFTER_DOCUMENTS:
        return dumps(value)
    return dumps_small(value)


def _kept_blocks(
    before: bytes, before_docs: Mapping[str, Any], docs: Mapping[str, Any], touched: Collection[str]
) -> dict[str, bytes] | None:
    """id → the bytes of that document's value in ``before``, for documents that did not
    change; None when splicing is not worth it or ``before`` is not laid out as expected."""
    changed = sum(1 for k, d in docs.items() if k in touched or before_docs.get(k) is not d)
    if changed > ORJSON_AFTER_DOCUMENTS or not before_docs or not before.startswith(_HEAD):
        return None
    tail = before.rfind(_TAIL)
    body = before[len(_HEAD) : tail]
    if tail == -1 or not body.startswith(_ENTRY):
        return None
    # Strings hold no raw newline and a document's own lines are indented deeper,
    # so a newline, four spaces and a quote start an entry and nothing else.
    pieces = body[len(_ENTRY) :].split(_NEXT_ENTRY)
    if len(pieces) != len(before_docs):
        return None
    kept = {}
    for doc_id, piece in zip(sorted(before_docs), pieces, strict=True):
        key = _quoted(doc_id)[1:] + b": "
        if not piece.startswith(key):
            return None
        if doc_id not in touched and docs.get(doc_id) is before_docs[doc_id]:
            kept[doc_id] = piece[len(key) :]
    return kept


def listed_ids(name: str, version: int | None, raw: bytes, most: int) -> list[str] | None:
    """The ids of the documents in ``raw``, the file of table ``name`` at ``version``,
    read from its layout without decoding a document; None when it holds more than
    ``most``, or is not laid out as memwork writes it (then decode it to know)."""
    ending = _TAIL + _quoted(name) + b',\n  "version": ' + str(version).encode() + b"\n}\n"
    start, end = len(_HEAD), len(raw) - len(ending)
    if not raw.startswith(_HEAD) or not raw.endswith(ending) or not raw.startswith(_ENTRY, start):
        return None
    # An entry starts with a newline, four spaces and a quote, and nothing else does
    # (see _kept_blocks): counting them is a scan of bytes, not a parse.
    if raw.count(_NEXT_ENTRY, start, end) >= most:
        return None
    ids = []
    pos = start + len(_ENTRY)
    while True:
        key_end = raw.find(b'": ', pos, end)
        key = raw[pos:key_end]
        if key_end < 0 or b"\\" in key or b'"' in key:
            return None  # an escaped id: leave it to the decoder
        ids.append(key.decode("utf-8"))
        pos = raw.find(_NEXT_ENTRY, key_end, end)
        if pos < 0:
            return ids
        pos += len(_NEXT_ENTRY)


def _spliced(name: str, docs: Mapping[str, Any], version: int, kept: dict[str, bytes]) -> bytes:
    parts = [_HEAD]
    fast = lazyjson.loaded()
    for doc_id in sorted(docs):
        parts.append(_ENTRY if len(parts) == 1 else _NEXT_ENTRY)
        parts.append(_quoted(doc_id)[1:] + b": ")
        block = kept.get(doc_id)
        if block is None:
            block = _encode_document(docs[doc_id], fast)
        parts.append(block)
    parts.append(_TAIL + _quoted(name) + b',\n  "version": ' + str(version).encode() + b"\n}\n")
    spliced = b"".join(parts)
    if os.environ.get("MEMWORK_VERIFY_WRITES"):
        whole = dumps({"documents": docs, "table": name, "version": version})
        if spliced != whole:
            raise AssertionError(f"table {name}: the spliced file differs from a full encoding")
    return spliced


def _encode_document(doc: Any, fast: lazyjson.Orjson | None) -> bytes:
    if fast is None:
        from ..base import plainjson

        return plainjson.dumps_nested(doc, _INDENT, _DOC_DEPTH)
    # orjson cannot start deeper; its lines only need the document's indent added.
    # (Nesting depth counts from the document here: the file adds two levels.)
    return fast.dumps(doc, option=fast.OPT_INDENT_2 | fast.OPT_SORT_KEYS).replace(
        b"\n", b"\n" + _INDENT.encode()
    )


_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_READ |= getattr(os, "O_CLOEXEC", 0)


def read_store_file(path: StrPath) -> bytes:
    """The bytes of a file inside a store, which must be a regular file, not a link.

    ``O_NOFOLLOW`` refuses a symbolic link (it could point anywhere on disk) and
    ``O_NONBLOCK`` keeps a planted FIFO from hanging the open.
    """
    try:
        fd = os.open(path, _READ)
    except OSError as exc:
        if exc.errno == errno.ELOOP or _is_link(path):
            raise StoreUnreadable(
                f"{path} is a symbolic link; memwork does not follow links inside a store "
                "(replace it with the file itself); it was left untouched"
            ) from None
        raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        os.close(fd)
        raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        # Checked before the file object: io.open refuses a folder with IsADirectoryError.
        os.close(fd)
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise StoreUnreadable(
            f"{path} is {what}, not a table file; it was left untouched (move it away "
            "and restore the table from a checkpoint or a backup)"
        )
    with open(fd, "rb") as file:
        try:
            return file.read()
        except OSError as exc:
            raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None


def _is_link(path: StrPath) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def load_file(path: StrPath) -> Any:
    """Parse one JSON file of a store; a file that cannot be parsed is named in the error."""
    return parse_file(path, read_store_file(path))


def parse_file(path: StrPath, raw: bytes) -> Any:
    """Parse the bytes read from ``path`` (a file that cannot be parsed is named)."""
    try:
        return loads(raw)
    except ValueError as exc:
        raise StoreUnreadable(
            f"{path} is not valid JSON ({exc}); it was left untouched — "
            "restore it from a backup or move it away"
        ) from None
