"""Numbers read from text: only ASCII digits are a whole number, and a number too big
for a float still prints in an error line."""

from __future__ import annotations

import pytest

from memwork.core.base.numbers import is_finite, is_whole_number, shown_number


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
    assert shown_number(0.5) == "0.5"  # a float as written
    assert shown_number(int("1" * 400)) == "111111… (400 digits)"
    assert shown_number(-int("9" * 500)) == "-999999… (500 digits)"


def test_a_number_is_finite_when_a_float_holds_it() -> None:
    assert is_finite(10**300) and is_finite(-(10**300)) and is_finite(1.5)
    # math.isfinite(10**400) raises OverflowError: an import's epoch ended there.
    assert not is_finite(10**400)
    assert not is_finite(float("inf")) and not is_finite(float("nan"))


def test_the_domain_refuses_a_number_past_a_float_naming_the_field() -> None:
    # Each asked math.isfinite(), which raises OverflowError for such an int (a file
    # an import reads can hold one; the doors refuse ints past 64 bits before).
    from memwork.core.base.errors import InvalidInput
    from memwork.core.domain.lessons import check_decay_rate
    from memwork.core.domain.working_memory.state import check_ttl
    from memwork.core.domain.working_memory.task import clamp_progress
    from memwork.core.models.limits import check_float

    for check, field in (
        (check_ttl, "ttl"),
        (check_decay_rate, "decay_rate"),
        (clamp_progress, "progress_percent"),
        (lambda v: check_float(v, "score"), "score"),
    ):
        with pytest.raises(InvalidInput) as refused:
            check(10**400)
        assert refused.value.field == field
