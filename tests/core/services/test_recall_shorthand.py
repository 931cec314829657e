"""A developer's shorthand: a note that writes "db", "prod" or "deps" is found by a
question that writes "database", "production" or "dependencies", and the other way."""

from __future__ import annotations

import pytest

from memwork.core.services.recall.words import terms
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

NOTES = [
    "db tables locked for three minutes",
    # Each rival shares another of the question's words: with the short form and its
    # word read apart, it matches more of the question and wins.
    "tables locked during the upgrade of the billing service",
    "The environment for staging keeps its secrets in vault",
    "staging deploy took twenty minutes",
    "the upgrade of the runner images is postponed",
    "deploy the docs site after the upgrade",
    "Fixed the session bug in login_handler.py",
    "the login page moved",
    "the file with the runner's secrets is in vault",
]


@pytest.mark.parametrize(
    ("short", "long"),
    [
        ("db", "database"),
        ("dbs", "databases"),
        ("prod", "production"),
        ("deps", "dependencies"),
        ("k8s", "kubernetes"),
        ("repos", "repository"),
        ("env", "environments"),
        ("config", "configuration"),
        ("msgs", "messages"),
        ("postgresql", "postgres"),
        # A file's extension is its language or format: "login.py" is a Python file.
        ("py", "python"),
        ("yml", "yaml"),
    ],
)
def test_a_short_form_and_its_word_are_one_term(short: str, long: str) -> None:
    assert terms(short) == terms(long)


def test_shorthand_with_another_everyday_meaning_keeps_its_own_stem() -> None:
    # A doctor, a job application, a temperature: these are not read as their
    # software words.
    assert terms("doc") != terms("documentation")
    assert terms("app") != terms("application")
    assert terms("temp") != terms("temporary")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("which database tables were locked during the upgrade", NOTES[0]),
        ("env for the staging deploy", NOTES[2]),
        ("the python file for login", NOTES[6]),
    ],
)
def test_a_question_finds_a_note_that_writes_its_words_the_other_way(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected
