"""Numbers in notes: one written with commas between its thousands is found by the
number written without them, and the other way round."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.words import words
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    "Paid $4,230.50 for the GPU cluster this month",
    "The queue held 230 jobs and 4 workers at noon",
    "Raised the token budget to 1000000 for the summariser",
    "The summariser spent 1,000 tokens on the last report",
]


def test_a_number_with_thousands_commas_is_one_number() -> None:
    assert words("paid $4,230.50 for 1,000,000 tokens") == [
        "paid",
        "4230",
        "50",
        "1000000",
        "tokens",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,2,3", ["1", "2", "3"]),  # a list: no group of three
        ("1234,567", ["1234", "567"]),  # four digits before the comma: no thousands
        ("4,2300", ["4", "2300"]),  # four digits after it
        ("x1,000", ["x1", "000"]),  # the digits do not begin a number
        ("apples, 300 pears", ["apples", "300", "pears"]),  # a comma in a sentence
    ],
)
def test_other_commas_beside_digits_still_part_words(text: str, expected: list[str]) -> None:
    assert words(text) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Written without commas, the number finds the note that wrote them ...
        ("4230", NOTES[0]),
        # ... and written with them, it finds the note that did not, above the notes
        # that hold its parts alone.
        ("a budget of 1,000,000 tokens", NOTES[2]),
    ],
)
def test_a_number_is_found_however_its_thousands_are_written(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected
