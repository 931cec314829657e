"""The global search index: matching, ranking, incremental updates."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from rapidfuzz.distance import OSA

from memwork.core.services.recall.search_index import (
    FUZZY_MIN_LEN,
    FUZZY_WIDE_LEN,
    INFIX_MIN_LEN,
    SearchDoc,
    SearchHit,
    SearchIndex,
    normalize,
)


def doc(ref: str, title: str, text: str = "", kind: str = "episode") -> SearchDoc:
    return SearchDoc(kind=kind, ref=ref, title=title, text=text)


def refs(hits: list[SearchHit]) -> list[str]:
    return [hit.doc.ref for hit in hits]


CORPUS = [
    doc("ep_1", "Deploy rollback for billing-api", "Investigated auth-service, found JWT bug"),
    doc("mis_1", "JWT expiry bug", "Tokens expired early because of clock skew", "mistake"),
    doc("rul_1", "Check the database migration", "No migration during a deploy freeze", "rule"),
    doc("les_1", "Cache invalidation", "Stale cache after the rollback of the deploy", "lesson"),
    doc("obs_1", "Latency went up", "p95 rose after deploy 4312", "observation"),
]


@pytest.fixture
def index() -> SearchIndex:
    return SearchIndex(CORPUS)


# ------------------------------------------------------------------ matching


@pytest.mark.parametrize("query", ["", "   ", "!!! ---", "\t\n"])
def test_empty_query_returns_nothing(index: SearchIndex, query: str) -> None:
    assert index.search(query) == []


def test_empty_index_returns_nothing() -> None:
    assert SearchIndex([]).search("deploy") == []
    assert len(SearchIndex()) == 0


def test_case_insensitive(index: SearchIndex) -> None:
    assert refs(index.search("JWT EXPIRY")) == refs(index.search("jwt expiry")) == ["mis_1"]
    assert "mis_1" in refs(index.search("Jwt"))


def test_every_word_must_match_as_a_prefix(index: SearchIndex) -> None:
    assert refs(index.search("deplo rollb")) == ["ep_1", "les_1"]
    # "obs_1" and "rul_1" mention deploy but not rollback.
    assert set(refs(index.search("deplo"))) == {"ep_1", "rul_1", "les_1", "obs_1"}


def test_word_order_does_not_matter(index: SearchIndex) -> None:
    assert refs(index.search("rollb deplo")) == refs(index.search("deplo rollb"))


def test_punctuation_splits_words(index: SearchIndex) -> None:
    assert refs(index.search("auth-service")) == ["ep_1"]
    assert refs(index.search("billing api")) == ["ep_1"]
    assert refs(index.search("4312")) == ["obs_1"]


def test_longer_terms_match_inside_words() -> None:
    index = SearchIndex([doc("a", "Database outage"), doc("b", "Backup job")])
    assert refs(index.search("base")) == ["a"]  # inside "database"
    # One- and two-letter terms only match at the start of a word.
    assert refs(index.search("ba")) == ["b"]
    assert refs(index.search("at")) == []


@pytest.mark.parametrize("typo", ["rollbak", "rolback", "rollabck", "rollbxck", "rollbk"])
def test_tolerates_one_typo(typo: str) -> None:
    index = SearchIndex([doc("a", "Rollback plan"), doc("b", "Release notes")])
    assert refs(index.search(typo)) == ["a"]


def test_tolerates_two_typos_in_long_words() -> None:
    index = SearchIndex([doc("a", "Investigated the outage"), doc("b", "Inventory sync")])
    assert refs(index.search("invstigatd")) == ["a"]  # 10 letters, two edits
    assert refs(index.search("invstgated")) == ["a"]


def test_short_terms_are_not_fuzzy() -> None:
    index = SearchIndex([doc("a", "JWT expiry"), doc("b", "Fix the cache")])
    assert index.search("jqt") == []  # three letters: exact only
    assert refs(index.search("cahce")) == ["b"]  # four or more: one edit (a swap)
    assert index.search("cxxhe") == []  # two edits on a short word: too far


def test_typo_in_one_word_of_a_multi_word_query(index: SearchIndex) -> None:
    assert refs(index.search("databse migration")) == ["rul_1"]
    assert refs(index.search("jwt expirey")) == ["mis_1"]


def test_kinds_filter(index: SearchIndex) -> None:
    assert set(refs(index.search("deploy"))) == {"ep_1", "rul_1", "les_1", "obs_1"}
    assert refs(index.search("deploy", kinds={"lesson"})) == ["les_1"]
    assert set(refs(index.search("deploy", kinds={"lesson", "observation"}))) == {
        "les_1",
        "obs_1",
    }
    assert index.search("deploy", kinds={"slot"}) == []  # no such kind indexed
    assert index.search("deploy", kinds=set()) == []  # nothing allowed
    every_kind = {d.kind for d in CORPUS}
    assert refs(index.search("deploy", kinds=every_kind)) == refs(index.search("deploy"))


def test_limit(index: SearchIndex) -> None:
    assert len(index.search("deploy", limit=2)) == 2
    assert index.search("deploy", limit=0) == []
    assert refs(index.search("deploy", limit=2)) == refs(index.search("deploy"))[:2]


# ------------------------------------------------------------------- ranking


def test_hits_are_sorted_best_first(index: SearchIndex) -> None:
    hits = index.search("de")
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(0 <= score <= 100 for score in scores)


def test_title_hits_rank_above_body_hits() -> None:
    index = SearchIndex(
        [
            doc("a", "Notes from Tuesday", "the cache invalidation bug came back"),
            doc("b", "Cache invalidation", "short"),
            doc("c", "Cache notes", "invalidation of sessions"),  # one word in the body
        ]
    )
    hits = index.search("cache invalidation")
    # All words in the title, then one word in the title, then none.
    assert refs(hits) == ["b", "c", "a"]
    assert hits[0].score > hits[1].score > hits[2].score


def test_words_side_by_side_rank_above_words_apart() -> None:
    index = SearchIndex(
        [
            doc("apart", "Wednesday", "the cache was fine but invalidation failed"),
            doc("together", "Tuesday", "a cache invalidation bug"),
        ]
    )
    assert refs(index.search("cache invalidation")) == ["together", "apart"]


def test_title_hit_beats_many_body_hits_even_when_candidates_are_capped() -> None:
    docs = [doc("title", "The rollback runbook", "")]
    docs += [doc(f"body{i:03}", f"Episode {i}", "we did a rollback") for i in range(300)]
    index = SearchIndex(docs, max_candidates=50)
    hits = index.search("rollback", limit=10)
    assert refs(hits)[0] == "title"
    assert len(hits) == 10


@pytest.mark.parametrize("filler", [0, 5000])
def test_capped_band_keeps_the_most_recently_added(filler: int) -> None:
    docs = [doc(f"f{i:05}", "filler", "nothing") for i in range(filler)]
    docs += [doc(f"r{i:03}", "Runbook", f"rollback step {i}") for i in range(300)]
    hits = SearchIndex(docs, max_candidates=10).search("rollback", limit=5)
    # Uncapped, every record ties and r000..r004 would win; capped to the newest 10
    # (r290..r299), the tie-break picks among those.
    assert refs(hits) == ["r290", "r291", "r292", "r293", "r294"]
    assert refs(SearchIndex(docs).search("rollback", limit=5))[0] == "r000"


def test_exact_hits_rank_above_fuzzy_hits() -> None:
    index = SearchIndex(
        [
            doc("fuzzy_title", "Rolback checklist"),  # typo in the record itself
            doc("exact_body", "Tuesday", "the rollback took an hour"),
            doc("exact_title", "Rollback checklist"),
        ]
    )
    assert refs(index.search("rollback")) == ["exact_title", "exact_body", "fuzzy_title"]
    # ... and the other way round: a record containing the typo matches it exactly.
    assert refs(index.search("rolback")) == ["fuzzy_title", "exact_title", "exact_body"]


def test_whole_words_rank_above_longer_words() -> None:
    index = SearchIndex([doc("a", "Deployment notes"), doc("b", "Deploy notes")])
    assert refs(index.search("deploy")) == ["b", "a"]


def test_ties_are_broken_by_kind_then_ref() -> None:
    same = [
        doc("z_2", "Flaky test", kind="lesson"),
        doc("a_9", "Flaky test", kind="rule"),
        doc("a_1", "Flaky test", kind="lesson"),
        doc("m_5", "Flaky test", kind="episode"),
    ]
    expected = ["m_5", "a_1", "z_2", "a_9"]
    for seed in range(5):
        shuffled = same[:]
        random.Random(seed).shuffle(shuffled)
        hits = SearchIndex(shuffled).search("flaky")
        assert refs(hits) == expected
        assert len({hit.score for hit in hits}) == 1


def test_repeated_searches_are_identical(index: SearchIndex) -> None:
    first = index.search("de")
    for query in ["d", "dep", "deplo rollb", "x"]:
        index.search(query)
    assert index.search("de") == first


# ------------------------------------------------------- incremental updates


def test_add_remove_and_len(index: SearchIndex) -> None:
    assert len(index) == len(CORPUS)
    assert index.search("kubernetes") == []
    index.add(doc("ep_9", "Kubernetes pod restart loop", "liveness probe too strict"))
    assert len(index) == len(CORPUS) + 1
    assert "ep_9" in index
    assert index.get("ep_9") is not None
    assert refs(index.search("kubernets")) == ["ep_9"]  # typo, new word
    assert refs(index.search("liveness")) == ["ep_9"]
    assert index.remove("ep_9") is True
    assert index.remove("ep_9") is False
    assert "ep_9" not in index
    assert index.get("ep_9") is None
    assert index.search("kubernetes") == []
    assert index.search("liveness") == []
    assert len(index) == len(CORPUS)


def test_add_with_existing_ref_replaces(index: SearchIndex) -> None:
    index.add(doc("mis_1", "Renamed episode", "nothing about tokens now", kind="mistake"))
    assert len(index) == len(CORPUS)
    assert index.search("jwt expiry") == []
    assert refs(index.search("renamed")) == ["mis_1"]


def test_remove_keeps_shared_words(index: SearchIndex) -> None:
    index.remove("ep_1")
    assert set(refs(index.search("deploy"))) == {"rul_1", "les_1", "obs_1"}
    assert refs(index.search("jwt")) == ["mis_1"]


def test_replace_all(index: SearchIndex) -> None:
    index.replace_all([doc("x", "Only one")])
    assert len(index) == 1
    assert index.search("deploy") == []
    assert refs(index.search("one")) == ["x"]


def test_many_removals_compact_and_keep_working() -> None:
    index = SearchIndex(doc(f"d{i}", f"note {i}", "common words here") for i in range(3000))
    for i in range(3000):
        if i % 3:
            index.remove(f"d{i}")
    assert len(index._docs) < 3000  # renumbered once removed ids outnumbered live ones
    for i in range(0, 3000, 6):
        index.add(doc(f"d{i}", f"note {i} again", "common words here"))
    for i in range(1, 3000, 3):
        index.add(doc(f"d{i}", f"note {i} back", "common words here"))
    assert len(index) == 2000
    assert "d3" not in refs(index.search("note 3 again", limit=5000))  # d3 kept its text
    assert refs(index.search("note 3"))[0] == "d3"
    assert refs(index.search("note 6 again"))[0] == "d6"  # then d60, d600, ...
    assert refs(index.search("note 4 back"))[0] == "d4"
    assert "d5" not in refs(index.search("note 5", limit=5000))
    assert len(index.search("common", limit=5000)) == 2000


def test_duplicate_refs_in_constructor_keep_the_last() -> None:
    index = SearchIndex([doc("a", "first"), doc("a", "second")])
    assert len(index) == 1
    assert index.search("first") == []
    assert refs(index.search("second")) == ["a"]


# ------------------------------------------------ agreement with a reference


def _reference_matches(query: str, docs: dict[str, SearchDoc]) -> set[str]:
    """Brute force: the matching rules of the module docstring, record by record."""
    terms = normalize(query).split()
    found = set()
    for d in docs.values():
        text = f" {normalize(d.title)} {normalize(d.text)} "
        words = text.split()

        def ok(term: str, text: str = text, words: list[str] = words) -> bool:
            if (term if len(term) >= INFIX_MIN_LEN else f" {term}") in text:
                return True
            if len(term) < FUZZY_MIN_LEN:
                return False
            budget = 2 if len(term) >= FUZZY_WIDE_LEN else 1
            n = len(term)
            return any(
                w[0] == term[0]
                and min(OSA.distance(term, w[:k]) for k in range(n - budget, n + budget + 1))
                <= budget
                for w in words
            )

        if terms and all(ok(t) for t in terms):
            found.add(d.ref)
    return found


def _band(query: str, d: SearchDoc) -> int:
    """Whether every term is an exact hit, and whether every term hits the title."""
    terms = normalize(query).split()
    title = f" {normalize(d.title)} "
    full = f" {normalize(d.title)} {normalize(d.text)} "

    def exact(term: str, text: str) -> bool:
        return (term if len(term) >= INFIX_MIN_LEN else f" {term}") in text

    if all(exact(t, full) for t in terms):
        return 3 if all(exact(t, title) for t in terms) else 2
    title_only = {"x": SearchDoc(d.kind, "x", d.title, "")}
    return 1 if all(_reference_matches(t, title_only) for t in terms) else 0


WORDS = (
    "deploy deployment rollback rollout release database data cache cached token tokens "
    "timeout retry retries worker workers queue query schema migration migrate auth author "
    "the then there a an of to in on at is it service services billing bill flaky test"
).split()


def _random_doc(rng: random.Random, ref: str) -> SearchDoc:
    def phrase(count: int) -> str:
        words = []
        for _ in range(count):
            word = rng.choice(WORDS)
            if rng.random() < 0.1:  # the odd typo or odd word in the record itself
                spot = rng.randrange(len(word))
                word = word[:spot] + rng.choice("aeiouxz") + word[spot + 1 :]
            words.append(word.capitalize() if rng.random() < 0.2 else word)
        return rng.choice([" ", "-", ", "]).join(words)

    kind = rng.choice(["episode", "lesson", "rule"])
    return SearchDoc(kind, ref, phrase(rng.randint(1, 4)), phrase(rng.randint(0, 12)))


def _random_query(rng: random.Random) -> str:
    terms = []
    for _ in range(rng.randint(1, 3)):
        word = rng.choice(WORDS)
        roll = rng.random()
        if roll < 0.3:
            word = word[: rng.randint(1, len(word))]
        elif roll < 0.5 and len(word) > 1:
            spot = rng.randrange(1, len(word))
            word = word[:spot] + word[spot + 1 :]
        elif roll < 0.6 and len(word) > 2:
            spot = rng.randrange(1, len(word) - 1)
            word = word[:spot] + word[spot + 1] + word[spot] + word[spot + 2 :]
        terms.append(word.upper() if rng.random() < 0.1 else word)
    return " ".join(terms)


@pytest.mark.parametrize("seed", range(6))
def test_hits_agree_with_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    docs = {f"r{i:04}": _random_doc(rng, f"r{i:04}") for i in range(400)}
    index = SearchIndex(docs.values(), max_candidates=10_000)
    for step in range(60):
        if step % 10 == 9:  # churn: replace some records, drop others, add new ones
            for _ in range(20):
                ref = rng.choice(sorted(docs))
                if rng.random() < 0.5:
                    docs[ref] = _random_doc(rng, ref)
                    index.add(docs[ref])
                else:
                    del docs[ref]
                    assert index.remove(ref)
            new_ref = f"n{step:04}"
            docs[new_ref] = _random_doc(rng, new_ref)
            index.add(docs[new_ref])
            assert len(index) == len(docs)
        query = _random_query(rng)
        kinds = rng.choice([None, None, {"lesson"}, {"episode", "rule"}])
        hits = index.search(query, limit=10_000, kinds=kinds)
        allowed = {r: d for r, d in docs.items() if kinds is None or d.kind in kinds}
        assert set(refs(hits)) == _reference_matches(query, allowed), (query, kinds)
        bands = [_band(query, hit.doc) for hit in hits]
        assert bands == sorted(bands, reverse=True), query
        keys = [(-hit.score, hit.doc.kind, hit.doc.ref) for hit in hits]
        assert keys == sorted(keys), query


def test_typing_a_query_keystroke_by_keystroke_matches_cold_searches() -> None:
    rng = random.Random(99)
    docs = [_random_doc(rng, f"r{i:04}") for i in range(500)]
    warm = SearchIndex(docs)
    for query in ["deploy rollback", "databse migraton", "the token", "flaky tset"]:
        for end in range(1, len(query) + 1):
            cold = SearchIndex(docs)
            assert warm.search(query[:end]) == cold.search(query[:end]), query[:end]


# ------------------------------------------------------------------ hygiene


def test_does_not_import_textual_or_pydantic() -> None:
    code = (
        "import sys, memwork.core.services.recall.search_index; "
        "bad = [m for m in ('textual', 'pydantic') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_invalid_max_candidates() -> None:
    with pytest.raises(ValueError):
        SearchIndex([], max_candidates=0)


def test_warm_up_changes_no_result_and_keeps_incremental_updates_working(
    index: SearchIndex,
) -> None:
    queries = ["deplo", "jwt", "cache rollb", "d", "migraton"]
    before = [refs(index.search(q)) for q in queries]
    index.warm_up()
    assert [refs(index.search(q)) for q in queries] == before
    index.add(doc("ep_2", "Deploy canary", "rollback drill"))
    assert "ep_2" in refs(index.search("deplo canar"))


def test_a_short_term_of_a_spaceless_script_matches_inside_a_line() -> None:
    """A Chinese line is one "word" to the index: its names stand inside it."""
    index = SearchIndex(
        [
            doc("obs_zh", "我昨天去了北京看我的奶奶"),
            doc("obs_ja", "東京で新しいプロジェクトを始めました"),
            doc("obs_en", "Cut the release branch"),
        ]
    )
    assert refs(index.search("北京")) == ["obs_zh"]
    assert set(refs(index.search("京"))) == {"obs_zh", "obs_ja"}  # one character
    assert refs(index.search("re")) == ["obs_en"]  # a Latin pair still starts a word
    assert refs(index.search("ch")) == []  # ("branch" holds it, but not at a word start)
