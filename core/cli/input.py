"""Reading JSON input for the CLI: one object, an array, or JSON Lines."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from core.errors import InvalidInput


def read_source(path: str) -> bytes:
    """Bytes of FILE, or stdin for ``-``."""
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput("FILE", f"cannot read {path}: {exc.strerror}") from None


def parse_records(raw: bytes) -> list[Any]:
    """A JSON object, a JSON array, or JSON Lines (one object per line)."""
    text = raw.strip()
    if not text:
        raise InvalidInput("input", "is empty (expected a JSON object, an array or JSON Lines)")
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        value = None
        items = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append(orjson.loads(line))
            except orjson.JSONDecodeError as exc:
                raise InvalidInput(
                    "input", f"line {number} is not valid JSON ({exc.msg})"
                ) from None
        return items
    if isinstance(value, list):
        return value
    return [value]
