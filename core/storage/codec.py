"""How tables look on disk: orjson, sorted keys, two-space indent.

Sorted keys and one document per line-block make a store diff well in git.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from core.errors import StoreUnreadable

_DUMP = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def dumps(value: Any) -> bytes:
    """Encode with a stable key order."""
    return orjson.dumps(value, option=_DUMP)


def load_file(path: Path) -> Any:
    """Parse one JSON file; a file that cannot be parsed is named in the error."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StoreUnreadable(f"cannot read {path}: {exc.strerror}") from None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise StoreUnreadable(
            f"{path} is not valid JSON ({exc}); it was left untouched — "
            "restore it from a backup or move it away"
        ) from None
