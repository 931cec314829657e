"""A copy of a store with every stored instant moved by the same amount.

The demo store is written once, at a fixed instant, and committed. Opened as
it is, its newest episode would be days old; shifting the workbench's clock
back to that instant made the demo look right but put it out of step with
every other process: an agent writing to the copy stamped its records with
the wall clock, which the workbench then showed "in 1w", and ``memwork
context`` on the copy ranked by another "now" than the workbench's Context
pane. Moving the copy's timestamps instead keeps one clock for everyone: the
copy reads as if it had been written just now, at the ages it was written
with.

Every string in the stored instant format (:func:`core.base.clock.iso`, one
fixed width ending in ``Z``) is an instant, in the tables and in every
checkpoint's snapshot; nothing else is touched (ids, free text, an imported
file's own dates in another format).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..base.clock import iso, parse_instant
from .copy import Snapshots, fill, read_whole
from .store import Store

#: An instant as the store writes it: ``2026-11-20T12:00:00.000000Z``.
STORED_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


@lru_cache(maxsize=1 << 16)
def _moved(instant: str, by: timedelta) -> str:
    # Checkpoint snapshots repeat most of the tables' instants: each is computed once.
    return iso(parse_instant(instant) + by)


def shifted(value: Any, by: timedelta) -> Any:
    """``value`` (a stored JSON value) with every stored instant in it moved ``by``."""
    if isinstance(value, str):
        if len(value) == 27 and STORED_INSTANT.fullmatch(value):
            return _moved(value, by)
        return value
    if isinstance(value, dict):
        return {key: shifted(item, by) for key, item in value.items()}
    if isinstance(value, list):
        return [shifted(item, by) for item in value]
    return value


def copy_shifted(source: Path | str, target: Path | str, by: timedelta) -> None:
    """Write the store at ``source`` into the new folder ``target`` with every instant
    moved ``by`` (tables and checkpoint snapshots; the source is only read)."""
    src = Store(source, create=False)
    try:
        tables, snapshots = read_whole(src)
    finally:
        src.close()
    moved_snapshots: Snapshots = {
        key: {name: (version, shifted(docs, by)) for name, (version, docs) in snap.items()}
        for key, snap in snapshots.items()
    }
    dst = Store(target)
    try:
        fill(dst, {name: shifted(docs, by) for name, docs in tables.items()}, moved_snapshots)
    finally:
        dst.close()


def offset_to(written_at: str, now: datetime) -> timedelta:
    """How far a store written at ``written_at`` (a stored instant) must move to read as
    written at ``now``, in whole minutes (the copy's times keep their round minutes), never
    past ``now`` (nothing in the copy may lie in the future)."""
    return timedelta(minutes=(now - parse_instant(written_at)) // timedelta(minutes=1))
