"""orjson's answers, without orjson's import when the standard library gives the same.

orjson parses and writes JSON several times faster than the standard library,
but importing it costs ~12 ms (it loads dataclasses, uuid and platform): more
than everything else recording one episode adds to reading the context. A
process that handles little JSON (an agent's step) gets orjson's exact results
from the standard library; one that handles a lot (a bulk recording, an import,
the workbench) imports orjson once :data:`ORJSON_AFTER_BYTES` have gone through,
and from then on everything goes through orjson.

:func:`loads` accepts and refuses what ``orjson.loads`` does, with the same
values, and raises orjson's own error (so its message) on anything it refuses:
whatever the standard library would read differently (``NaN``, a number that
overflows, a lone surrogate, bytes that are not UTF-8, deep nesting) is left to
orjson. ``tests/core/base/test_lazyjson.py`` compares the two on generated input.
"""

from __future__ import annotations

import json
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NoReturn, Protocol

    class Orjson(Protocol):
        """What memwork calls of the orjson module (the module itself matches this)."""

        OPT_APPEND_NEWLINE: int
        OPT_INDENT_2: int
        OPT_SORT_KEYS: int

        def dumps(self, obj: Any, /, default: Any = ..., option: int | None = ...) -> bytes: ...

        def loads(self, obj: bytes | bytearray | memoryview | str, /) -> Any: ...


#: JSON handled by the standard library in one process before orjson is imported.
ORJSON_AFTER_BYTES = 4 * 1024 * 1024
_handled = 0

_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 64) - 1
_INF = float("inf")
# A \u escape of a surrogate: orjson refuses a lone one, the standard library reads it.
# (Compiled on first use: `memwork context` imports this module and parses no input.)
_SURROGATE_ESCAPE: re.Pattern[bytes] | None = None


def _has_surrogate_escape(raw: bytes) -> bool:
    global _SURROGATE_ESCAPE
    if b"\\u" not in raw and b"\\U" not in raw:
        return False
    if _SURROGATE_ESCAPE is None:
        _SURROGATE_ESCAPE = re.compile(rb"\\[uU][dD][89abcdefABCDEF]")
    return _SURROGATE_ESCAPE.search(raw) is not None


def loaded() -> Orjson | None:
    """The orjson module if this process imported it already (never imports it)."""
    if "orjson" not in sys.modules:
        return None
    import orjson  # a lookup in sys.modules

    return orjson


def fast(amount: int = 0) -> Orjson | None:
    """The orjson module when it is loaded, or once ``amount`` more bytes make it pay."""
    global _handled
    module = loaded()
    if module is None:
        _handled += amount
        if _handled < ORJSON_AFTER_BYTES:
            return None
        import orjson as module
    return module


def use_fast() -> Orjson:
    """Import orjson now: a long-lived process (the Python API, the MCP and HTTP servers)
    pays its import once, and every commit after it encodes and decodes several times
    faster, with the same bytes and values (a writer does this while it holds the
    store's lock, so the others wait for it)."""
    import orjson

    return orjson


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(name)  # NaN, Infinity, -Infinity: orjson refuses them


def _float(text: str) -> float:
    value = float(text)
    if value in (_INF, -_INF):
        raise ValueError(text)  # orjson refuses a number that overflows
    return value


def _int(text: str) -> int | float:
    value = int(text)
    if _INT_MIN <= value <= _INT_MAX:
        return value
    return float(text)  # orjson reads integers past 64 bits as floats


_ASK_ORJSON = object()
#: orjson refuses JSON nested deeper than this.
_ORJSON_DEPTH = 1024
# Python 3.11's json stops at the interpreter's recursion limit (1,000: below orjson's);
# from 3.12 on, its C scanner reads deeper, so depth is checked after the parse.
_CHECK_DEPTH = sys.version_info >= (3, 12)


def _deeper_than_orjson(raw: bytes, value: Any) -> bool:
    """Whether ``value`` nests deeper than orjson reads (containers in containers)."""
    if raw.count(b"[") + raw.count(b"{") <= _ORJSON_DEPTH:
        return False  # too few brackets for that depth: the common case, at C speed
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > _ORJSON_DEPTH:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def _standard(raw: bytes) -> Any:
    """What orjson reads, or None-like markers: ``_ASK_ORJSON`` when only orjson can
    tell, and a ValueError when orjson refuses the bytes too."""
    if fast(len(raw)) is not None or _has_surrogate_escape(raw):
        return _ASK_ORJSON
    try:
        text = raw.decode("utf-8")  # strict: orjson refuses what is not UTF-8 as well
        value = json.loads(
            text, parse_constant=_refuse_constant, parse_float=_float, parse_int=_int
        )
    except RecursionError:
        return _ASK_ORJSON  # orjson reads up to 1,024 levels
    if _CHECK_DEPTH and isinstance(value, dict | list) and _deeper_than_orjson(raw, value):
        return _ASK_ORJSON
    return value


def loads(raw: bytes) -> Any:
    """``orjson.loads(raw)``: the same value, or ``orjson.JSONDecodeError``."""
    try:
        value = _standard(raw)
    except ValueError:
        value = _ASK_ORJSON  # refused: orjson's error carries the message
    if value is _ASK_ORJSON:
        import orjson

        return orjson.loads(raw)
    return value


def parses(raw: bytes) -> tuple[bool, Any]:
    """``(True, value)`` when ``orjson.loads(raw)`` reads ``value``, else ``(False, None)``,
    without importing orjson for bytes both refuse."""
    try:
        value = _standard(raw)
    except ValueError:
        return False, None
    if value is _ASK_ORJSON:
        import orjson

        try:
            return True, orjson.loads(raw)
        except orjson.JSONDecodeError:
            return False, None
    return True, value


def dumps(value: Any) -> bytes:
    """JSON bytes that read back as ``orjson.dumps(value)`` does (refused where it refuses)."""
    module = fast()
    if module is None:
        from . import plainjson

        try:
            encoded = plainjson.dumps(value, newline=False)
        except TypeError:
            pass  # a type only orjson writes (a datetime, a UUID), or its own refusal
        else:
            fast(len(encoded))
            return encoded
        import orjson

        return orjson.dumps(value)
    return module.dumps(value)


def reads(raw: bytes) -> Any:
    """Read back what :func:`dumps` wrote."""
    module = fast()
    return module.loads(raw) if module is not None else json.loads(raw)


#: Items of a list or object above which :func:`dumps_indented` uses orjson.
ORJSON_FROM_ITEMS = 64


def dumps_indented(value: Any) -> bytes:
    """``orjson.dumps(value, option=OPT_INDENT_2 | OPT_SORT_KEYS)``, the same bytes."""
    module = fast()
    if module is None and not (isinstance(value, list | dict) and len(value) > ORJSON_FROM_ITEMS):
        from . import plainjson

        try:
            return plainjson.dumps(value, newline=False)
        except TypeError:
            pass  # a type only orjson writes, or its own refusal
    import orjson

    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
