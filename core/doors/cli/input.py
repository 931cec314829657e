"""Reading JSON input for the CLI: one object, an array, or JSON Lines (streamed)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...base.jsonio import iter_records, open_source, records_from

__all__ = ["iter_records", "open_source", "records"]


def records(path: str) -> Iterator[Any]:
    """The records of FILE (``-``: stdin), one at a time, in bounded memory."""
    return records_from(path)
