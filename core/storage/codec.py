"""How tables look on disk: orjson, sorted keys, two-space indent.

Sorted keys and one document per line-block make a store diff well in git.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from core.errors import StoreUnreadable

# orjson is several times faster on big tables, but importing it costs ~15 ms
# (it pulls in uuid, dataclasses, zoneinfo...). `memwork context` reads only
# small files on every agent step, so small files go through the stdlib json
# (already loaded by TinyDB) and orjson is imported the first time it pays.
ORJSON_FROM_BYTES = 128 * 1024


def dumps(value: Any) -> bytes:
    """Encode with a stable key order (sorted keys, two-space indent)."""
    import orjson

    return orjson.dumps(
        value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
    )


def loads(raw: bytes) -> Any:
    """Decode JSON bytes (ValueError when they are not JSON)."""
    if len(raw) >= ORJSON_FROM_BYTES:
        import orjson

        return orjson.loads(raw)
    return json.loads(raw)


_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_READ |= getattr(os, "O_CLOEXEC", 0)


def read_store_file(path: Path) -> bytes:
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
    with open(fd, "rb") as file:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise StoreUnreadable(f"{path} is not a regular file; it was left untouched")
            return file.read()
        except OSError as exc:
            raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def load_file(path: Path) -> Any:
    """Parse one JSON file of a store; a file that cannot be parsed is named in the error."""
    raw = read_store_file(path)
    try:
        return loads(raw)
    except ValueError as exc:
        raise StoreUnreadable(
            f"{path} is not valid JSON ({exc}); it was left untouched — "
            "restore it from a backup or move it away"
        ) from None
