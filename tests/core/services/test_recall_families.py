"""A noun and the word it is made from are one term: "our marriage" meets "we got
married", "my decision" meets "what did I decide"."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.families import PAIRS
from memwork.core.services.recall.words import STOP_WORDS, terms
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True


@pytest.mark.parametrize(
    ("noun", "word"),
    [
        ("marriage", "married"),
        ("decisions", "decided"),
        ("payments", "paying"),
        ("flights", "flies"),
        ("sales", "selling"),
    ],
)
def test_a_noun_and_its_word_are_one_term(noun: str, word: str) -> None:
    assert terms(noun) == terms(word)


def test_the_list_is_well_formed() -> None:
    words = PAIRS.split()
    assert len(words) % 2 == 0
    assert not set(words) & STOP_WORDS
    for word in words:
        assert len(terms(word)) == 1, word


def test_a_question_with_the_noun_finds_the_verb(cli) -> None:  # noqa: ANN001
    notes = [
        "Booked the venue for the party in June",
        "Lunch was soup again",
        "We got married at the venue in June",
        "Paid the gas bill",
        # The noun written too: the question's "marriage" is then no unknown word,
        # which the typo fallback would read by the stem it begins with.
        "Read an article about marriage and taxes",
    ]
    assert first_found(cli, notes, "which venue in June was our marriage at") == notes[2]
