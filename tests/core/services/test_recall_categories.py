"""A question that names a kind of thing ("jewelry", "sports", "a doctor") finds the
notes that name things of that kind ("a necklace", "volleyball", "the dermatologist")."""

from __future__ import annotations

import pytest

from memwork.core.services.recall import engine
from memwork.core.services.recall.categories import KINDS, member_stems
from memwork.core.services.recall.words import STOP_WORDS, stem, terms
from tests.core.services.recall_notes import first_found

#: The same on a folder and on a Redis store (tests/conftest.py).
BOTH_BACKENDS = True

# Each answer follows a note that shares the question's other words as well as it does:
# without the kind's members, that note comes first.
NOTES = [
    "The Saturday market had a stall of old records",
    "Picked up a silver necklace at the Saturday market",
    "Watched a film on Sunday with Sam",
    "Our volleyball team lost on Sunday",
    "My arm still aches from moving the sofa",
    "The dermatologist checked the mole on my arm",
    "Dinner every evening is pasta lately",
    "An hour of cello every evening now",
    "The billing service owner is Dana from payments",
    "Moved the billing service onto Postgres 16",
    "checkout latency flagged in review",
    "Datadog flagged the checkout latency again",
    "The knee brace arrived",
    "My physician checked the knee again",
]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("how many pieces of jewelry did I get at the market", NOTES[1]),
        ("which sports did I do on Sunday", NOTES[3]),
        ("what did the doctor tell me about my arm", NOTES[5]),
        ("which instrument do I practise in the evening", NOTES[7]),
        # An agent's notes: the kind of tool, the tool's name.
        ("which database does the billing service use", NOTES[9]),
        ("which monitoring tool flagged the checkout latency", NOTES[11]),
        # Two words for one kind: each reaches what the other names.
        ("what did the doctor say about my knee", NOTES[13]),
        # British spelling of the kind, the American one's members.
        ("what jewellery did I get at the market", NOTES[1]),
    ],
)
def test_a_question_naming_a_kind_finds_a_thing_of_that_kind(
    cli,  # noqa: ANN001
    query: str,
    expected: str,
) -> None:
    assert first_found(cli, NOTES, query) == expected


def test_a_note_naming_the_kind_itself_ranks_above_one_naming_a_member(cli) -> None:  # noqa: ANN001
    notes = [
        "Bought a necklace for the wedding in June",
        "Bought new jewelry for the wedding in June",
    ]
    assert first_found(cli, notes, "jewelry for the wedding") == notes[1]


def test_a_thing_does_not_reach_its_kind(cli) -> None:  # noqa: ANN001
    # One way only: asked about a necklace, a note about jewelry is a guess.
    sid = cli("session", "start", "--title", "notes").out.strip()
    for note in ["Sorted the jewelry box on the shelf", "Cleaned the kitchen shelf"]:
        assert cli("observe", "--session", sid, note).code == 0
    hits = cli("--json", "search", "necklace").json()
    assert not [hit for hit in hits if not hit.get("filled")]


def test_a_question_without_a_kind_ranks_as_without_the_list(
    cli,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sid = cli("session", "start", "--title", "notes").out.strip()
    for note in NOTES:
        assert cli("observe", "--session", sid, note).code == 0

    def ranked(query: str) -> list[tuple[str, float]]:
        return [(h["id"], h["score"]) for h in cli("--json", "search", query).json()]

    plain, kind = "a film on Sunday", "which sports did I do on Sunday"
    with_list = ranked(plain), ranked(kind)
    # The list emptied.
    monkeypatch.setattr(engine, "_kinds", lambda: engine._Kinds({}, {}, frozenset()))
    without = ranked(plain), ranked(kind)
    assert with_list[0] == without[0]
    assert with_list[1] != without[1]


def test_the_list_is_well_formed() -> None:
    kinds = member_stems(stem)
    assert len(kinds) > 50
    for head, members in kinds.items():
        assert members, head
        assert head not in members
    words = {w for line in KINDS.split("\n") for w in line.replace(":", " ").split()}
    assert not words & STOP_WORDS
    for word in words:
        # A kind or a member is one word, kept as one term of the index.
        assert terms(word) == [stem(word)], word


def test_a_context_lists_the_thing_its_query_names_the_kind_of(cli) -> None:  # noqa: ANN001
    # The context lists only records holding the query's words: a kind's member counts.
    sid = cli("session", "start", "--title", "billing").out.strip()
    for note in ["Moved the billing service onto Postgres 16", "Lunch with Dana at noon"]:
        assert cli("observe", "--session", sid, note).code == 0
    out = cli("context", "--query", "which database is it on").out
    section = out.split("## Relevant memories\n", 1)[1].split("\n\n", 1)[0]
    assert "Postgres 16" in section
    assert "Lunch" not in section


def test_a_kind_is_matched_as_written_where_its_stem_is_another_words(cli) -> None:  # noqa: ANN001
    # "relatives" and "related" share the stem "relat": only the first names a kind.
    notes = [
        "The wedding venue was booked in May",
        "Walked down the aisle at my cousin's wedding",
    ]
    assert first_found(cli, notes, "which wedding of my relatives did I go to") == notes[1]
    with_kind = cli("--json", "search", "the wedding of a relative", "--kind", "observations")
    related = cli("--json", "search", "the wedding related costs", "--kind", "observations")
    with_kind, related = with_kind.json(), related.json()
    assert with_kind[0]["title"].endswith(notes[1])
    assert related[0]["title"].endswith(notes[0])
