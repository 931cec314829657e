"""The one clock every time-dependent rule reads.

``MEMWORK_NOW`` (an ISO-8601 instant) replaces the wall clock so decay, TTLs,
the failure window and new timestamps are reproducible in tests and demos.
Domain functions take ``now`` as a parameter; only the edges call :func:`now`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from .errors import InvalidInput

ENV_NOW = "MEMWORK_NOW"
#: The instants ``MEMWORK_NOW`` may name: every span a rule counts from the clock (a
#: working-memory TTL of up to 100 years, a search's window, decay) stays on the
#: calendar, and every stamp keeps its four-digit year.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 12, 31, 23, 59, 59, tzinfo=UTC)


def parse_instant(text: str, *, field: str = "timestamp") -> datetime:
    """Parse an ISO-8601 instant; naive values are taken as UTC."""
    if not isinstance(text, str):  # a number or a list where a file said a time
        raise InvalidInput(field, f"must be an ISO-8601 instant (got {str(text)[:40]!r})")
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(field, f"must be an ISO-8601 instant (got {text!r})") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def now() -> datetime:
    """The current instant in UTC, or ``MEMWORK_NOW`` when it is set."""
    fixed = os.environ.get(ENV_NOW)
    if fixed:
        moment = parse_instant(fixed, field=ENV_NOW)
        if not EARLIEST <= moment <= LATEST:
            raise InvalidInput(
                ENV_NOW, f"must be an instant from 1970-01-01 to 9000-12-31 (got {fixed!r})"
            )
        return moment
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """Format an instant the way the store keeps it: UTC, microseconds, ``Z``.

    One fixed width makes stored timestamps sort correctly as strings.
    """
    global _last_iso
    # A write stamps many records with the one instant it was given (a bulk recording
    # ~5 per episode); formatting it once is what strftime would give again.
    last = _last_iso
    if last is not None and last[0] is moment:
        return last[1]
    text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    _last_iso = (moment, text)
    return text


_last_iso: tuple[datetime, str] | None = None


def now_iso() -> str:
    """:func:`now` formatted with :func:`iso`."""
    return iso(now())
