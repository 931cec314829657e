"""Compounds written with a hyphen or without it ("e-mail" and "email", "co-worker"
and "coworker") meet, and the languages named with signs ("C++", "C#", "F#", ".NET")
are words of their own."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.services.recall.words import terms, words
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True


def test_two_words_joined_by_a_hyphen_are_also_the_compound() -> None:
    assert words("my co-worker Sam") == ["co", "worker", "coworker", "sam"]
    # A part of one letter is left out alone, not in the compound.
    assert words("an e-mail and a T-shirt") == ["mail", "email", "shirt", "tshirt"]
    # Stemmed as one word: the plural written either way is the same term.
    assert terms("co-workers") == ["co", "worker", "cowork"]
    assert terms("coworkers") == ["cowork"]


def test_a_compound_is_the_same_typed_composed_or_decomposed() -> None:
    # "é" typed as "e" and an accent: the accent is part of the word, not its end.
    assert terms("caf\u00e9-bar") == terms("cafe\u0301-bar") == ["cafe", "bar", "cafebar"]
    # A Hindi vowel sign is a mark too: the compound holds the whole word.
    assert words("बिल्ली-घर")[-1] == "बिल्लीघर"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab-\u00e9\u0301 1_+#.cCfFnNeEtT\u093f\u0915", max_size=30))
def test_hyphens_and_signs_cut_without_fail_and_alike_in_either_form(text: str) -> None:
    found = terms(text)
    assert all(found)
    assert terms(unicodedata.normalize("NFD", text)) == terms(unicodedata.normalize("NFC", text))


@pytest.mark.parametrize(
    "text",
    [
        "us-east-1",  # a digit in it: a name, a region
        "2023-10-03",  # a date
        "state-of-the-art",  # a chain of more than two
        "snake_case-word",  # an underscore beside it
    ],
)
def test_chains_digits_and_underscores_make_no_compound(text: str) -> None:
    assert words(text) == words(text.replace("-", " "))


def test_the_languages_named_with_signs_are_words() -> None:
    assert words("the C++ build") == ["cpp", "build"]
    assert words("C/C++, c# and F# code") == ["cpp", "csharp", "fsharp", "code"]
    assert words("C++17") == ["cpp", "17"]
    assert words("moved it to .NET 8") == ["moved", "net", "dotnet", "8"]
    # Not a domain's ending, nor a sum or a channel.
    assert "dotnet" not in words("example.net asp.net")
    assert words("a+b in #general") == ["general"]
    assert words("F++ and c+") == []  # no such language: the signs go, as before


NOTES = [
    "Birthday lunch for the whole team at noon",
    "My co-worker Dana has her birthday on Friday",
    "Sent the invoice by post to the vendor",
    "Sent the vendor an e-mail with the invoice attached",
    # Without "C++" as a word, the Python note, as short, ranks first (a note between
    # them, so neither repeats the words of the one before it).
    "The C++ build of the importer fails at the linker",
    "Standup moved to ten tomorrow",
    "Python build of the importer fails",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Written without the hyphen, the compound finds it written with one.
        ("coworker birthday", NOTES[1]),
        ("which invoice went by email", NOTES[3]),
        # "C++" was nothing to the words: every build note ranked alike.
        ("why does the C++ build of the importer fail", NOTES[4]),
    ],
)
def test_a_compound_or_a_signed_language_finds_its_note(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected
