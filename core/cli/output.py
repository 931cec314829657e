"""Printing for the CLI: JSON with ``--json``, short human lines otherwise."""

from __future__ import annotations

import sys
from typing import Any

import orjson

from core.text import clip

__all__ = ["clip", "emit_json", "note", "say"]


def emit_json(value: Any) -> None:
    """Print one JSON document (sorted keys, indented)."""
    sys.stdout.flush()
    sys.stdout.buffer.write(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()


def say(text: str = "") -> None:
    """A line on stdout."""
    print(text)


def note(text: str) -> None:
    """A line on stderr (warnings, what a command chose to do)."""
    print(text, file=sys.stderr)
