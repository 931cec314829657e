"""Reading JSON from outside in bounded memory: one document, or JSON Lines as a stream.

What must be held at once is capped, so a huge or endless input (``/dev/zero``, a
runaway pipe) is refused instead of filling memory:

- one record (a line of JSON Lines) at most :data:`RECORD_MAX` (16 MB);
- one whole JSON document (an object or array read at once) at most
  :data:`DOCUMENT_MAX` (256 MB).

JSON Lines of any length stream through: a bulk file of a million episodes is
read a line at a time. Input must start (after whitespace) with ``{`` or ``[``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from json import JSONDecodeError  # orjson's error is one (its messages are kept)
from typing import IO, Any

from .errors import InvalidInput
from .lazyjson import loads, parses

MB = 1024 * 1024
RECORD_MAX = 16 * MB
DOCUMENT_MAX = 256 * MB
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"


def open_source(path: str) -> IO[bytes]:
    """FILE opened for reading bytes, or stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer
    if os.path.isdir(path):
        raise InvalidInput("FILE", f"{path} is a folder, not a file")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise InvalidInput("FILE", f"cannot read {path}: {exc.strerror}") from None


@contextmanager
def _reading(name: str) -> Iterator[None]:
    """A read that fails past the open (a device's I/O error, a file gone bad) refused
    as the open is, naming the file."""
    try:
        yield
    except OSError as exc:
        raise InvalidInput("FILE", f"cannot read {name}: {exc.strerror or exc}") from None


def _first_byte(stream: IO[bytes]) -> tuple[bytes, bytes]:
    """Skip leading whitespace (and a BOM); return (the first byte, what was read of it)."""
    skipped = 0
    while True:
        chunk = stream.read(1)
        if not chunk:
            return b"", b""
        if chunk in _WHITESPACE or (skipped == 0 and chunk == _BOM[:1]):
            if chunk == _BOM[:1]:
                stream.read(2)
            skipped += 1
            if skipped > RECORD_MAX:
                raise InvalidInput("input", "has no JSON in its first 16 MB")
            continue
        return chunk, chunk


def read_capped(stream: IO[bytes], cap: int, head: bytes = b"") -> bytes:
    """The rest of ``stream`` after ``head``, refused when the whole is over ``cap`` bytes."""
    parts = [head]
    size = len(head)
    while True:
        chunk = stream.read(min(4 * MB, cap + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > cap:
            raise InvalidInput(
                "input",
                f"a JSON document larger than {cap // MB} MB is refused "
                "(send JSON Lines, one record per line, for bulk input)",
            )


def _not_json_start(first: bytes) -> InvalidInput:
    shown = repr(first.decode("latin-1"))
    return InvalidInput(
        "input", f"must start with a JSON object or array (got {shown}), or be JSON Lines"
    )


def iter_records(stream: IO[bytes]) -> Iterator[Any]:
    """Records of a JSON object, a JSON array or JSON Lines, one at a time.

    JSON Lines stream (at most 16 MB a line); an object or array spread over
    several lines is read whole (at most 256 MB).
    """
    first, head = _first_byte(stream)
    if not first:
        raise InvalidInput("input", "is empty (expected a JSON object, an array or JSON Lines)")
    if first not in b"{[":
        raise _not_json_start(first)
    if first == b"[":
        yield from _as_records(_loads(read_capped(stream, DOCUMENT_MAX, head)))
        return
    line = head + stream.readline(RECORD_MAX + 1)
    one_line, value = parses(line)
    if not one_line:
        # Not one object per line: a pretty-printed document, read whole.
        yield from _as_records(_loads(read_capped(stream, DOCUMENT_MAX, line)))
        return
    yield value
    yield from _json_lines(stream, start=2)


def _json_lines(stream: IO[bytes], *, start: int) -> Iterator[Any]:
    number = start - 1
    while True:
        line = stream.readline(RECORD_MAX + 1)
        if not line:
            return
        number += 1
        if len(line) > RECORD_MAX and not line.endswith(b"\n"):
            raise InvalidInput(
                "input", f"line {number} is longer than {RECORD_MAX // MB} MB (one record at most)"
            )
        if not line.strip():
            continue
        try:
            yield loads(line)
        except JSONDecodeError as exc:
            raise InvalidInput("input", f"line {number} is not valid JSON ({exc.msg})") from None


def _loads(raw: bytes) -> Any:
    try:
        return loads(raw)
    except JSONDecodeError as exc:
        lines = raw.splitlines()
        if sum(1 for line in lines if line.strip()) > 1:
            # Several lines: JSON Lines with a broken line reads better by its number.
            for number, line in enumerate(lines, start=1):
                try:
                    if line.strip():
                        loads(line)
                except JSONDecodeError as line_exc:
                    raise InvalidInput(
                        "input", f"line {number} is not valid JSON ({line_exc.msg})"
                    ) from None
        raise InvalidInput("input", f"is not valid JSON ({exc.msg})") from None


def _as_records(value: Any) -> Iterator[Any]:
    if isinstance(value, list):
        yield from value
    else:
        yield value


def load_document(path: str | os.PathLike[str]) -> Any:
    """One JSON document from a file (at most 256 MB)."""
    name = os.path.basename(os.fspath(path))
    with open_source(os.fspath(path)) as stream, _reading(name):
        first, head = _first_byte(stream)
        if not first:
            raise InvalidInput("FILE", f"{name} is empty")
        if first not in b'{["':
            raise InvalidInput(
                "FILE", f"{name} is not JSON (it starts with {first.decode('latin-1')!r})"
            )
        raw = read_capped(stream, DOCUMENT_MAX, head)
    try:
        return loads(raw)
    except JSONDecodeError as exc:
        raise InvalidInput("FILE", f"{name} is not valid JSON ({exc})") from None


def records_from(path: str) -> Iterator[Any]:
    """:func:`iter_records` over FILE (or stdin for ``-``), closing the file at the end."""
    stream = open_source(path)
    try:
        with _reading(path):
            yield from iter_records(stream)
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()


__all__ = [
    "DOCUMENT_MAX",
    "RECORD_MAX",
    "iter_records",
    "load_document",
    "open_source",
    "read_capped",
    "records_from",
]
