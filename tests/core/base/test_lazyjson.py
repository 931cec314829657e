"""core/base/lazyjson.py gives orjson's answers from the standard library (orjson not loaded)."""

from __future__ import annotations

import json
import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.base import lazyjson


@pytest.fixture(autouse=True)
def _no_orjson_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a process that has not imported orjson (this one has, to compare)."""
    monkeypatch.setattr(lazyjson, "fast", lambda amount=0: None)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (1 is not 1.0, -0.0 is not 0.0)."""
    stack = [(a, b)]  # iterative: some inputs nest a thousand deep
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, float):
            if math.copysign(1, x) != math.copysign(1, y) or not (x == y or x != x and y != y):
                return False
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif x != y:
            return False
    return True


def _verdict(parse: Any, raw: bytes) -> tuple[str, Any]:
    try:
        return "ok", parse(raw)
    except orjson.JSONDecodeError as exc:
        return "refused", exc.msg


def _agree(raw: bytes) -> None:
    mine, theirs = _verdict(lazyjson.loads, raw), _verdict(orjson.loads, raw)
    assert mine[0] == theirs[0], raw
    if mine[0] == "ok":
        assert _same(mine[1], theirs[1]), raw
    else:
        assert mine[1] == theirs[1]  # orjson's own message
    assert lazyjson.parses(raw)[0] == (theirs[0] == "ok")


VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),  # past 64 bits too: orjson reads those as floats
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(),  # lone surrogates too: written as \ud800 escapes
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(), inner)),
    max_leaves=25,
)


# 300 draws, not 1500 (hypothesis's default is 100): the parser breakages tried (integers
# past 64 bits read as integers, a 64-bit bound moved, lone surrogate escapes let
# through) failed or passed this test alike at 300 and 1500 derandomized draws; the
# bounds and escapes are pinned by the edge cases below, which no draw count replaces.
@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from([None, 2]))
def test_json_written_by_anyone_is_read_as_orjson_reads_it(
    value: Any, ascii_only: bool, indent: int | None
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")  # bytes that are not UTF-8
    _agree(raw)


@settings(max_examples=800, deadline=None)
@given(st.binary(max_size=30))
def test_any_bytes_get_orjsons_verdict(raw: bytes) -> None:
    _agree(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b"NaN",
        b"[Infinity]",
        b"-Infinity",
        b"1e400",
        b"-1e400",
        b"18446744073709551615",
        b"18446744073709551616",
        b"-9223372036854775809",
        b'"\\ud800"',
        b'"\\ud83d\\ude00"',
        b'"\xed\xa0\x80"',
        b"\xef\xbb\xbf{}",
        b"[" * 1020 + b"]" * 1020,
        b"[" * 1030 + b"]" * 1030,
        b'{"a": 1, "a": 2}',
        b"[1,]",
        b"-0",
        b"-0.0",
        b"1E5",
        b" \t\n[]\r\n",
        b'"tab\there"',
        b"",
        b"   ",
        b"[1] x",
        b'{"a"}',
        b"'a'",
        b"01",
        b"1.",
        b".5",
        b"+1",
        b'"\\x"',
        b"tru",
        b"[1,2",
        b'{"a": 1,}',
        b"1e-400",
        b"-1e-400",
        b"123456789012345678901234567890",
        b"-123456789012345678901234567890",
        b"1.7976931348623157e308",
        b'"\\u00e9\\u2028"',
        b'"\\ude00"',
        b"\xff",
        b'"\xc3"',
        b"null\x00",
    ],
    ids=lambda raw: repr(raw[:24]),
)
def test_edge_cases_get_orjsons_verdict(raw: bytes) -> None:
    _agree(raw)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)  # 500 before: see the first property test
@given(VALUES)
def test_what_is_written_reads_back_as_through_orjson(value: Any) -> None:
    try:
        expected = orjson.loads(orjson.dumps(value))
    except TypeError:
        with pytest.raises(TypeError):
            lazyjson.dumps(value)
        return
    assert _same(lazyjson.reads(lazyjson.dumps(value)), expected)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)  # 500 before: see the first property test
@given(VALUES)
def test_indented_output_is_orjsons(value: Any) -> None:
    options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    try:
        expected = orjson.dumps(value, option=options)
    except TypeError:
        with pytest.raises(TypeError):
            lazyjson.dumps_indented(value)
        return
    assert lazyjson.dumps_indented(value) == expected


def test_types_only_orjson_writes_still_go_through_it() -> None:
    from datetime import UTC, datetime

    value = {"at": datetime(2026, 11, 1, tzinfo=UTC)}
    assert lazyjson.reads(lazyjson.dumps(value)) == {"at": "2026-11-01T00:00:00+00:00"}
