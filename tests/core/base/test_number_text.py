"""Numbers read from text: only ASCII digits are a whole number, and a number too big
for a float still prints in an error line."""

from __future__ import annotations

import pytest

from memwork.core.base.text import is_whole_number, shown_number


@pytest.mark.parametrize("text", ["0", "7", "0042", "1" * 400])
def test_ascii_digits_are_a_whole_number(text: str) -> None:
    assert is_whole_number(text)
    int(text)  # and int() reads it


@pytest.mark.parametrize("text", ["", " 5", "5 ", "-1", "+5", "1.0", "1_000", "²", "①", "٣"])
def test_anything_else_is_not(text: str) -> None:
    # "²" and "①" pass str.isdigit(), and int() refuses them: a door used to end there.
    assert not is_whole_number(text)


def test_a_number_past_a_float_is_shown_short() -> None:
    assert shown_number(10**20) == "1e+20"
    assert shown_number(int("1" * 400)) == "111111… (400 digits)"
    assert shown_number(-int("9" * 500)) == "-999999… (500 digits)"
