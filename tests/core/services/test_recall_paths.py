"""The two ways the recall index scores a query (numpy arrays, or plain Python for a
query that reads few postings in a process that has not loaded numpy) rank alike,
score for score, under every filter."""

from __future__ import annotations

import random

import pytest

from memwork.core.services.recall import best, engine, saved_file
from memwork.core.services.recall.ages import age_key
from memwork.core.services.recall.engine import RecallIndex, fingerprint
from memwork.core.services.recall.extract import NEVER, Unit
from memwork.core.services.recall.query import Filter, Visibility

WORDS = [f"w{i}" for i in range(300)]


def _index(seed: int, saved: bool = False) -> RecallIndex:
    """12 tables of notes; ``saved``: the first 10 written to a saved file and read back
    (their rows then read in place), the last two added after."""
    rng = random.Random(seed)
    index = RecallIndex()
    for s in range(12):
        if saved and s == 10:
            loaded = saved_file.read(saved_file.to_bytes(index))
            assert loaded is not None
            index = loaded
        fresh = []
        for i in range(rng.randint(5, 40)):
            # Zipf-like: a few words everywhere, most rare; lengths from 3 to 120 words.
            words = [
                WORDS[min(int(rng.paretovariate(1.1)) - 1, 299)] for _ in range(rng.randint(3, 120))
            ]
            unit = Unit(
                ref=f"o{s}-{i}",
                kind="observation" if i % 7 else "lesson",
                title=" ".join(words[:4]),
                fields=((1.0, " ".join(words)),),
                time=float("nan") if i % 11 == 0 else 1000.0 + i,
                session=f"s{s}" if i % 7 else None,
                seq=i,
                expires=2000.0 if i % 13 == 0 else NEVER,
            )
            fresh.append((unit, fingerprint(unit)))
        index.append_in_order(f"t{s}", fresh, None, "1")
    return index


FILTERS = [
    Filter(),
    Filter(kinds=frozenset({"observation"})),
    Filter(session="s3"),
    Filter(since=1010.0, until=1030.0),
    Filter(until=1020.0),
    Filter(now=2500.0),
    Filter(visible=lambda kind, ref, session, table: not ref.endswith(("1", "4"))),
    Filter(without=frozenset(range(0, 400, 3))),
    Filter(kinds=frozenset({"observation"}), without=frozenset(range(1, 400, 5))),
]


#: The ways a query is scored: numpy arrays or plain Python (``plain``), each with the
#: compiled scoring loops or without them (``compiled``).
WAYS = [(plain, compiled) for plain in (False, True) for compiled in (False, True)]


def _every_way(
    seed: int,
    limit: int,
    monkeypatch,  # noqa: ANN001
    dense: bool | None = None,
    ways: list[tuple[bool, bool]] = WAYS,  # noqa: B006
    saved: bool = False,
) -> dict[tuple[bool, bool], list]:
    """(ref, score) of every hit of 40 questions under every filter, scored each way
    (``WAYS``); ``dense``: plain Python sums into one float per slot (True) or a dict of
    the slots touched (False), whatever the postings read; ``saved`` as for
    :func:`_index`."""
    index = _index(seed, saved)
    rng = random.Random(seed)
    questions = [" ".join(rng.sample(WORDS[:60], rng.randint(1, 6))) for _ in range(40)]
    if dense is not None:
        monkeypatch.setattr(engine, "_DENSE", 10**9 if dense else 0)
    loops = engine._compiled
    found = {}
    for plain, compiled in ways:
        if compiled and loops is None:
            continue  # (test_the_scoring_loops_are_built_where_a_compiler_is says why)
        monkeypatch.setattr(engine, "_compiled", loops if compiled else None)
        monkeypatch.setattr(engine, "plain_python", lambda postings, small=0, plain=plain: plain)
        found[plain, compiled] = [
            [(hit.ref, hit.score) for hit in index.search(q, limit, where)]
            for where in FILTERS
            for q in questions
        ]
    monkeypatch.setattr(engine, "_compiled", loops)
    return found


def _all_alike(found: dict[tuple[bool, bool], list]) -> list:
    """The hits every way gave (they must be the same, score for score)."""
    first, *others = found.values()
    for way, hits in found.items():
        assert hits == first, f"plain Python, compiled loops: {way}"
    return first


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_way_of_scoring_gives_the_same_ranking(seed: int, dense: bool, monkeypatch) -> None:
    hits = _all_alike(_every_way(seed, 30, monkeypatch, dense))
    assert sum(len(found) for found in hits) > 1000  # the questions do find things


def test_lengths_past_two_bytes_are_read_as_a_float_a_slot_with_the_same_hits(
    monkeypatch,  # noqa: ANN001
) -> None:
    """The summing pass reads each record's length in two bytes and its length term
    from a table; an index holding a record too long for that reads a float a slot
    instead, and ranks the same, score for score."""
    loops = engine._compiled
    if loops is None:
        pytest.skip("the compiled loops are not built here")
    read = []
    summed = loops.sum_best

    def spy(*args):  # noqa: ANN002, ANN202
        read.append(len(args) > 5 and args[5] is not None)
        return summed(*args)

    monkeypatch.setattr(loops, "sum_best", spy)
    by_length = _every_way(1, 30, monkeypatch, ways=[(False, True)])
    assert read and all(read)
    read.clear()
    monkeypatch.setattr(engine, "_LONGEST", 10)  # the notes run from 3 to 120 words
    assert _every_way(1, 30, monkeypatch, ways=[(False, True)]) == by_length
    assert read and not any(read)


@pytest.mark.parametrize("seed", [1, 2])
def test_an_index_read_from_its_saved_file_ranks_as_one_built_here(seed: int, monkeypatch) -> None:
    """Rows read in place from a saved file (the compiled loops read their words
    without decoding them) and rows added since give the scores a fresh index gives."""
    hits = _all_alike(_every_way(seed, 30, monkeypatch, saved=True))
    assert hits == _all_alike(_every_way(seed, 30, monkeypatch))


def test_a_small_index_in_a_fresh_process_never_imports_numpy(tmp_path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memwork.core.services.recall.engine import RecallIndex, fingerprint\n"
        "from memwork.core.services.recall.extract import NEVER, Unit\n"
        "i = RecallIndex()\n"
        "u = Unit('a', 'observation', 't', ((1.0, 'rolled back the canary'),), 1.0, 's', 0,"
        " NEVER)\n"
        "i.append_in_order('t', [(u, fingerprint(u))], None, '1')\n"
        "assert [h.ref for h in i.search('canary', 5)] == ['a']\n"
        "print('numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("one_call", [False, True])
def test_a_process_answering_one_call_skips_numpy_for_a_bigger_query(one_call: bool) -> None:
    """A query reading 30,000 postings: a long-lived process loads numpy for it (it will
    serve many), a one-call process (the CLI) scores it in plain Python, alike."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from memwork.core.services.recall.engine import RecallIndex, fingerprint, SMALL\n"
        "from memwork.core.services.recall.follow import Recall\n"
        "from memwork.core.services.recall.extract import NEVER, Unit\n"
        "i = RecallIndex()\n"
        "units = [Unit(f'n{n}', 'observation', 't', ((1.0, f'canary step {n % 97}'),),"
        " 1.0, 's', n, NEVER) for n in range(30_000)]\n"
        "i.append_in_order('t', [(u, fingerprint(u)) for u in units], None, '1')\n"
        f"small = Recall(one_call={one_call}).small\n"
        "hits = i.search('canary step 5', 3, small=small)\n"
        "print(len(hits), hits[0].ref, 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    count, best, numpy = out.stdout.split()
    # Ties: the higher age first (refs with no id are aged by their text).
    steps_5 = (f"n{n}" for n in range(30_000) if n % 97 == 5)
    assert (count, best) == ("3", max(steps_5, key=age_key))
    assert numpy == str(not one_call)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("plain", [False, True])
def test_a_caller_asking_for_more_than_a_hundred_gets_them(
    plain: bool, compiled: bool, monkeypatch
) -> None:
    monkeypatch.setattr(engine, "plain_python", lambda postings, small=0: plain)
    if not compiled:
        monkeypatch.setattr(engine, "_compiled", None)
    index = RecallIndex()
    fresh = []
    for i in range(400):
        unit = Unit(
            f"n{i}", "lesson", "t", ((1.0, f"canary rollout step {i}"),), 1.0, None, 0, NEVER
        )
        fresh.append((unit, fingerprint(unit)))
    index.sync_changes("lessons", [], fresh, "1")
    assert len(index.search("canary", 10)) == 10
    assert len(index.search("canary", 250)) == 250
    assert len(index.search("canary", 1000)) == 400


def _kth_by_sorting(values: list[float], k: int) -> float | None:
    positive = sorted((v for v in values if v > 0), reverse=True)
    return positive[k - 1] if len(positive) >= k else None


@pytest.mark.parametrize("seed", range(6))
def test_the_kth_best_score_found_from_a_sample_is_the_kth_best(seed: int) -> None:
    """The k-th best is read from the scores at or above a sample's k-th best: exact
    whatever the scores, with many equal ones (short records score alike), records
    left out (-inf), and fewer positive scores than k."""
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(seed)
    size = 40_000 + seed * 9_000
    share = (0.02, 0.3, 0.95)[seed % 3]  # how many records score at all
    acc = np.where(rng.random(size) < share, rng.integers(1, 40, size) / 7.0, 0.0)
    acc[rng.random(size) < 0.05] = -np.inf
    for k in (1, 10, 100, 400):
        assert best.kth_best(acc, k, np) == _kth_by_sorting(acc.tolist(), k)
    few = np.zeros(size)
    few[rng.choice(size, 50, replace=False)] = 1.0 + rng.random(50)
    assert best.kth_best(few, 100, np) is None
    assert best.kth_best(few, 50, np) == float(few[few > 0].min())


@pytest.mark.parametrize("seed", [1, 2])
def test_rankings_hold_when_every_index_is_searched_from_a_sample(seed: int, monkeypatch) -> None:
    """The sampled search for the best scores ranks as the plain Python sums do, with
    every filter (forced on for a small index), and finds each k-th best exactly."""
    monkeypatch.setattr(best, "_SAMPLED", 0)
    monkeypatch.setattr(best, "_PER_PLACE", 1)
    monkeypatch.setattr(engine, "DEPTH", 20)
    sampled = []
    best_slots = best.best_slots

    def checked(acc, k, np):  # type: ignore[no-untyped-def]
        theta, slots = best_slots(acc, k, np)
        if k * 4 <= len(acc):
            wanted = np.flatnonzero(acc > 0 if theta is None else acc >= theta)
            exact = theta == _kth_by_sorting(acc.tolist(), k)
            sampled.append(exact and slots.tolist() == wanted.tolist())
        return theta, slots

    monkeypatch.setattr(engine, "best_slots", checked)
    # (The compiled loops pick the best in one pass of their own, without a sample.)
    hits = _all_alike(_every_way(seed, 10, monkeypatch, ways=[(False, False), (True, False)]))
    assert sum(len(found) for found in hits) > 500
    assert len(sampled) > 100 and all(sampled)


@pytest.mark.parametrize("compiled", [False, True])
def test_plain_python_asks_who_may_see_only_of_the_best_records(
    compiled: bool, monkeypatch
) -> None:
    """Per-agent visibility reads each record's reference: asked of every posting, a
    one-call search of 100k records paid for it per posting. Like the numpy way, plain
    Python asks it of the best records only, until enough of them pass."""
    monkeypatch.setattr(engine, "plain_python", lambda postings, small=0: True)
    if not compiled:
        monkeypatch.setattr(engine, "_compiled", None)
    index = RecallIndex()
    fresh = []
    for i in range(3_000):
        unit = Unit(f"n{i}", "lesson", "t", ((1.0, f"canary step {i % 50}"),), 1.0, None, 0, NEVER)
        fresh.append((unit, fingerprint(unit)))
    index.sync_changes("lessons", [], fresh, "1")
    asked = []

    def visible(kind: str, ref: str, session: str | None, table: str) -> bool:
        asked.append(ref)
        return not ref.endswith("7")

    hits = index.search("canary step", 10, Filter(visible=visible))
    assert len(hits) == 10 and not any(h.ref.endswith("7") for h in hits)
    assert len(set(asked)) <= 4 * engine.DEPTH  # not the 3,000 postings


def _rule(kind: str, ref: str, session: str | None, table: str) -> bool:
    """Sessions s1, s4 and s7 belong to someone else; so do lessons whose id ends in 3."""
    if kind == "observation":
        return session not in ("s1", "s4", "s7")
    if kind == "lesson":
        return not ref.endswith("3")
    return True


@pytest.mark.parametrize("seed", [1, 2])
def test_a_test_by_kind_finds_what_the_same_rule_finds_as_one_function(
    seed: int, monkeypatch
) -> None:
    """Isolation's test decides a note by its session, once per session, and never
    reads its reference: the hits, every way of scoring, are those of the same rule
    written as one function asked of every record."""
    split = Visibility(
        frozenset({"observation"}),
        lambda session: session not in ("s1", "s4", "s7"),
        frozenset({"lesson"}),
        _rule,
    )
    index = _index(seed)
    rng = random.Random(seed)
    questions = [" ".join(rng.sample(WORDS[:60], rng.randint(1, 6))) for _ in range(40)]
    ways = {}
    for name, visible in (("one function", _rule), ("by kind", split)):
        ways[name] = [
            [(h.ref, h.score) for h in index.search(q, 30, Filter(visible=visible))]
            for q in questions
        ]
    assert ways["by kind"] == ways["one function"]
    found = [ref for hits in ways["by kind"] for ref, _ in hits]
    # (_index: note i of table s is "o{s}-{i}", a lesson when i is a multiple of 7)
    hidden = [r for r in found if r.split("-")[0] in ("o1", "o4", "o7") and int(r[3:]) % 7]
    assert found and not hidden
    # A note's reference is never read to decide it: only lessons reach ``record``.
    asked: list[str] = []
    counted = Visibility(
        split.by_session, split.session, split.by_record, lambda *a: asked.append(a[0]) or True
    )
    for q in questions:
        index.search(q, 30, Filter(visible=counted))
    assert asked and set(asked) == {"lesson"}


@pytest.mark.parametrize("seed", [1, 2])
def test_pruned_scores_equal_full_ones_to_the_last_bit(seed: int, monkeypatch) -> None:
    """Once the common terms are added to the records in the running only, the
    neighbours the shares read are completed afterwards: every score a query gives is
    the one scoring every record in full gives, bit for bit."""
    pytest.importorskip("numpy")
    rng = random.Random(seed)
    index = RecallIndex()
    common, rare = ["deploy", "service", "error"], [f"r{i}" for i in range(400)]
    for s in range(150):
        fresh = []
        for i in range(40):
            words = rng.sample(common, rng.randint(1, 3)) + rng.sample(rare, 2)
            words += ["filler"] * rng.randint(0, 30)
            unit = Unit(
                f"o{s}-{i}", "observation", "t", ((1.0, " ".join(words)),), 1.0, f"s{s}", i, NEVER
            )
            fresh.append((unit, fingerprint(unit)))
        index.append_in_order(f"t{s}", fresh, None, "1")
    monkeypatch.setattr(engine, "plain_python", lambda postings, small=0: False)
    monkeypatch.setattr(engine, "_compiled", None)  # (the compiled loops never cut)
    completed = []
    complete = engine.RecallIndex._complete

    def counted(self, acc, slots, *args):  # type: ignore[no-untyped-def]
        completed.append(len(slots))
        return complete(self, acc, slots, *args)

    monkeypatch.setattr(engine.RecallIndex, "_complete", counted)
    contenders = engine.RecallIndex._contenders
    for n in range(40):
        query = f"{rare[n]} {rare[n + 1]} deploy service error"
        monkeypatch.setattr(engine.RecallIndex, "_contenders", contenders)
        pruned = index.scores(query)
        monkeypatch.setattr(engine.RecallIndex, "_contenders", lambda *a, **k: False)
        assert pruned == index.scores(query), query
    assert len(completed) >= 10  # the cut came, and neighbours were completed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_leaving_out_bonuses_no_hit_could_use_changes_no_hit(seed: int) -> None:
    """A search reads only its best ``limit`` scores, so the proximity bonus is left out
    for the candidates even the largest bonus could not lift that far: the hits and
    their scores are those of scoring every candidate, at every limit and filter."""
    index = _index(seed)
    rng = random.Random(seed)
    # Word pairs from the texts, so that many candidates earn a bonus.
    questions = [" ".join(rng.sample(WORDS[:12], rng.randint(2, 5))) for _ in range(40)]
    left_out = 0
    for where in FILTERS:
        for q in questions:
            every = index.scores(q, where, engine.DEPTH)
            for limit in (1, 3, 10, 20):
                best = sorted(zip(every.values(), every.keys(), strict=True), reverse=True)
                expected = [(index.refs[d], s) for s, d in best[:limit] if s > 0]
                hits = index.search(q, limit, where)
                assert [(h.ref, h.score) for h in hits] == expected, (q, limit)
                pruned = index.scores(q, where, engine.DEPTH, wanted=limit)
                left_out += sum(1 for d, s in pruned.items() if s != every[d])
    assert left_out > 100  # bonuses were left out, and the hits never moved


def _out_of_order(index: RecallIndex) -> list[str]:
    """The words whose postings' slots do not rise."""
    out = []
    for term in list(index.post.terms()):
        docs = index.post.get(term)[0]
        if any(a >= b for a, b in zip(docs, docs[1:], strict=False)):
            out.append(term)
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_slots_taken_again_rank_as_every_other_way_ranks_them(seed: int, monkeypatch) -> None:
    """Notes forgotten free their slots and new ones take them, so a word's postings no
    longer rise with their slots: the compiled pass (which sums a window of slots at a
    time) puts a word it meets out of order in order, once, and ranks as the others."""
    index = _index(seed)
    rng = random.Random(seed + 100)
    for s in (2, 5, 7):
        index.drop_table(f"t{s}")
    fresh = []
    for i in range(60):
        words = [WORDS[min(int(rng.paretovariate(1.1)) - 1, 299)] for _ in range(30)]
        unit = Unit(f"n{i}", "observation", "t", ((1.0, " ".join(words)),), 1.0, "s1", i, NEVER)
        fresh.append((unit, fingerprint(unit)))
    index.append_in_order("new", fresh, None, "1")
    assert _out_of_order(index)  # (what the test is about)
    questions = [" ".join(rng.sample(WORDS[:60], rng.randint(1, 6))) for _ in range(40)]
    loops = engine._compiled
    found = {}
    for plain, compiled in WAYS:
        if compiled and loops is None:
            continue
        monkeypatch.setattr(engine, "_compiled", loops if compiled else None)
        monkeypatch.setattr(engine, "plain_python", lambda postings, small=0, plain=plain: plain)
        found[plain, compiled] = [
            [(hit.ref, hit.score) for hit in index.search(q, 30, where)]
            for where in FILTERS
            for q in questions
        ]
    assert sum(map(len, _all_alike(found))) > 1000
    if loops is not None:  # every word a query met is in order now, the rest as they were
        met = {t for q in questions for t, _ in index.query_terms(q)}
        assert _out_of_order(index) and not met.intersection(_out_of_order(index))
