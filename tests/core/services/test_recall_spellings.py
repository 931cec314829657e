"""British and American spellings: a note in one is found by a question in the other,
in every form of the word."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.words import terms
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    "Organised the team offsite at the theatre near the harbour",
    # The American spelling of one of the question's words: without the two spellings
    # read as one, the question's other word is a near miss (counted lower) and these
    # win.
    "The team offsite moved to the theater downtown",
    "Her favourite colour for the dashboard theme is a dark grey",
    "The dashboard theme color is still the default",
]


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("colours", "color"),
        ("coloured", "colors"),
        ("organisation", "organization"),
        ("organising", "organize"),
        ("catalogue", "catalog"),
        ("centres", "centered"),
        ("neighbourhood", "neighborhood"),
        ("prioritised", "prioritize"),
    ],
)
def test_both_spellings_are_one_term(british: str, american: str) -> None:
    assert terms(british) == terms(american)


def test_a_word_that_only_looks_british_keeps_its_own_stem() -> None:
    # No rule reads every -ise as -ize: "promise" is not cut down to "prom".
    assert terms("promise") != terms("prom")
    assert terms("surprise") == ["surpris"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("the team offsite at the theater by the harbor", NOTES[0]),
        ("what is her favorite color for the dashboard theme", NOTES[2]),
    ],
)
def test_a_question_in_american_english_finds_a_british_note(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected
