"""Bounds on what any JSON value from outside may hold.

The store keeps JSON, and a value that cannot be written back (an integer past
64 bits, an object nested past the encoder's depth limit) would fail long after
it was accepted, as an internal error. Every value is checked on the way in:

- integers within +/- 2**53 (every integer a JSON reader in any language keeps
  exactly; counts, limits and steps are far below it);
- objects and arrays nested at most 64 deep;
- text that is Unicode: no unpaired surrogate (JSON can spell one, ``"\\ud800"``, and
  so can a command line's bytes that are not UTF-8; no UTF-8 file can hold it);
- numbers that are numbers: no NaN or infinity (Python's JSON reader takes ``NaN``;
  written back, it would come out as null).
"""

from __future__ import annotations

from typing import Any

from ..base.errors import InvalidInput
from ..base.jsonio import MB, RECORD_MAX
from ..base.numbers import is_finite
from ..base.text import not_unicode

MAX_INT = 2**53
MAX_DEPTH = 64
#: How many keys down a nesting error names (past them the path says nothing new).
_NAMED_LEVELS = 2
INT_RULE = f"must be a whole number within -2**53..2**53 ({MAX_INT})"


def check_int(value: int, field: str) -> int:
    """``value`` when it is within the bounds; InvalidInput naming ``field`` otherwise."""
    if not -MAX_INT <= value <= MAX_INT:
        raise InvalidInput(field, f"{INT_RULE}; got a number of {len(str(abs(value)))} digits")
    return value


def check_json(value: Any, field: str = "value") -> None:
    """Refuse integers out of range and nesting deeper than :data:`MAX_DEPTH`.

    Iterative, so a document nested thousands deep is refused, not a RecursionError.
    """
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int):
            check_int(item, where)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                head = ".".join(where.split(".")[:3])
                raise InvalidInput(f"{head}…", f"nests deeper than {MAX_DEPTH} levels")
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, inner in pairs:
                if isinstance(inner, dict | list | int):
                    stack.append((inner, f"{where}.{key}" if where else str(key), depth + 1))


def check_value(value: Any, field: str) -> None:
    """:func:`check_depth`, then :func:`check_plain`, in one walk that names nothing
    until it finds something wrong (every operation's every parameter passes here, an
    episode batch holds thousands of values): then the walk that names the way down
    to it runs. Nesting is refused first, wherever in ``value`` the other fault is."""
    if isinstance(value, str):
        if not value.isascii():
            _check_string(value, field)
        return
    if isinstance(value, float):
        check_float(value, field)
        return
    if not isinstance(value, dict | list | tuple):
        return
    faulty = False
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth >= MAX_DEPTH:
            check_depth(value, field)  # raises, naming the first keys down
        if isinstance(item, dict):
            faulty = faulty or not all(_plain_text(k) for k in item if isinstance(k, str))
            item = item.values()
        for inner in item:
            if isinstance(inner, str):
                faulty = faulty or not _plain_text(inner)
            elif isinstance(inner, float):
                faulty = faulty or inner - inner != 0.0  # NaN and the infinities
            elif isinstance(inner, dict | list | tuple):
                stack.append((inner, depth + 1))
    if faulty:
        check_plain(value, field)  # raises, naming the way down


def _plain_text(text: str) -> bool:
    return not_unicode(text) is None


def check_plain(value: Any, field: str) -> None:
    """Refuse, anywhere in ``value`` (an object's keys too), a string that holds an
    unpaired surrogate and a float that is NaN or infinite, naming ``field``, the keys
    down to it and, for text, where it stands. Iterative; call it once
    :func:`check_depth` has bounded the nesting."""
    stack: list[tuple[Any, str]] = [(value, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                _check_string(item, where)
        elif isinstance(item, float):
            check_float(item, where)
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and not key.isascii():
                    _check_string(key, where)
                stack.append((inner, f"{where}.{key}"))
        elif isinstance(item, list | tuple):
            stack.extend((inner, f"{where}.{n}") for n, inner in enumerate(item))


def check_float(value: float, field: str) -> float:
    """``value`` when it is a finite number; InvalidInput naming ``field`` otherwise."""
    if not is_finite(value):
        raise InvalidInput(field, f"must be a finite number (got {value})")
    return value


def _check_string(text: str, where: str) -> None:
    problem = not_unicode(text)
    if problem:
        raise InvalidInput(where, problem)


def check_depth(value: Any, field: str) -> None:
    """Refuse ``value`` nested deeper than :data:`MAX_DEPTH`, naming ``field`` and the
    first keys on the way down (as :func:`check_json` does).

    Iterative, and it builds no message from the value itself: a value nested a thousand
    deep would make ``repr()`` (and every other recursive walk) end in a RecursionError.
    """
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, where, depth = stack.pop()
        if depth >= MAX_DEPTH:
            raise InvalidInput(f"{where}…", f"nests deeper than {MAX_DEPTH} levels")
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, inner in pairs:
            if isinstance(inner, dict | list | tuple):
                named = f"{where}.{key}" if depth < _NAMED_LEVELS else where
                stack.append((inner, named, depth + 1))


def json_size(value: Any) -> int:
    """About how many bytes ``value`` takes as JSON (strings by their UTF-8 length).

    Iterative and cheap: what the size caps need, not an exact encoding.
    """
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            # Counting characters first: only a string near the cap pays for encoding.
            total += len(item) + 2 if item.isascii() else len(item.encode("utf-8", "replace")) + 2
        elif isinstance(item, dict):
            total += 2 + 2 * len(item)
            for key, inner in item.items():
                stack.append(str(key))
                stack.append(inner)
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 8
    return total


def check_size(value: Any, field: str, limit: int | None = None) -> None:
    """Refuse a value larger than one record may be at any door (16 MB, as the CLI caps a
    line of JSON Lines): the Python API and MCP take the same as the CLI."""
    cap = RECORD_MAX if limit is None else limit
    size = json_size(value)
    if size > cap:
        raise InvalidInput(
            field, f"is {size / MB:.1f} MB; one record may hold at most {cap // MB} MB"
        )
