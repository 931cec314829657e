"""Identifiers in an agent's notes: a function named in camel case is found by the words
it is made of, and by its own name first; words joined by underscores are found by
the name written in camel case."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.words import terms, words
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    "Refactored parseOrderStatus in src/orders/parse.py to handle unknown codes",
    "The billing_api service returned 503 during the canary",
    "getUserById now caches for 30 seconds",
    "Looked up the user by id in the admin console by hand",
    "Status page shows the order queue draining slowly",
]


def test_a_camel_case_identifier_is_a_word_followed_by_its_parts() -> None:
    assert words("Refactored parseOrderStatus today") == [
        "refactored",
        "parseorderstatus",
        "parse",
        "order",
        "status",
        "today",
    ]
    # An acronym inside, an acronym's plural, a digit: each a part of its own.
    assert words("getHTTPResponse") == ["gethttpresponse", "get", "http", "response"]
    assert words("userIDs") == ["userids", "user", "ids"]
    assert words("getV2Api") == ["getv2api", "get", "2", "api"]
    # The parts pass the rule every word passes: stop words and single letters out.
    assert words("isReady") == ["isready", "ready"]
    assert terms("parseOrderStatus") == ["parseorderstatus", "pars", "order", "status"]


def test_words_without_camel_case_are_cut_as_before() -> None:
    # (Two words joined by one hyphen are also the compound: see test_recall_compounds.)
    assert words("billing_api and billing-api on api.example.com") == [
        "billing",
        "api",
        "billing",
        "api",
        "billingapi",
        "api",
        "example",
        "com",
    ]
    # Capitals alone make no identifier: an acronym, a name, a sentence's first word.
    assert words("The NASA team met Alice") == ["nasa", "team", "met", "alice"]
    # Nor does an acronym's plural or a unit: one lower-case letter after capitals.
    assert words("CEOs PDFs GHz IPv6") == ["ceos", "pdfs", "ghz", "ipv6"]


def test_an_identifier_that_begins_with_an_acronym_is_cut_where_its_word_begins() -> None:
    # A capital run followed by a word: the run's last capital begins the word.
    assert words("HTTPServer") == ["httpserver", "http", "server"]
    assert words("IOError") == ["ioerror", "io", "error"]
    assert terms("OOMKilled") == ["oomkil", "oom", "kill"]
    assert words("JPMorgan") == ["jpmorgan", "jp", "morgan"]
    assert words("OAuth2Token") == ["oauth2token", "auth", "2", "token"]


def test_a_very_long_identifier_is_cut_in_time_that_grows_with_its_length() -> None:
    # Each capital of a word is a hump: looking around each one from the word's start
    # took 0.7 s for 8,000 characters, 11 s for 32,000 (the square of the length).
    import time

    def seconds(text: str) -> float:
        # The best of three: a busy moment on the machine slows one run, not all.
        took = []
        for _ in range(3):
            began = time.perf_counter()
            terms(text)
            took.append(time.perf_counter() - began)
        return min(took)

    plain = seconds("ab " * 2_700)  # as many characters, in words
    long_one = seconds("aB" * 4_000)
    assert len(terms("aB" * 4_000)) == 4_000  # the word, then "ba" each time
    assert long_one < 20 * plain + 0.05, (long_one, plain)
    # Many identifiers: searching the words once for each grew as their product.
    many = " ".join(f"getItem{i}Value" for i in range(16_000))  # 277k characters
    words_alike = seconds("ab " * 92_000)
    took = seconds(many)
    assert took < 10 * words_alike + 0.05, (took, words_alike)


def test_text_in_another_script_splits_its_identifiers_the_same_way() -> None:
    assert words("café parseOrderStatus") == ["cafe", "parseorderstatus", "parse", "order"] + [
        "status"
    ]


#: Notes whose identifiers begin with an acronym, each beside a rival that shares more
#: of the question's words until the identifier is cut into its own.
ACRONYM_NOTES = [
    "IOError when the cache file was locked",
    "Reading the cache file took two seconds",
    "HTTPServer hangs after the upgrade",
    "The http proxy hangs after the upgrade",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("io error reading the cache file", ACRONYM_NOTES[0]),
        ("why does the http server hang", ACRONYM_NOTES[2]),
    ],
)
def test_a_note_that_names_an_acronym_led_identifier_is_found_by_its_words(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, ACRONYM_NOTES, query) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # The words a function is made of find the note that names it.
        ("where do we parse the order status", NOTES[0]),
        # A name written in camel case finds words joined by an underscore.
        ("billingApi", NOTES[1]),
        # The exact name ranks the note that names it above one that shares its words.
        ("getUserById", NOTES[2]),
    ],
)
def test_a_note_that_names_a_function_is_found_by_its_words(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected
