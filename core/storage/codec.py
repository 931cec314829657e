"""How tables look on disk: orjson, sorted keys, two-space indent.

Sorted keys and one document per line-block make a store diff well in git.
"""

from __future__ import annotations

import json
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


def load_file(path: Path) -> Any:
    """Parse one JSON file; a file that cannot be parsed is named in the error."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None
    try:
        return loads(raw)
    except ValueError as exc:
        raise StoreUnreadable(
            f"{path} is not valid JSON ({exc}); it was left untouched — "
            "restore it from a backup or move it away"
        ) from None
