"""Everyday words for one thing: a memory that says "bought" is found by a question
that asks what was "purchased", one about "mom" by a question about "my mother"."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.words import terms
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    # Each rival comes first and shares the question's other words: with the two words
    # read apart, it is the shorter match and wins.
    "scratch grains for the hens",
    "Bought 20 pounds of scratch grains for the hens",
    "birthday dinner moved",
    "Mom's birthday dinner is on the 12th at the Thai place",
    "the running plan",
    "We started a couch to 5k running plan in March",
    "Sam watched the game",
    "Watched a film with Sam, the one about the heist",
]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("purchased", "bought"),
        ("purchases", "buy"),
        ("began", "started"),
        ("movies", "films"),
        ("photographs", "photos"),
        ("pics", "photo"),
        ("mom", "mother"),
        ("mum", "mother"),
        ("dad", "father"),
        ("grandma", "grandmother"),
        ("couch", "sofa"),
        ("fridge", "refrigerator"),
        ("bikes", "bicycles"),
        ("TV", "television"),
        ("attorney", "lawyer"),
    ],
)
def test_two_words_for_one_thing_are_one_term(one: str, other: str) -> None:
    assert terms(one) == terms(other)


def test_words_that_only_overlap_keep_their_own_stems() -> None:
    # "kid" is also "just kidding", "big" and "large" are said of different things.
    assert terms("kid") != terms("child")
    assert terms("big") != terms("large")
    assert terms("job") != terms("work")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("the scratch grains I purchased for the hens", NOTES[1]),
        ("my mother's birthday dinner", NOTES[3]),
        ("I began a running plan", NOTES[5]),
        ("which movie did I watch with Sam", NOTES[7]),
    ],
)
def test_a_question_finds_a_memory_that_says_it_in_other_words(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected
