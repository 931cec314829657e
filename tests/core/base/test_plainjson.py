"""The standard-library encoder writes orjson's bytes (core/base/plainjson.py), indented
as table files are and compact as the log's records are."""

from __future__ import annotations

import math
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.base import plainjson

OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE

# Text as agents write it: any Unicode but lone surrogates (which neither encoder writes),
# with control characters, quotes, backslashes and non-ASCII well represented.
TEXT = st.text(
    st.one_of(
        st.characters(blacklist_categories=("Cs",)),
        st.sampled_from(list('"\\/\x00\x01\x08\x0c\n\r\t\x1f\x7f\u2028é€😀')),
    ),
    max_size=40,
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1e-3, max_value=1e-3),  # the exponents Python and orjson spell apart
    st.sampled_from([1e-5, -2.5e-7, 1.5e16, 0.1, 1e22, 5e-324, 0.0, -0.0, 0.6833333333333333]),
    TEXT,
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(TEXT, inner, max_size=5),
    ),
    max_leaves=40,
)


# 300, 200 and 100 draws, not 1500, 1000 and 300 (hypothesis's default is 100): the
# encoder breakages tried (the -5 exponent spelled as Python spells it, one-digit
# exponents left padded, keys left unsorted) failed at these counts as at the old ones,
# under the CI profile's derandomized draws; the awkward values below stay pinned.
@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(DOCUMENTS)
def test_any_document_is_written_as_orjson_writes_it(value: Any) -> None:
    assert plainjson.dumps(value) == orjson.dumps(value, option=OPTIONS)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(DOCUMENTS)
def test_any_document_is_written_compact_as_orjson_writes_it(value: Any) -> None:
    assert plainjson.dumps_compact(value) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.dictionaries(TEXT, DOCUMENTS, max_size=6))
def test_a_document_inside_a_table_file_is_written_as_orjson_writes_it(doc: Any) -> None:
    whole = orjson.dumps({"documents": {"d": doc}}, option=OPTIONS)
    nested = plainjson.dumps_nested(doc, "    ", 2)
    assert whole == b'{\n  "documents": {\n    "d": ' + nested + b"\n  }\n}\n"


@pytest.mark.parametrize(
    "value",
    [
        {"score": 0.1 + 0.2, "small": 1e-5, "tiny": 1.5e-9, "big": 1.7976931348623157e308},
        {"é": "ü", "\U0001f600": ["\x00\x1f", "tab\there"], "e": {}, "a": []},
        {"nan": math.nan, "inf": -math.inf, "top": 2**64 - 1, "bottom": -(2**63)},
        ("tuple", 1, [True, False, None]),
        {"e16": 1e16, "-e16": -1e16, "e17": 1.2345678901234568e17, "e308": 1e308},
        {"zero": 0.0, "negzero": -0.0, "e-5": -1.2345678901234567e-5, "e-7": 1e-7, "e-4": 1e-4},
        {"safe": 2**53 + 1, "i63": 2**63, "neg": -(2**63) + 1, "one": 1.0, "int": 1},
        {"escapes": '"\\/\b\f\n\r\t\x00\x1f\x7f\u2028\u2029', "": ""},
        {"nested": {"a": [{"b": [[], {}]}, [[[]]]], "z": {"y": {"x": {}}}}},
        {},
        [],
        "",
        [{}, [], "", 0, -0.0],
    ],
)
def test_known_awkward_values(value: Any) -> None:
    assert plainjson.dumps(value) == orjson.dumps(value, option=OPTIONS)
    assert plainjson.dumps_compact(value) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (2**64, "Integer exceeds 64-bit range"),
        (-(2**63) - 1, "Integer exceeds 64-bit range"),
        ({1: "a"}, "Dict key must be str"),
        ("\ud800", "surrogates not allowed"),
        (object(), "not JSON serializable"),
    ],
)
def test_what_orjson_refuses_is_refused(value: Any, message: str) -> None:
    with pytest.raises(TypeError):
        orjson.dumps(value, option=OPTIONS)
    with pytest.raises(TypeError, match=message):
        plainjson.dumps(value)
    with pytest.raises(TypeError, match=message):
        plainjson.dumps_compact(value)


def test_nesting_is_refused_where_orjson_refuses_it() -> None:
    def nest(levels: int) -> Any:
        value: Any = 1
        for _ in range(levels):
            value = [value]
        return value

    limit = plainjson.DEPTH_LIMIT
    assert plainjson.dumps(nest(limit)) == orjson.dumps(nest(limit), option=OPTIONS)
    with pytest.raises(TypeError):
        orjson.dumps(nest(limit + 1), option=OPTIONS)
    with pytest.raises(TypeError, match="Recursion limit reached"):
        plainjson.dumps(nest(limit + 1))
    assert plainjson.dumps_compact(nest(limit)) == orjson.dumps(nest(limit))
    with pytest.raises(TypeError, match="Recursion limit reached"):
        plainjson.dumps_compact(nest(limit + 1))
