"""Past tenses and plurals a stemmer leaves apart from their word: a question in the
base form ("what did I buy") finds the note that says what happened ("I bought")."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.irregular import BASE
from memwork.core.services.recall.words import STOP_WORDS, terms
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    "I bought a second-hand road bike from a neighbour",
    "Looking at road bike prices again, nothing under 600",
    "We met the new landlord at the cafe on Elm Street",
    "The letting agent wants to meet about the lease next month",
    "Took the children to the dentist for a check-up",
    "Booked the dentist again: the dentist wants a brace fitted",
]


@pytest.mark.parametrize(
    ("form", "word"),
    [
        ("bought", "buying"),
        ("met", "meeting"),
        ("went", "going"),
        ("thought", "thinks"),
        ("children", "child"),
        ("knives", "knife"),
        ("teeth", "tooth"),
        ("forgotten", "forgets"),
        ("older", "old"),
        ("cheapest", "cheap"),
        ("happier", "happy"),
        ("bigger", "big"),
    ],
)
def test_a_form_and_its_word_are_one_term(form: str, word: str) -> None:
    assert terms(form) == terms(word)


@pytest.mark.parametrize(
    ("form", "word"),
    # A rose is a flower, a bit a small amount, LED a lamp, the ground underfoot, and
    # Drew a name.
    [("rose", "rise"), ("bit", "bite"), ("led", "lead"), ("ground", "grind"), ("drew", "draw")],
)
def test_forms_that_are_as_often_another_word_stay_apart(form: str, word: str) -> None:
    assert terms(form) != terms(word)


def test_no_form_stands_for_a_stop_word() -> None:
    # A stop word is left out before stemming; a form standing for one would bring it
    # back as a term.
    assert not {base for base in BASE.values() if base in STOP_WORDS}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # The question asks in the base form, the note says what happened.
        ("what did I buy for cycling", NOTES[0]),
        ("where did we meet the landlord", NOTES[2]),
        ("who did I take to the dentist", NOTES[4]),
    ],
)
def test_a_question_in_the_base_form_finds_what_happened(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected


@pytest.mark.parametrize("text", ["I won't rotate the keys", "WON’T rotate the keys"])
def test_wont_is_not_the_past_of_win(text: str) -> None:
    # "won't" is cut at its apostrophe; the "won" left would stand for "win".
    assert terms(text) == terms("rotate the keys")
    assert terms("we won the cup") == terms("win the cup")


def test_a_superlative_asks_about_its_adjective(cli) -> None:  # noqa: ANN001
    notes = [
        "Priced two tents at the outlet",
        "Lunch was soup again",
        "The cheap tent from the outlet leaked",
        "Paid the gas bill",
        # The superlative written too: the question's "cheapest" is then no unknown
        # word, which the typo fallback would read as "cheap".
        "The cheapest flights leave on Tuesdays",
    ]
    assert first_found(cli, notes, "which tent from the outlet was the cheapest") == notes[2]
