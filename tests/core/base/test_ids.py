"""Record ids: Crockford base-32, time first, so they sort by creation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memwork.core.base import ids
from memwork.core.base.clock import iso


def _digit_by_digit(number: int, length: int) -> str:
    out = ""
    for _ in range(length):
        number, rem = divmod(number, 32)
        out = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"[rem] + out
    return out


@given(st.integers(min_value=0, max_value=2**140), st.integers(min_value=1, max_value=28))
def test_encode_writes_the_low_bits_in_crockford_base32(number: int, length: int) -> None:
    assert ids.encode(number, length) == _digit_by_digit(number, length)


@given(st.integers(min_value=0, max_value=2**140), st.integers(min_value=1, max_value=28))
def test_decode_reads_back_what_encode_wrote(number: int, length: int) -> None:
    assert ids.decode(ids.encode(number, length)) == number % 32**length


@pytest.mark.parametrize("text", ["01U", "0i", "-1", "1_0", " 1", "01\u0663", ""])
def test_decode_refuses_what_is_not_crockford(text: str) -> None:
    with pytest.raises(ValueError):
        ids.decode(text)


def test_ids_made_later_sort_later() -> None:
    made = [ids.new_id("les", millis=1_790_000_000_000 + step // 3) for step in range(300)]
    assert made == sorted(made) and len(set(made)) == 300
    assert all(len(i) == len("les_") + 26 for i in made)


def test_iso_formats_each_instant_it_is_given() -> None:
    start = datetime(2026, 11, 26, 10, 0, tzinfo=UTC)
    moments = [start + timedelta(microseconds=7 * n) for n in range(50)]
    for moment in moments + moments[::-1]:
        assert iso(moment) == moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    local = datetime(2026, 11, 26, 12, 0, tzinfo=UTC).astimezone(timezone(timedelta(hours=2)))
    assert iso(local) == "2026-11-26T12:00:00.000000Z"
