"""Printing for the CLI: JSON with ``--json``, short human lines otherwise."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any

from ...base.lazyjson import dumps_indented
from ...base.text import clip
from ...privacy.controls import escape_json_output, terminal_text

__all__ = ["clip", "emit_json", "emit_json_items", "emit_rows", "note", "say"]


def emit_json(value: Any) -> None:
    """Print one JSON document (sorted keys, indented).

    An object also carries ``redactions`` (kind → count) when the command redacted
    anything; a list cannot, and the CLI says it on stderr instead.
    """
    from ...privacy import current_tally

    tally = current_tally()
    if tally is not None and tally.total and isinstance(value, dict):
        value = {**value, "redactions": tally.counts()}
        tally.reported = True
    sys.stdout.flush()
    # Records planted in a table file can hold C1 controls or bidirectional overrides:
    # escaped, they read the same to a JSON parser and do nothing to a terminal.
    sys.stdout.buffer.write(escape_json_output(_dumped(value)))
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()


def _dumped(value: Any) -> bytes:
    """``value`` as indented JSON. A path named by bytes that are not UTF-8 (``--db``,
    ``MEMWORK_DB``: the only text that reaches an answer unchecked) has each such byte
    shown as U+FFFD, as the text lines show it."""
    try:
        return dumps_indented(value)
    except TypeError:
        return dumps_indented(_shown(value))


def _shown(value: Any) -> Any:
    from ...privacy.controls import shown_unicode

    if isinstance(value, str):
        return shown_unicode(value)
    if isinstance(value, dict):
        return {_shown(k): _shown(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_shown(v) for v in value]
    return value


def emit_json_items(items: Iterable[Any]) -> None:
    """Print a JSON list item by item: the bytes :func:`emit_json` prints for the list,
    without holding it (a bulk record's million episodes)."""
    out = sys.stdout.buffer
    sys.stdout.flush()
    first = True
    for item in items:
        out.write(b"[\n  " if first else b",\n  ")
        out.write(_dumped(item).replace(b"\n", b"\n  "))
        first = False
    out.write(b"[]\n" if first else b"\n]\n")
    sys.stdout.flush()


def emit_rows(as_json: bool, rows: list[dict[str, Any]], line: Callable[[Any], str]) -> int:
    """A listing: the rows as one JSON list with ``--json``, else ``line(row)`` for each.
    Returns the exit code (0) for the handler to return."""
    if as_json:
        emit_json(rows)
    else:
        for row in rows:
            say(line(row))
    return 0


def say(text: str = "") -> None:
    """A line on stdout, without control characters or bidirectional overrides (stored
    text never drives the terminal)."""
    print(terminal_text(text))


def note(text: str) -> None:
    """A line on stderr (warnings, what a command chose to do), without control characters
    or bidirectional overrides."""
    print(terminal_text(text), file=sys.stderr)
