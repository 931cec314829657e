"""orjson's indented, sorted-key JSON, written with the standard library.

memwork's files are orjson's ``OPT_INDENT_2 | OPT_SORT_KEYS`` output. orjson
encodes big tables several times faster than anything in Python, but importing
it costs ~12 ms (it loads dataclasses, uuid and platform), which is most of
what recording one episode costs beyond reading the context. The few small
documents an agent's step changes are encoded here instead, to the same bytes:

- strings as orjson escapes them (``"``, ``\\``, control characters; nothing
  else), which is what the standard library's encoder does without
  ``ensure_ascii``;
- floats in the shortest form that reads back exactly (both use it), spelled as
  orjson spells it: ``0.00001`` where Python's ``repr`` says ``1e-05``, and
  ``1e-7`` for ``1e-07``; NaN and infinities as ``null``;
- integers only in orjson's range (-2**63 … 2**64 - 1), string keys only, at
  most 254 nested containers: beyond those orjson refuses, and so does this.

``tests/core/base/test_plainjson.py`` checks byte-identity with orjson on generated
documents.
"""

from __future__ import annotations

from enum import Enum
from json.encoder import encode_basestring  # the C encoder, not escaping non-ASCII
from typing import Any

_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 64) - 1
#: Containers nested deeper than this are refused, as orjson refuses them.
DEPTH_LIMIT = 254
_INF = float("inf")


def float_text(value: float) -> str:
    """A float as orjson writes it."""
    if value != value or value in (_INF, -_INF):
        return "null"
    text = float.__repr__(value)
    at = text.find("e-0")  # Python pads one-digit negative exponents: 1e-05, 2.5e-07
    if at == -1:
        return text
    mantissa, exponent = text[:at], text[at + 3 :]
    if exponent != "5":
        return f"{mantissa}e-{exponent}"
    # orjson writes exponent -5 in full: 1.5e-05 → 0.000015.
    sign = "-" if mantissa.startswith("-") else ""
    return f"{sign}0.0000{mantissa.lstrip('-').replace('.', '')}"


def _int_text(value: int) -> str:
    if not _INT_MIN <= value <= _INT_MAX:
        raise TypeError("Integer exceeds 64-bit range")
    return int.__repr__(value)


def _write(value: Any, out: list[str], indent: str, depth: int) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is dict or kind is list:
        _container(value, out, indent, depth)
    elif kind is int:
        out.append(_int_text(value))
    elif kind is float:
        out.append(float_text(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, Enum):
        _write(value.value, out, indent, depth)
    elif isinstance(value, int):
        out.append(_int_text(int(value)))
    elif isinstance(value, float):
        out.append(float_text(float(value)))
    elif isinstance(value, (dict, list, tuple)):
        _container(value, out, indent, depth)
    else:
        raise TypeError(f"Type is not JSON serializable: {kind.__name__}")


def _container(value: Any, out: list[str], indent: str, depth: int) -> None:
    depth += 1
    if depth > DEPTH_LIMIT:
        raise TypeError("Recursion limit reached")
    is_dict = isinstance(value, dict)
    if not value:
        out.append("{}" if is_dict else "[]")
        return
    inner = indent + "  "
    between = ",\n" + inner
    if is_dict:
        for key in value:
            if not isinstance(key, str):
                raise TypeError("Dict key must be str")
        out.append("{\n" + inner)
        first = True
        for key in sorted(value):
            if not first:
                out.append(between)
            first = False
            item = value[key]
            kind = type(item)
            # Strings and integers inline: a manifest is thousands of them.
            if kind is str:
                out.append(f"{encode_basestring(key)}: {encode_basestring(item)}")
            elif kind is int and _INT_MIN <= item <= _INT_MAX:
                out.append(f"{encode_basestring(key)}: {int.__repr__(item)}")
            else:
                out.append(encode_basestring(key) + ": ")
                _write(item, out, inner, depth)
        out.append("\n" + indent + "}")
    else:
        out.append("[\n" + inner)
        first = True
        for item in value:
            if not first:
                out.append(between)
            first = False
            _write(item, out, inner, depth)
        out.append("\n" + indent + "]")


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise TypeError("str is not valid UTF-8: surrogates not allowed") from None


def dumps(value: Any, *, newline: bool = True) -> bytes:
    """``orjson.dumps(value, option=OPT_INDENT_2 | OPT_SORT_KEYS [| OPT_APPEND_NEWLINE])``."""
    out: list[str] = []
    _write(value, out, "", 0)
    if newline:
        out.append("\n")
    return _utf8("".join(out))


def dumps_nested(value: Any, indent: str, depth: int) -> bytes:
    """``value`` as it reads inside an indented document, ``depth`` containers deep
    (its first line unindented, its last with no newline)."""
    out: list[str] = []
    _write(value, out, indent, depth)
    return _utf8("".join(out))


def _compact(value: Any, out: list[str], depth: int) -> None:
    """``value`` without whitespace, refusing what :func:`_write` refuses."""
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is dict or (kind is not list and isinstance(value, dict)):
        if depth >= DEPTH_LIMIT:
            raise TypeError("Recursion limit reached")
        for key in value:
            if not isinstance(key, str):
                raise TypeError("Dict key must be str")
        out.append("{")
        first = True
        for key in sorted(value):
            out.append(
                encode_basestring(key) + ":" if first else "," + encode_basestring(key) + ":"
            )
            first = False
            _compact(value[key], out, depth + 1)
        out.append("}")
    elif kind is list or isinstance(value, (list, tuple)):
        if depth >= DEPTH_LIMIT:
            raise TypeError("Recursion limit reached")
        out.append("[")
        for n, item in enumerate(value):
            if n:
                out.append(",")
            _compact(item, out, depth + 1)
        out.append("]")
    elif kind is int:
        out.append(_int_text(value))
    elif kind is float:
        out.append(float_text(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, Enum):
        _compact(value.value, out, depth)
    elif isinstance(value, int):
        out.append(_int_text(int(value)))
    elif isinstance(value, float):
        out.append(float_text(float(value)))
    else:
        raise TypeError(f"Type is not JSON serializable: {kind.__name__}")


def dumps_compact(value: Any) -> bytes:
    """``orjson.dumps(value, option=OPT_SORT_KEYS)``: no whitespace, sorted keys."""
    out: list[str] = []
    _compact(value, out, 0)
    return _utf8("".join(out))
