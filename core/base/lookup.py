"""Finding a record by the id a user typed: whole, or a unique start or end of it.

Ids are time-ordered (``les_01M80H…``), so records made close together share
long prefixes; the random tail is what tells them apart, so a unique suffix
works as a short id too, like a git short hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InvalidInput, NotFound

MIN_KEY = 4


def find(
    docs: Mapping[str, dict[str, Any]], key: str, what: str, field: str = "id"
) -> dict[str, Any] | None:
    """The record ``key`` names, None when nothing matches; ambiguity is an error
    naming ``field`` (the argument the user typed it into)."""
    key = key.strip()
    if key in docs:
        return dict(docs[key])
    if len(key) < MIN_KEY:
        return None
    for matches in (
        [k for k in docs if k.startswith(key)],
        [k for k in docs if k.endswith(key)],
    ):
        if len(matches) == 1:
            return dict(docs[matches[0]])
        if len(matches) > 1:
            raise InvalidInput(
                field, f"{key!r} matches {len(matches)} {what}s; give more characters"
            )
    return None


def resolve(
    docs: Mapping[str, dict[str, Any]], key: str, what: str, field: str = "id"
) -> dict[str, Any]:
    """Like :func:`find`, but a missing record is :class:`NotFound`."""
    found = find(docs, key, what, field)
    if found is None:
        raise NotFound(what, key.strip())
    return found
