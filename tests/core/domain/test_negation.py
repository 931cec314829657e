"""A lesson is never a near-duplicate of its negation.

Described in docs/MEMORY.md, Lessons.

The polarity rules live in ``core.domain.negation`` (plain functions of text); the
lesson store uses them so "Never X" does not reinforce "Always X".
"""

from __future__ import annotations

from datetime import datetime

import pytest
from rapidfuzz import fuzz

from memwork.core.base.text import normalise as lesson_normalise
from memwork.core.domain import lessons
from memwork.core.domain.negation import clauses, contradicts, is_negated, normalise, opposed
from memwork.core.storage.store import Store

ACTOR = "test"
T0 = "2026-11-01T12:00:00Z"

#: Each pair says opposite things: never one lesson.
OPPOSITES = [
    (
        "Never run the unit tests before deploying to production",
        "Always run the unit tests before deploying to production",
    ),
    ("use sudo in build scripts", "Do not use sudo in build scripts"),
    ("Don't retry on timeout", "Retry on timeout"),
    ("Avoid global state in request handlers", "Use global state in request handlers"),
    ("Stop retrying failed uploads", "Keep retrying failed uploads"),
    ("Deploy without running the smoke tests", "Deploy after running the smoke tests"),
    ("Never deploy without running the tests", "Deploy without running the tests"),
    ("You must not push to main on Fridays", "You must push to main on Fridays"),
    ("No force pushes to main", "Force pushes to main are fine"),
    ("The cache isn\u2019t thread-safe", "The cache is thread-safe"),
    ("Do not cache API responses in tests", "Cache API responses in tests"),
    ("Never log request bodies", "Log request bodies"),
    ("dont skip the linter", "skip the linter"),
    ("Shouldn't retry on 4xx errors", "Should retry on 4xx errors"),
    ("Stop using print for debugging", "Use print for debugging"),
    ("Neither mock the database nor the queue", "Mock the database and the queue"),
    ("Run migrations with no downtime window", "Run migrations with a downtime window"),
    ("Deploying on Fridays is not allowed", "Deploying on Fridays is allowed"),
    ("Prefer tabs, never spaces", "Prefer tabs, always spaces"),
    ("Avoid calling the API in a loop", "Call the API in a loop"),
    ("Nothing should be written to /tmp", "Everything should be written to /tmp"),
    ("Can't reuse the staging token in CI", "Can reuse the staging token in CI"),
    ("Refrain from editing generated files", "Edit generated files"),
]

#: Each pair says the same thing: paraphrases, both positive or both negative.
SAME_SENSE = [
    ("Always pin dependency versions", "Always pin the dependency versions"),
    ("Never commit secrets to git", "Do not commit secrets to git"),
    ("Avoid global state", "Avoid the global state"),
    ("Don't retry on timeout", "Do not retry on timeouts"),
    (
        "Use the --no-cache flag when building images",
        "Use the --no-cache flag when building the images",
    ),
    ("Stop the server before migrating", "Stop the server before migrating the database"),
    ("Run as non-root in containers", "Run as non-root in the containers"),
    ("Not only lint but also test", "Lint and also test"),
    ("Never deploy without running the tests", "Always run the tests before deploying"),
    ("Retry on timeout, not on auth errors", "Retry on timeout"),
    ("Check the knot configuration", "Check the knot configurations"),
    ("Notify the on-call engineer", "Notify the on-call engineers"),
    ("Never run migrations by hand", "Never run the migrations by hand"),
    ("Avoid sudo in build scripts", "Never use sudo in build scripts"),
    ("Must use HTTPS for webhooks", "Always use HTTPS for webhooks"),
    ("Don't use sudo", "You should not use sudo"),
    ("The build isn't flaky", "The build is not flaky"),
    ("Nobody should push to main", "No one should push to main"),
    ("Stop retrying on timeout", "Never retry on timeout"),
    ("Neither mock the database nor the queue", "Do not mock the database or the queue"),
]


@pytest.mark.parametrize(("a", "b"), OPPOSITES)
def test_opposites_contradict_both_ways(a: str, b: str) -> None:
    assert contradicts(a, b) and contradicts(b, a)


@pytest.mark.parametrize(("a", "b"), SAME_SENSE)
def test_paraphrases_do_not_contradict_either_way(a: str, b: str) -> None:
    assert not contradicts(a, b) and not contradicts(b, a)


def test_enough_pairs_are_covered() -> None:
    assert len(OPPOSITES) >= 20 and len(SAME_SENSE) >= 20


def test_normalise_spells_out_contractions() -> None:
    assert normalise("Don\u2019t  STOP, can't, won't, isn't, cannot, shouldnt") == (
        "do not stop, can not, will not, is not, can not, should not"
    )


def test_negators_inside_words_and_flags_are_not_negators() -> None:
    for text in ("Use --no-cache", "Notify nobody-bot", "Tie a knot", "Run a no-op", "Annotate"):
        assert not is_negated(text), text


def test_stop_negates_only_before_an_ing_verb() -> None:
    assert is_negated("Stop retrying on timeout")
    assert contradicts("Stop retrying on timeout", "Retry on timeout")
    # "stop the server" is the antonym verb of "start the server", not a negator of
    # "the server": it contradicts starting it, and agrees with never starting it.
    assert contradicts("Stop the server before migrating", "Start the server before migrating")
    assert not contradicts(
        "Stop the server before migrating", "Never start the server before migrating"
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Enable strict mode in the compiler", "Disable strict mode in the compiler"),
        ("Allow uploads from the CI runner", "Deny uploads from the CI runner"),
        ("Add a retry to the webhook", "Remove the retry from the webhook"),
        ("Increase the pool size under load", "Decrease the pool size under load"),
        ("Run migrations before deploying", "Run migrations after deploying"),
        ("Check the logs before restarting", "Restart before checking the logs"),
    ],
)
def test_antonym_verbs_and_reversed_orders_are_opposites(first: str, second: str) -> None:
    assert contradicts(first, second) and opposed(first, second)
    assert contradicts(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Never disable strict mode", "Enable strict mode"),
        ("Check the logs before restarting", "Restart after checking the logs"),
        ("Run migrations after deploying", "Don't run migrations before deploying"),
        ("Start the server before the tests, stop it after them", "Start the server first"),
    ],
)
def test_double_opposites_agree(first: str, second: str) -> None:
    assert not contradicts(first, second)


def test_placement_a_negated_side_clause_does_not_negate_the_instruction() -> None:
    assert [c.negated for c in clauses("Retry on timeout, but not on auth errors")] == [
        False,
        True,
    ]
    assert not is_negated("Retry on timeout, but not on auth errors")
    assert contradicts("Retry on timeout, not on auth errors", "Retry on auth errors")
    assert contradicts(
        "Retry on timeout, not on auth errors", "Retry on auth errors, not on timeout"
    )


@pytest.mark.parametrize(
    ("other", "flagged"),
    [
        # A lesson that only shares the contrasted word is about something else.
        ("Run the smoke test before tagging a release", False),
        ("Tag the release after the changelog is merged", False),
        # Doing the very action the contrast rules out is the opposite.
        ("Pin images by tag", True),
        ("Pin base images by their tag", True),
    ],
)
def test_a_contrast_after_a_comma_is_about_the_clause_before_it(other: str, flagged: bool) -> None:
    lesson = "Pin container images by digest, not by tag"
    assert opposed(lesson, other) is flagged
    assert opposed(other, lesson) is flagged


def test_double_negation_is_positive() -> None:
    assert not is_negated("Never deploy without tests")
    assert is_negated("Never deploy with failing tests")


def test_the_issue_pairs_are_near_duplicates_by_words_alone() -> None:
    # Why polarity is needed at all: fuzzy similarity calls these the same lesson.
    for a, b in OPPOSITES[:3]:
        assert fuzz.token_set_ratio(lesson_normalise(a), lesson_normalise(b)) >= 90


# -- lessons keep both sides ------------------------------------------------------------
@pytest.mark.parametrize(("first", "second"), OPPOSITES[:3])
def test_cli_a_negation_is_kept_apart_and_reinforces_nothing(cli, first: str, second: str) -> None:  # noqa: ANN001
    original = cli("lesson", "add", first, now=T0).out.strip()
    done = cli("lesson", "add", second, "--json", now=T0)
    assert done.code == 0
    added = done.json()
    assert added["action"] == "created" and added["id"] != original
    assert added["contradicts"] == [original] and added["reinforcements"] == 0
    assert done.err.startswith(f"contradicts {original}: it says the opposite (both kept")
    rows = {r["id"]: r for r in cli("lesson", "list", "--json").json()}
    assert set(rows) == {original, added["id"]}
    assert rows[original]["reinforcements"] == 0 and rows[original]["confidence"] == 0.5
    assert rows[original].get("wordings", []) == []


PARAPHRASES = [
    ("Always pin dependency versions", "Always pin the dependency versions"),
    ("Avoid global state", "Avoid the global state"),
    ("Never run migrations by hand", "Never run the migrations by hand"),
    ("Don't retry on timeout", "Do not retry on timeout"),
    ("Use the --no-cache flag when building images", "Use the --no-cache flag when building"),
]


@pytest.mark.parametrize(("first", "second"), PARAPHRASES)
def test_cli_paraphrases_are_near_duplicates_not_negations(cli, first: str, second: str) -> None:  # noqa: ANN001
    assert fuzz.token_set_ratio(lesson_normalise(first), lesson_normalise(second)) >= 90
    original = cli("lesson", "add", first, now=T0).out.strip()
    asked = ("--on-duplicate", "reinforce")
    done = cli("lesson", "add", second, *asked, "--json", now=T0)
    added = done.json()
    assert added["action"] == "reinforced" and added["id"] == original
    assert added["wordings"] == [second] and added["contradicts"] == []
    assert done.err.startswith(f"near-duplicate of {original}")


def test_a_paraphrase_is_found_past_a_more_similar_negation(store: Store, now: datetime) -> None:
    negated = lessons.add_lesson(
        store, "Do not use sudo in build scripts", now=now, actor=ACTOR
    ).lesson
    kept = lessons.add_lesson(
        store, "use sudo in build scripts", now=now, actor=ACTOR, on_duplicate="keep-both"
    )
    assert kept.action == "created" and kept.contradicts == [negated["id"]]
    again = lessons.add_lesson(
        store, "Use sudo in the build scripts", now=now, actor=ACTOR, on_duplicate="reinforce"
    )
    assert again.action == "reinforced" and again.lesson["id"] == kept.lesson["id"]
    assert again.contradicts == [negated["id"]]


def test_near_duplicate_clusters_never_join_a_lesson_and_its_negation(
    store: Store, now: datetime
) -> None:
    for text in (
        "Always run the unit tests before deploying to production",
        "Never run the unit tests before deploying to production",
    ):
        lessons.add_lesson(store, text, now=now, actor=ACTOR, on_duplicate="keep-both")
    lessons.add_lesson(
        store,
        "Always run all unit tests before deploying to production",
        now=now,
        actor=ACTOR,
        on_duplicate="keep-both",
    )
    with store.reading():
        every = lessons.all_lessons(store)
    clusters = lessons.near_duplicate_clusters(every, now)
    assert len(clusters) == 1
    assert all("Never" not in x["content"] for x in clusters[0])
    assert len(clusters[0]) == 2
