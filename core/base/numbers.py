"""Numbers read from what a person or a file wrote: which text is a whole number, which
value is a finite one, and how a number too long for an error line is shown."""

from __future__ import annotations

import math
import sys


def is_whole_number(text: str) -> bool:
    """Whether ``text`` is ASCII digits and nothing else: what ``int()`` reads as it is.
    ``str.isdigit`` is also true of "²" and "①", which ``int()`` refuses."""
    return text.isascii() and text.isdigit()


def is_finite(value: int | float) -> bool:
    """Whether ``value`` is a finite number a float can hold. ``math.isfinite`` of an int
    past a float's range raises OverflowError instead of answering."""
    if isinstance(value, int):
        return abs(value) <= sys.float_info.max  # compared exactly, never converted
    return math.isfinite(value)


def shown_number(value: int | float) -> str:
    """A number short enough for an error line: a float as written, a whole number as a
    float would print it (``1e+20``) or, past what a float holds, its first digits and
    how many there are."""
    if isinstance(value, float):
        return repr(value)
    if is_finite(value):
        return f"{float(value):g}"
    digits = str(abs(value))
    return f"{'-' if value < 0 else ''}{digits[:6]}… ({len(digits)} digits)"
