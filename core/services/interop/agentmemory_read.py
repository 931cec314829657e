"""The small readers of an agentmemory export's fields, shared by
:mod:`core.services.interop.agentmemory` (sessions, observations, lessons, slots) and
:mod:`core.services.interop.agentmemory_work` (actions and links).

Each reads one field of an item by its aliases (the format's writers name the same
field ``actionId``, ``action_id`` …): the first alias present with a value, checked
for its type, or a clear error that names the field (``where`` and the key found)
and the rule it breaks.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from ...base.clock import parse_instant
from ...base.errors import InvalidInput
from ...base.numbers import is_finite, is_whole_number, shown_number
from ...privacy import scrub

#: What the imported records name as their source.
SOURCE = "agentmemory"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def first(item: dict[str, Any], keys: tuple[str, ...]) -> tuple[str, Any]:
    """The first alias present with a non-null value: (key, value); (keys[0], None) if none."""
    for key in keys:
        if item.get(key) is not None:
            return key, item[key]
    return keys[0], None


def text(item: dict[str, Any], keys: tuple[str, ...], where: str) -> str:
    key, value = first(item, keys)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{where}.{key}", f"must be a string (got {type(value).__name__})")
    return value


def ident(item: dict[str, Any], keys: tuple[str, ...], where: str) -> str | None:
    key, value = first(item, keys)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise InvalidInput(f"{where}.{key}", f"must be a string id (got {value!r})")
    text = str(value).strip()
    if not text:
        raise InvalidInput(f"{where}.{key}", "must not be empty")
    return text


def strings(item: dict[str, Any], keys: tuple[str, ...], where: str) -> list[str]:
    """Every alias present is a list of strings; merged, scrubbed, de-duplicated."""
    out: dict[str, None] = {}
    for key in keys:
        value = item.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            raise InvalidInput(f"{where}.{key}", "must be a list of strings")
        for n, entry in enumerate(value, start=1):
            if isinstance(entry, dict):  # e.g. topConcepts: [{concept, frequency}]
                entry = next((v for v in entry.values() if isinstance(v, str)), None)
            if not isinstance(entry, str):
                raise InvalidInput(f"{where}.{key}[{n}]", "must be a string")
            cleaned = scrub(entry).strip()
            if cleaned:
                out.setdefault(cleaned, None)
    return list(out)


def instant(item: dict[str, Any], keys: tuple[str, ...], where: str) -> datetime | None:
    """ISO-8601 string or epoch number (ms; < 1e11 → seconds); None when absent."""
    key, value = first(item, keys)
    field = f"{where}.{key}"
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and is_whole_number(value.strip()):
        value = int(value.strip())
    if isinstance(value, bool):
        raise InvalidInput(field, f"must be an ISO-8601 instant or epoch milliseconds ({value!r})")
    if isinstance(value, int | float):
        shown = shown_number(value)
        if not is_finite(value):
            raise InvalidInput(field, f"must be a finite epoch number (got {shown})")
        try:
            seconds = value / 1000 if abs(value) >= 1e11 else value
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(field, f"is not a usable epoch time (got {shown})") from None
    if isinstance(value, str):
        return parse_instant(value, field=field)
    raise InvalidInput(field, f"must be an ISO-8601 instant or epoch milliseconds ({value!r})")


def number(item: dict[str, Any], keys: tuple[str, ...], where: str) -> tuple[str, float | None]:
    key, value = first(item, keys)
    if value is None:
        return key, None
    if isinstance(value, bool) or not isinstance(value, int | float) or not is_finite(value):
        shown = shown_number(value) if type(value) is int else repr(value)
        raise InvalidInput(f"{where}.{key}", f"must be a number (got {shown})")
    return key, float(value)


def list_of(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidInput(key, f"must be a list (got {type(value).__name__})")
    return value


def object_of(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InvalidInput(where, f"must be an object (got {type(item).__name__})")
    return item


def stable_id(prefix: str, when: datetime | None, *parts: str) -> str:
    """A deterministic id shaped like :func:`core.base.ids.new_id`: time part + hash part.

    The same source record always gets the same id, so importing a file twice
    is reported as a clash, not stored twice.
    """
    ms = int(when.timestamp() * 1000) if when is not None else 0
    digest = int(hashlib.sha256("\x1f".join((SOURCE, *parts)).encode()).hexdigest()[:20], 16)
    chars = []
    for number, length in ((max(ms, 0), 10), (digest, 16)):
        part = []
        for _ in range(length):
            number, rem = divmod(number, 32)
            part.append(_CROCKFORD[rem])
        chars.append("".join(reversed(part)))
    return f"{prefix}_{''.join(chars)}"
