"""The compiled scoring loops (core/services/recall/_scoring.c): built where a C
compiler is, the same sums as the Python they stand for, safe on damaged postings,
and never needed (an install without them scores the same in Python)."""

from __future__ import annotations

import math
import random
import shutil
import subprocess
import sys
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwork.core.services.recall import engine, fields, mapped

loops = engine._compiled
needs_loops = pytest.mark.skipif(loops is None, reason="the scoring loops were not built")


def test_the_scoring_loops_are_built_where_a_compiler_is() -> None:
    """An install on a machine with a C compiler builds them (setup.py): a missing
    module there means a build that failed unseen, and every search runs slower."""
    if not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler on this machine: recall scores in Python")
    assert loops is not None


@needs_loops
def test_a_term_is_summed_as_python_sums_it_to_the_last_bit() -> None:
    rng = random.Random(5)
    size = 5_000
    # Lengths on both sides of LONG_FROM, so the long records' extra weight is summed too.
    lens = array("q", (rng.randint(1, 3 * engine.LONG_FROM) for _ in range(size)))
    mean = sum(lens) / size
    k, one_b, b = 10 * engine.K1, 1 - engine.B, engine.B
    far, weight = engine.LONG_FROM, engine.LONG
    acc = array("d", bytes(8 * size))
    expected = [0.0] * size
    for _ in range(6):
        docs = array("i", sorted(rng.sample(range(size), 1_500)))
        tfs = array("i", (rng.randint(1, 9) for _ in docs))
        kp1 = rng.uniform(0.1, 9.0)
        loops.add_by_length(acc, lens, docs, tfs, kp1, k, one_b, b, mean, far, weight)
        for d, tf in zip(docs, tfs, strict=True):
            n = lens[d]
            over = weight * max(0.0, n / far - 1.0)
            expected[d] = expected[d] + kp1 * tf / (tf + k * (one_b + b * n / mean + over))
    assert acc.tolist() == expected  # equal floats, not close ones


@needs_loops
def test_the_best_are_picked_best_first_and_ties_go_to_the_later_slot() -> None:
    scores = array("d", [0.0, 2.0, 5.0, 2.0, -math.inf, 5.0, 1.0, 0.0, 2.0])
    assert loops.best(scores, 4) == [(5, 5.0), (2, 5.0), (8, 2.0), (3, 2.0)]
    assert loops.best(scores, 100) == [(5, 5.0), (2, 5.0), (8, 2.0), (3, 2.0), (1, 2.0), (6, 1.0)]
    assert loops.best(scores, 0) == []
    assert loops.best(array("d"), 3) == []


@needs_loops
def test_a_masked_slot_gains_nothing() -> None:
    np = pytest.importorskip("numpy")
    acc, norms = np.zeros(4), np.full(4, 2.0)
    mask = np.array([True, False, True, True])
    loops.add_scaled(acc, norms, array("i", [0, 1, 3]), array("i", [1, 1, 2]), 3.0, mask)
    assert acc.tolist() == [3.0 / 3.0, 0.0, 0.0, 6.0 / 4.0]


@needs_loops
@pytest.mark.parametrize("slot", [-1, 4, 2**31 - 1])
def test_a_damaged_posting_is_refused_not_read_past_the_arrays(slot: int) -> None:
    """A slot outside the index (a damaged file) stops the sum with an error that
    says so: nothing is read or written outside the arrays."""
    acc, lens = array("d", bytes(32)), array("q", [1, 2, 3, 4])
    docs, tfs = array("i", [0, slot]), array("i", [1, 1])
    with pytest.raises(ValueError, match="outside the index"):
        loops.add_by_length(acc, lens, docs, tfs, 1.0, 12.0, 0.8, 0.2, 2.5, 400, 2.0)
    np = pytest.importorskip("numpy")
    with pytest.raises(ValueError, match="outside the index"):
        loops.add_scaled(np.zeros(4), np.ones(4), docs, tfs, 1.0)


@needs_loops
def test_arrays_of_the_wrong_size_are_refused() -> None:
    acc, lens = array("d", bytes(32)), array("q", [1, 2, 3])
    with pytest.raises(ValueError, match="same slots"):
        loops.add_by_length(
            acc, lens, array("i", [0]), array("i", [1]), 1.0, 12.0, 0.8, 0.2, 2.5, 400, 2.0
        )
    with pytest.raises(ValueError, match="one length"):
        loops.add_by_length(
            acc,
            array("q", [1] * 4),
            array("i", [0, 1]),
            array("i", [1]),
            *(1.0, 12.0, 0.8, 0.2, 2.5, 400, 2.0),
        )


def test_an_install_without_the_loops_finds_the_same_records() -> None:
    """Where the module could not be built, recall imports and ranks all the same."""
    code = (
        "import sys\n"
        "if sys.argv[1] == 'unbuilt':\n"
        "    sys.modules['memwork.core.services.recall._scoring'] = None  # never built\n"
        "from memwork.core.services.recall import engine\n"
        "from memwork.core.services.recall.engine import RecallIndex, fingerprint\n"
        "from memwork.core.services.recall.extract import NEVER, Unit\n"
        "i = RecallIndex()\n"
        "units = [Unit(f'n{n}', 'observation', 't', ((1.0, f'canary step {n % 13}'),),"
        " 1.0, 's', n, NEVER) for n in range(500)]\n"
        "i.append_in_order('t', [(u, fingerprint(u)) for u in units], None, '1')\n"
        "hits = [(h.ref, h.score) for h in i.search('canary step 5', 3)]\n"
        "print(engine._compiled is None, hits)\n"
    )
    runs = {
        way: subprocess.run(
            [sys.executable, "-c", code, way], capture_output=True, text=True, check=True
        ).stdout.split(" ", 1)
        for way in ("unbuilt", "as installed")
    }
    assert runs["unbuilt"][0] == "True"
    assert runs["unbuilt"][1] == runs["as installed"][1]
    assert runs["unbuilt"][1].count("'n") == 3


@pytest.mark.parametrize("built", [True, False])
def test_doctor_says_whether_searches_run_compiled(built: bool, tmp_path) -> None:  # noqa: ANN001
    """`memwork doctor` names an install without the loops (a warning: the store is
    fine, its searches are slower) and says how to get them."""
    import json

    if built and loops is None:
        pytest.skip("the scoring loops were not built")
    code = (
        "import sys\n"
        f"if {not built}:\n"
        "    sys.modules['memwork.core.services.recall._scoring'] = None  # never built\n"
        "from memwork.core.doors.cli.main import entry\n"
        "sys.argv = ['memwork', *sys.argv[1:]]\n"
        "entry()\n"
    )
    store = tmp_path / "store"
    args = [sys.executable, "-c", code, "--db", str(store)]
    subprocess.run(
        [*args, "lesson", "add", "Check the canary first"], capture_output=True, check=False
    )
    out = subprocess.run([*args, "--json", "doctor"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    [check] = [c for c in report["checks"] if c["name"] == "recall scoring"]
    assert report["ok"]
    if built:
        assert check["status"] == "ok"
    else:
        assert check["status"] == "warn" and "C compiler" in check["detail"]


#: Scores drawn to be hard: many equal, zeros and -inf among them, so blocks of slots
#: hold nothing above the floor.
SCORES = st.one_of(
    st.sampled_from([0.0, 0.0, -math.inf, 1.0, 2.5]),
    st.floats(min_value=-5, max_value=50, allow_nan=False),
)


@needs_loops
@settings(max_examples=300, deadline=None)
@given(st.lists(SCORES, max_size=300), st.integers(min_value=0, max_value=320))
def test_the_best_are_the_best_whatever_the_scores(scores: list[float], k: int) -> None:
    """Against a sort, with k from 0 to past the slots."""
    ranked = sorted(((v, d) for d, v in enumerate(scores) if v > 0), reverse=True)
    assert loops.best(array("d", scores), k) == [(d, v) for v, d in ranked[:k]]


@needs_loops
@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=0, max_value=20_000),
    st.sampled_from([1, 2, 10, 100, 400]),
    st.sampled_from(["rising", "falling", "few values", "random", "sparse"]),
    st.integers(min_value=0),
)
def test_the_best_are_kept_however_often_the_pool_fills(
    size: int, k: int, shape: str, seed: int
) -> None:
    """The pick keeps the scores above its floor in a pool of a few times k and cuts it
    to the best k when it fills: scores that rise towards the first slot (met last, so
    every one beats the floor and the pool fills again and again), ties across cuts,
    and mostly zeros give what a sort gives."""
    rng = random.Random(seed)
    if shape == "rising":
        scores = [float(size - d) for d in range(size)]
    elif shape == "falling":
        scores = [float(d) for d in range(size)]
    elif shape == "few values":
        scores = [float(rng.randint(0, 3)) for _ in range(size)]
    elif shape == "random":
        scores = [rng.uniform(-1, 10) for _ in range(size)]
    else:
        scores = [rng.uniform(0, 5) if rng.random() < 0.02 else 0.0 for _ in range(size)]
    ranked = sorted(((v, d) for d, v in enumerate(scores) if v > 0), reverse=True)
    assert loops.best(array("d", scores), k) == [(d, v) for v, d in ranked[:k]]


#: Ages drawn to tie often too: an age decides only between equal scores.
AGES = st.sampled_from([0, 1, 7, -3, 2**62, -(2**62)])


@needs_loops
@settings(max_examples=300, deadline=None)
@given(st.data(), st.integers(min_value=0, max_value=320))
def test_of_equal_scores_the_higher_age_is_picked_whatever_the_slots(
    data: st.DataObject, k: int
) -> None:
    """With an age per slot, the picks go by score, then age, then slot, from an array
    (``best``), from a dict of candidates (``best_of``) and in the summing pass
    (``sum_best``, with and without links): the records an index numbers otherwise in
    another process are picked alike."""
    np = pytest.importorskip("numpy")
    scores = data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, 2.5, 4.0]), max_size=300))
    ages = array("q", data.draw(st.lists(AGES, min_size=len(scores), max_size=len(scores))))
    ranked = sorted(((v, ages[d], d) for d, v in enumerate(scores) if v > 0), reverse=True)
    expected = [(d, v) for v, _, d in ranked[:k]]
    assert loops.best(array("d", scores), k, ages) == expected
    candidates = {d: v for d, v in enumerate(scores) if v > 0}
    assert loops.best_of(candidates, k, ages) == [(v, d) for d, v in expected]
    # The same scores summed from postings: one word, each slot's count its score.
    size = len(scores)
    norms = np.zeros(size)  # tf / (0 + tf) = 1: each slot scores its word's kp1 times 1
    picks = []
    for kp1 in (1.0, 2.5, 4.0):
        docs = array("i", [d for d, v in enumerate(scores) if v == kp1])
        picks.append((kp1, docs, array("i", [10] * len(docs))))
    prev = np.array([d - 1 for d in range(size)], dtype=np.int32)
    nxt = np.array([d + 1 if d + 1 < size else -1 for d in range(size)], dtype=np.int32)
    for links in (None, (prev, nxt)):
        acc = np.empty(size)
        found = loops.sum_best(acc, norms, picks, k, None, None, links, ages)
        assert found == expected


@needs_loops
def test_ages_of_another_size_are_refused() -> None:
    with pytest.raises(ValueError, match="ages"):
        loops.best(array("d", [1.0, 2.0]), 1, array("q", [1]))
    with pytest.raises(ValueError, match="age"):
        loops.best_of({5: 1.0}, 1, array("q", [1, 2]))


@needs_loops
@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=9_000),
    st.integers(min_value=0, max_value=5),
    st.sampled_from([0, 1, 10, 100, 400]),
    st.booleans(),
    st.integers(min_value=0),
    st.sampled_from([0, 1]),
)
def test_summing_and_picking_a_window_at_a_time_is_the_same_as_apart(
    size: int, words: int, k: int, masked: bool, seed: int, shift: int
) -> None:
    """``sum_best`` gives the very scores and picks that ``add_scaled`` word after
    word and then ``best`` give, across windows, with ties (equal counts) and a mask;
    what ``acc`` held before is never read, and every slot of it is written, whether
    it starts on a 16-byte boundary or 8 bytes past one (``shift``)."""
    np = pytest.importorskip("numpy")
    rng = random.Random(seed)
    norms = np.array([rng.uniform(0.5, 30) for _ in range(size)])
    postings = []
    for _ in range(words):
        docs = sorted(rng.sample(range(size), rng.randint(0, min(size, 2_000))))
        tfs = [10] * len(docs) if rng.random() < 0.3 else [rng.randint(1, 40) for _ in docs]
        postings.append((rng.uniform(0.1, 9.0), array("i", docs), array("i", tfs)))
    mask = np.array([rng.random() < 0.7 for _ in range(size)]) if masked else None
    apart = np.zeros(size)
    for kp1, docs, tfs in postings:
        loops.add_scaled(apart, norms, docs, tfs, kp1, mask)
    held = np.full(size + 2, 7.0)
    together = held[shift : shift + size]
    assert loops.sum_best(together, norms, postings, k, mask) == loops.best(apart, k)
    assert together.tolist() == apart.tolist()
    assert held[shift + size] == 7.0 and (shift == 0 or held[0] == 7.0)  # nothing past it


def random_index(
    rng: random.Random, size: int, words: int, masked: bool, longest: int, most: int
) -> tuple:
    """A norms table by length (up to ``longest`` lengths), each slot's length, the
    postings of ``words`` words (each in up to ``most`` slots, in order) and, when
    ``masked``, a mask leaving out about three slots in ten."""
    np = pytest.importorskip("numpy")
    table = np.array([rng.uniform(0.5, 30) for _ in range(rng.randint(1, longest))])
    lengths = np.array([rng.randrange(len(table)) for _ in range(size)], dtype=np.uint16)
    postings = []
    for _ in range(words):
        docs = sorted(rng.sample(range(size), rng.randint(0, min(size, most))))
        tfs = [rng.randint(1, 40) for _ in docs]
        postings.append((rng.uniform(0.1, 9.0), array("i", docs), array("i", tfs)))
    mask = np.array([rng.random() < 0.7 for _ in range(size)]) if masked else None
    return table, lengths, postings, mask


@needs_loops
@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=1, max_value=12_000),
    st.integers(min_value=0, max_value=5),
    st.sampled_from([0, 1, 10, 100]),
    st.booleans(),
    st.booleans(),
    st.integers(min_value=0),
)
def test_with_links_the_scores_around_the_best_are_those_of_a_whole_pass(
    size: int, words: int, k: int, masked: bool, chained: bool, seed: int
) -> None:
    """Given the slots before and after each (a chain of turns, or links anywhere),
    ``sum_best`` keeps each window's sums to itself and writes only the best k and the
    slots up to two links from them, which the neighbour shares read: the same picks,
    and there the same scores to the bit as a pass that writes every slot (0 where the
    mask leaves a slot out)."""
    np = pytest.importorskip("numpy")
    rng = random.Random(seed)
    table, lengths, postings, mask = random_index(rng, size, words, masked, 300, 3_000)
    if rng.random() < 0.5:  # many short records score alike: ties at every turn
        postings = [(kp1, docs, array("i", [10] * len(docs))) for kp1, docs, _ in postings]
    if chained:
        before = np.arange(-1, size - 1, dtype=np.int32)
        after = np.append(np.arange(1, size, dtype=np.int32), np.int32(-1))
    else:
        before = np.array([rng.randrange(-1, size) for _ in range(size)], dtype=np.int32)
        after = np.array([rng.randrange(-1, size) for _ in range(size)], dtype=np.int32)
    whole = np.empty(size)
    picked = loops.sum_best(whole, table, postings, k, mask, lengths)
    near = np.full(size, -7.0)
    assert loops.sum_best(near, table, postings, k, mask, lengths, (before, after)) == picked
    read = set()
    for slot, _ in picked:
        read.add(slot)
        for side in (before[slot], after[slot]):
            if side >= 0:
                read.update(int(j) for j in (side, before[side], after[side]) if j >= 0)
    assert {j: near[j] for j in read} == {j: whole[j] for j in read}
    untouched = np.ones(size, dtype=bool)
    untouched[list(read)] = False
    assert (near[untouched] == -7.0).all()  # nothing else written


@needs_loops
def test_with_links_a_neighbour_no_word_holds_is_not_asked_its_length() -> None:
    """A slot beside the best that no word holds scores 0 whatever its length column
    says, as in a whole pass; a length past the table where a word is held is named."""
    np = pytest.importorskip("numpy")
    word = (1.0, array("i", [1]), array("i", [10]))
    before = np.array([-1, 0, 1], dtype=np.int32)
    after = np.array([1, 2, -1], dtype=np.int32)
    lengths = np.array([9, 0, 9], dtype=np.uint16)  # slots 0 and 2 past the 4-entry table
    acc = np.full(3, -7.0)
    found = loops.sum_best(acc, np.ones(4), [word], 1, None, lengths, (before, after))
    assert found == loops.sum_best(np.empty(3), np.ones(4), [word], 1, None, lengths)
    assert acc.tolist() == [0.0, 10.0 / 11.0, 0.0]
    lengths[1] = 9
    with pytest.raises(ValueError, match="slot 1 is longer than norms reaches"):
        loops.sum_best(acc, np.ones(4), [word], 1, None, lengths, (before, after))


@needs_loops
def test_links_of_the_wrong_size_are_refused() -> None:
    np = pytest.importorskip("numpy")
    word = (1.0, array("i", [0, 2]), array("i", [10, 10]))
    links = (np.full(3, -1, dtype=np.int32), np.full(2, -1, dtype=np.int32))
    with pytest.raises(ValueError, match="links"):
        loops.sum_best(np.empty(3), np.ones(3), [word], 2, None, None, links)


@needs_loops
@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=1, max_value=9_000),
    st.integers(min_value=1, max_value=4),
    st.sampled_from([0, 10, 100]),
    st.booleans(),
    st.integers(min_value=0),
)
def test_norms_read_by_length_give_the_scores_read_by_slot(
    size: int, words: int, k: int, masked: bool, seed: int
) -> None:
    """``sum_best`` reading each slot's norm from a table by its length (two bytes a
    slot) gives the very scores and picks it gives reading a float per slot."""
    np = pytest.importorskip("numpy")
    rng = random.Random(seed)
    table, lengths, postings, mask = random_index(rng, size, words, masked, 600, 2_000)
    by_slot, by_length = np.empty(size), np.full(size, 3.0)
    picked = loops.sum_best(by_slot, table[lengths], postings, k, mask)
    assert loops.sum_best(by_length, table, postings, k, mask, lengths) == picked
    assert by_length.tolist() == by_slot.tolist()


@needs_loops
def test_a_length_past_the_table_is_refused() -> None:
    """A slot whose length the table does not reach (a damaged column) is named, never
    read past the table; lengths that do not cover the slots are refused."""
    np = pytest.importorskip("numpy")
    word = (1.0, array("i", [1, 2]), array("i", [1, 1]))
    lengths = np.array([0, 1, 5], dtype=np.uint16)
    with pytest.raises(ValueError, match="slot 2 is longer than norms reaches"):
        loops.sum_best(np.empty(3), np.ones(4), [word], 2, None, lengths)
    with pytest.raises(ValueError, match="lengths uint16"):
        loops.sum_best(np.empty(3), np.ones(4), [word], 2, None, lengths[:2])


@needs_loops
def test_summing_a_window_at_a_time_names_a_word_out_of_order() -> None:
    """A word whose slots do not rise is named (its index), not summed wrong; a slot
    outside the index is refused, wherever it stands."""
    np = pytest.importorskip("numpy")
    ones = array("i", [1, 1, 1])
    rising = (1.0, array("i", [1, 5, 8]), ones)
    assert (
        loops.sum_best(np.empty(10), np.ones(10), [rising, (1.0, array("i", [1, 5, 3]), ones)], 5)
        == 1
    )
    assert loops.sum_best(np.empty(10), np.ones(10), [(1.0, array("i", [2, 2, 3]), ones)], 5) == 0
    for slot in (-1, 10):
        damaged = (1.0, array("i", [0, 4, slot] if slot > 0 else [slot, 4, 6]), ones)
        with pytest.raises(ValueError, match="outside the index"):
            loops.sum_best(np.empty(10), np.ones(10), [rising, damaged], 5)


@needs_loops
@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.integers(0, 10_000), SCORES.filter(lambda v: v == v), max_size=300),
    st.integers(min_value=0, max_value=320),
)
def test_the_best_candidates_are_the_first_of_them_sorted(scores: dict, k: int) -> None:
    """Candidates ranked as a sort of (score, slot) pairs ranks them, without the sort."""
    ranked = sorted(zip(scores.values(), scores.keys(), strict=True), reverse=True)
    assert loops.best_of(scores, k) == ranked[:k]


@needs_loops
def test_a_filter_keeps_what_the_python_test_keeps() -> None:
    """Kinds, session, a time window (NaN times outside it) and expiry, each alone and
    together, slot for slot as the tests written in Python decide."""
    rng = random.Random(3)
    size = 2_000
    kinds = array("b", (rng.randrange(6) for _ in range(size)))
    sessions = array("i", (rng.randrange(-1, 8) for _ in range(size)))
    times = array("d", (math.nan if rng.random() < 0.1 else rng.uniform(0, 100) for _ in kinds))
    expires = array("d", (rng.choice([math.inf, rng.uniform(0, 100)]) for _ in kinds))
    allowed = bytes(code in (1, 4) for code in range(256))
    cases = [
        ((kinds, allowed, None, 0, None, None, None, None, None), lambda d: kinds[d] in (1, 4)),
        ((None, None, sessions, 3, None, None, None, None, None), lambda d: sessions[d] == 3),
        (
            (None, None, None, 0, times, 20.0, 70.0, None, None),
            lambda d: times[d] >= 20.0 and times[d] <= 70.0,
        ),
        ((None, None, None, 0, times, None, 50.0, None, None), lambda d: times[d] <= 50.0),
        ((None, None, None, 0, None, None, None, expires, 40.0), lambda d: expires[d] > 40.0),
        (
            (kinds, allowed, sessions, 5, times, 10.0, None, expires, 30.0),
            lambda d: (
                kinds[d] in (1, 4) and sessions[d] == 5 and times[d] >= 10.0 and expires[d] > 30.0
            ),
        ),
    ]
    for args, test in cases:
        kept = loops.keep_where(size, *args)
        assert list(kept) == [int(test(d)) for d in range(size)]
        assert 0 < sum(kept) < size  # each case keeps some and leaves some out
    with pytest.raises(ValueError, match="one value per slot"):
        loops.keep_where(size + 1, None, None, sessions, 3, None, None, None, None, None)


def _rows(texts: list[str]) -> tuple[bytes, array]:
    """Texts as a saved file holds them: their bytes one after another, and where each
    starts (one more offset than rows)."""
    data = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = array("q", [0])
    for row in data:
        offsets.append(offsets[-1] + len(row))
    return b"".join(data), offsets


def _pairs(words: list[tuple[str, str, float]]) -> tuple[list, list]:
    """(" a b ", " b a ", least) as the index asks, and the same encoded for the loops."""
    asked = [(f" {a} {b} ", f" {b} {a} ", least) for a, b, least in words]
    encoded = [(f"{a} {b}".encode(), f"{b} {a}".encode(), least) for a, b, least in words]
    return asked, encoded


TERM = st.sampled_from(["deploy", "canary", "dep", "loy", "café", "日本", "a", "canaryx"])
FIELD = st.tuples(
    st.sampled_from(["10", "3", "5", ""]),
    st.lists(TERM, max_size=8).map(" ".join),
    st.booleans(),
).map(lambda f: f"{f[0]}\x1f{f[1]}" if f[2] else f[1])  # a field may lack its weight


@needs_loops
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(FIELD, max_size=4).map("\x1e".join), min_size=1, max_size=6),
    st.lists(st.tuples(TERM, TERM, st.floats(0.01, 9.0)), min_size=1, max_size=4),
)
def test_words_side_by_side_are_found_as_python_finds_them(
    texts: list[str], words: list[tuple[str, str, float]]
) -> None:
    """The proximity bonus read from a saved file's bytes equals the one the index
    computes from the decoded text, to the bit: whole words only ("dep loy" is not in
    "deploy"), field by field, multi-byte words, fields without a weight."""
    data, offsets = _rows(texts)
    asked, encoded = _pairs(words)
    slots = list(range(len(texts)))[::-1]
    found = loops.near_pairs(b"xx" + data, 2, offsets, slots, encoded)
    assert found == [fields.pair_bonus(texts[d], asked) for d in slots]


@needs_loops
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=30) | st.sampled_from(["", "café", "日本", "\ud800 lone"])),
    st.data(),
)
def test_rows_are_read_as_the_saved_file_reads_them(texts: list[str], data: st.DataObject) -> None:
    """A search's hits read their references and titles together: the same strings as
    the rows read one by one, in the order asked (a row twice, empty rows, surrogates)."""
    raw, offsets = _rows(texts)
    slots = data.draw(st.lists(st.integers(0, len(texts) - 1), max_size=12)) if texts else []
    saved = mapped.TextRows(b"head" + raw, 4, memoryview(offsets.tobytes()).cast("q"))
    assert loops.rows(b"head" + raw, 4, offsets, slots) == [saved[d] for d in slots]


@needs_loops
@pytest.mark.parametrize(("offsets", "slot"), [([0, 5, 3], 1), ([0, 2, 99], 1), ([0, 2], 1)])
def test_a_damaged_row_is_refused_not_read_past_the_texts(offsets: list[int], slot: int) -> None:
    with pytest.raises(ValueError, match="outside the texts"):
        loops.rows(b"abcdef", 0, array("q", offsets), [0, slot])


@needs_loops
@pytest.mark.parametrize(
    ("slot", "error"), [(2**80, OverflowError), ("1", TypeError), (7, ValueError)]
)
def test_a_slot_that_names_no_row_is_refused_as_before(slot: object, error: type) -> None:
    """The rows a call will read are asked for ahead of the reading (a hint that passes
    over what is not a row): a slot past every integer, not an integer or past the rows
    is still refused as it always was, and the next call reads as before."""
    data, offsets = _rows(["3\x1fcanary deploy", "4\x1fdeploy canary"])
    pairs = [(b"canary deploy", b"deploy canary", 1.0)]
    with pytest.raises(error):
        loops.rows(data, 0, offsets, [0, slot])
    with pytest.raises(error):
        loops.near_pairs(data, 0, offsets, [1, slot], pairs)
    cols = _columns([-1, 0], [1, -1], [0, 0], [0, 0])
    with pytest.raises(error):
        loops.around([(0, 1.0), (slot, 2.0)], array("d", [1.0, 2.0]), None, *cols, {}, 0.0, 0.3, 0)
    assert loops.rows(data, 0, offsets, [1]) == ["4\x1fdeploy canary"]
    assert loops.near_pairs(data, 0, offsets, [0, 1], pairs) == [1.0, 0.5]


@needs_loops
def test_the_bonus_counts_the_query_order_fully_and_the_other_half() -> None:
    data, offsets = _rows(["3\x1fcanary deploy\x1e10\x1fdeploy canary now", "5\x1fcanarydeploy"])
    _, encoded = _pairs([("canary", "deploy", 2.0)])
    assert loops.near_pairs(data, 0, offsets, [0, 1], encoded) == [2.0 + 1.0, 0.0]


def _proximity_in_python(
    final: dict[int, float], texts: list[str], asked: list, k: int, at: int, most: float
) -> dict[int, float]:
    """The proximity pass as engine.py takes it without the compiled call: best_of,
    the bar, each chosen row's bonus, then the bonuses added."""
    best = loops.best_of(final, k)
    if at:
        bar = best[at - 1][0] - most - 1e-9 * (abs(best[at - 1][0]) + most)
        chosen = [d for score, d in best[: engine.PROXIMITY_DEPTH] if score >= bar]
    else:
        chosen = [d for _, d in best[: engine.PROXIMITY_DEPTH]]
    out = dict(final)
    for d in chosen:
        bonus = fields.pair_bonus(texts[d], asked)
        if bonus:
            out[d] += engine.PROXIMITY * bonus
    return out


@needs_loops
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(FIELD, max_size=4).map("\x1e".join), min_size=1, max_size=80),
    st.lists(st.tuples(TERM, TERM, st.floats(0.01, 9.0)), min_size=1, max_size=4),
    st.data(),
)
def test_the_proximity_pass_in_one_call_scores_as_its_steps_do(
    texts: list[str], words: list[tuple[str, str, float]], data: st.DataObject
) -> None:
    """The pass in one compiled call (the best candidates, the bar that leaves out who
    cannot reach the ``at``-th score, each chosen row's bonus added) leaves the very
    scores the steps leave one by one: ties, candidates fewer and more than the depth,
    with and without a bar."""
    raw, offsets = _rows(texts)
    asked, encoded = _pairs(words)
    scores = st.sampled_from([1.0, 2.5, 2.5, 7.0]) | st.floats(0.0, 40.0)
    final = data.draw(st.dictionaries(st.integers(0, len(texts) - 1), scores, min_size=1))
    k = max(engine.PROXIMITY_DEPTH, data.draw(st.integers(0, 60)))
    at = data.draw(st.integers(0, min(k, len(final) - 1)))
    most = engine.PROXIMITY * sum(least for _, _, least in asked) if at else 0.0
    expected = _proximity_in_python(final, texts, asked, k, at, most)
    args = (k, at, most, engine.PROXIMITY_DEPTH, engine.PROXIMITY, b"x" + raw, 1, offsets)
    assert loops.proximity(final, *args, encoded) is None
    assert final == expected


@needs_loops
def test_the_proximity_pass_hands_back_the_chosen_when_one_is_not_a_saved_row() -> None:
    """A candidate added since the file was saved (past its rows) leaves the scores as
    they were and the chosen are handed back, best first, for the bonuses to be summed
    another way; a row outside the texts is refused with the scores as they were."""
    raw, offsets = _rows(["3\x1fcanary deploy", "4\x1fdeploy canary"])
    pairs = [(b"canary deploy", b"deploy canary", 1.0)]
    final = {0: 1.0, 1: 3.0, 2: 2.0}
    assert loops.proximity(final, 50, 0, 0.0, 50, 0.4, raw, 0, offsets, pairs) == [1, 2, 0]
    assert final == {0: 1.0, 1: 3.0, 2: 2.0}
    broken = array("q", [0, 5, 99])
    final = {0: 1.0, 1: 3.0}
    with pytest.raises(ValueError, match="outside the texts"):
        loops.proximity(final, 50, 0, 0.0, 50, 0.4, raw, 0, broken, pairs)
    assert final == {0: 1.0, 1: 3.0}
    assert loops.proximity(final, 50, 0, 0.0, 50, 0.4, raw, 0, offsets, pairs) is None
    assert final == {0: 1.0 + 0.4 * 1.0, 1: 3.0 + 0.4 * 0.5}


@needs_loops
@pytest.mark.parametrize(
    ("offsets", "slot"),
    [([0, 5], 1), ([0, 5], -1), ([0, 50], 0), ([4, 2], 0), ([-3, 2], 0)],
)
def test_damaged_offsets_are_refused_not_read_past_the_texts(offsets: list[int], slot: int) -> None:
    with pytest.raises(ValueError, match="outside the texts"):
        loops.near_pairs(b"a b c", 0, array("q", offsets), [slot], [(b"a b", b"b a", 1.0)])
    with pytest.raises(ValueError, match="int64"):
        loops.near_pairs(b"a b c", 0, b"1234", [0], [])


def _columns(prev: list[int], nxt: list[int], sessions: list[int], kinds: list[int]) -> list:
    return [array("i", prev), array("i", nxt), array("i", sessions), array("b", kinds)]


@needs_loops
def test_a_note_gains_its_sessions_share_and_its_neighbours() -> None:
    """Slot 1 is the best; 0 and 2 stand before and after it in session 7, 3 is a
    lesson. The best gains its session's share and a share of its better neighbour;
    a neighbour enters from its own score, with its session's share and the best's."""
    acc = array("d", [1.0, 4.0, 0.5, 3.0])
    cols = _columns([-1, 0, 1, -1], [1, 2, -1, -1], [7, 7, 7, -1], [0, 0, 0, 2])
    final = loops.around([(1, 4.0), (3, 3.0)], acc, None, *cols, {7: 2.0}, 0.1, 0.3, 0)
    assert final == {
        1: 4.0 + 0.1 * 2.0 + 0.3 * 1.0,
        3: 3.0,
        0: 1.0 + 0.1 * 2.0 + 0.3 * 4.0,
        2: 0.5 + 0.1 * 2.0 + 0.3 * 4.0,
    }
    assert list(final) == [1, 3, 0, 2]  # the best first, then the neighbours as met
    # A note the query may not see (its score is 0) never enters and lends nothing.
    acc[0] = 0.0
    hidden = loops.around([(1, 4.0)], acc, bytes([0, 1, 1, 1]), *cols, {}, 0.0, 0.3, 0)
    assert hidden == {1: 4.0 + 0.3 * 0.5, 2: 0.5 + 0.3 * 4.0}


def _around_in_python(top, acc, allowed, prev, nxt, sessions, kinds, scores, share, near):  # noqa: ANN001, ANN202, PLR0913
    """What ``around``'s docstring says, as a dict of the candidates is built."""
    final = {}
    for slot, score in top:
        gain = scores.get(sessions[slot], 0.0) if kinds[slot] == 0 else 0.0
        final[slot] = score + share * gain if gain != 0.0 else score
    for slot in list(final):
        for j in (prev[slot], nxt[slot]):
            if j < 0 or (allowed is not None and not allowed[j]) or j in final:
                continue
            own = acc[j]
            if own != 0.0 and share != 0.0:
                own += share * scores.get(sessions[j], 0.0)
            final[j] = own
    for slot in final:
        x, z = prev[slot], nxt[slot]
        if x >= 0 or z >= 0:
            left, right = acc[x] if x >= 0 else 0.0, acc[z] if z >= 0 else 0.0
            final[slot] = final[slot] + near * max(left, right)
    return final


@needs_loops
@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=1_500), st.integers(min_value=0), st.booleans())
def test_the_candidates_around_the_best_are_those_a_dict_of_them_holds(
    size: int, seed: int, masked: bool
) -> None:
    """Against the same rules in Python, up to hundreds of candidates (a slot may stand
    twice in the top: the later pair counts, and its neighbours' share is added once)."""
    rng = random.Random(seed)
    acc = array("d", [rng.choice([0.0, rng.uniform(0, 9)]) for _ in range(size)])
    sessions = [rng.randrange(-1, 20) for _ in range(size)]
    kinds = [rng.choice([0, 0, 0, 2]) for _ in range(size)]
    prev = [rng.randrange(-1, size) for _ in range(size)]
    nxt = [rng.randrange(-1, size) for _ in range(size)]
    allowed = bytes(rng.random() < 0.8 for _ in range(size)) if masked else None
    top = [(rng.randrange(size), rng.uniform(0, 9)) for _ in range(rng.randint(0, 300))]
    scores = {s: rng.uniform(0, 3) for s in range(0, 20, 3)}
    share = rng.choice([0.0, 0.2])
    cols = _columns(prev, nxt, sessions, kinds)
    found = loops.around(top, acc, allowed, *cols, scores, share, 0.3, 0)
    expected = _around_in_python(top, acc, allowed, prev, nxt, sessions, kinds, scores, share, 0.3)
    assert list(found.items()) == list(expected.items())


@needs_loops
@pytest.mark.parametrize(("prev", "top"), [([-1, 9, -1], [(1, 1.0)]), ([-1, -1, -1], [(5, 1.0)])])
def test_a_damaged_neighbour_link_is_refused(prev: list[int], top: list) -> None:
    acc = array("d", [1.0, 2.0, 3.0])
    cols = _columns(prev, [-1, -1, -1], [0, 0, 0], [0, 0, 0])
    with pytest.raises(ValueError, match="outside the index"):
        loops.around(top, acc, None, *cols, {}, 0.0, 0.3, 0)
    with pytest.raises(ValueError, match="same slots"):
        loops.around(top, array("d", [1.0]), None, *cols, {}, 0.0, 0.3, 0)


@needs_loops
def test_a_session_scores_by_the_words_it_holds() -> None:
    """Sessions 0 and 2 hold observations among the best (slot 3 is a lesson, slot 1
    a note of no session); each sums its words in the order given."""
    sessions, kinds = array("i", [0, -1, 2, 1, 0]), array("b", [0, 0, 0, 2, 0])
    top = [(2, 5.0), (0, 4.0), (3, 3.0), (1, 2.0), (4, 1.0)]
    info = [(1.5, {0: 3, 1: 9}), (0.7, {2: 1, 0: 1})]
    found = loops.session_sums(top, sessions, kinds, 0, info, 0.5, 0.25, [40, 10, 8])
    assert found == {
        2: 0.0 + 0.7 * 1 / (1 + 0.5 + 0.25 * 8),
        0: 0.0 + 1.5 * 3 / (3 + 0.5 + 0.25 * 40) + 0.7 * 1 / (1 + 0.5 + 0.25 * 40),
    }
    assert loops.session_sums(top, sessions, kinds, 0, [(1.5, {1: 9})], 0.5, 0.25, [1, 1, 1]) == {}
    with pytest.raises(ValueError, match="outside the index"):
        loops.session_sums(top, sessions, kinds, 0, info, 0.5, 0.25, [40])  # a session lost
    with pytest.raises(ValueError, match="outside the index"):
        loops.session_sums([(9, 1.0)], sessions, kinds, 0, info, 0.5, 0.25, [40, 10, 8])


@needs_loops
@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=60), st.integers(min_value=0, max_value=5), st.integers())
def test_counts_by_session_in_an_array_sum_as_the_dict_of_them(
    sessions: int, words: int, seed: int
) -> None:
    """A word's counts given as an int64 array by session give the very scores (to the
    bit) its dict gives, including a session past the array's end (none there)."""
    rng = random.Random(seed)
    size = 200
    of = array("i", [rng.randrange(-1, sessions) for _ in range(size)])
    kinds = array("b", [rng.choice([0, 0, 0, 2]) for _ in range(size)])
    top = [(d, 1.0) for d in rng.sample(range(size), 100)]
    lens = [rng.randint(1, 5_000) for _ in range(sessions)]
    as_dicts, as_arrays = [], []
    for _ in range(words):
        counts = {s: rng.randint(1, 90) for s in range(sessions) if rng.random() < 0.4}
        short = rng.randint(0, sessions)  # the array ends here: sessions after hold none
        counts = {s: c for s, c in counts.items() if s < short}
        kp1 = rng.uniform(0.1, 9.0)
        as_dicts.append((kp1, counts))
        as_arrays.append((kp1, array("q", [counts.get(s, 0) for s in range(short)])))
    mixed = [w if i % 2 else a for i, (w, a) in enumerate(zip(as_dicts, as_arrays, strict=True))]
    expected = loops.session_sums(top, of, kinds, 0, as_dicts, 0.5, 0.013, lens)
    assert loops.session_sums(top, of, kinds, 0, as_arrays, 0.5, 0.013, lens) == expected
    assert loops.session_sums(top, of, kinds, 0, mixed, 0.5, 0.013, lens) == expected


@needs_loops
def test_counts_by_session_of_another_width_are_refused() -> None:
    sessions, kinds = array("i", [0, 1]), array("b", [0, 0])
    for wrong in (array("i", [1, 2, 3]), b"12345", "not an array"):
        with pytest.raises((ValueError, TypeError), match="session_sums"):
            loops.session_sums([(0, 1.0)], sessions, kinds, 0, [(1.0, wrong)], 0.5, 0.2, [4, 4])


def test_the_extra_weight_of_length_shrinks_where_records_are_long_on_average() -> None:
    """A store of chat lines or notes weighs a long record's length in full; a store of
    whole sessions or documents, whose average is itself long, weighs it in proportion
    (there a long record is the usual, not a reply that buries the answer)."""
    assert engine.long_weight(60.0) == engine.LONG
    assert engine.long_weight(float(engine.LONG_FROM)) == engine.LONG
    assert engine.long_weight(4.0 * engine.LONG_FROM) == engine.LONG / 4
    assert engine.long_weight(0.0) == engine.LONG  # an empty store


@needs_loops
def test_kept_counts_by_session_follow_the_notes_that_come_and_go() -> None:
    """A search keeps its words' counts by session; a note with one of them written or
    forgotten since, or written in a session new since, changes the scores exactly as
    an index built afresh scores them (a kept count left stale would not)."""
    from memwork.core.domain import forgetting, sessions
    from memwork.core.services.recall import search
    from memwork.core.services.recall.follow import Recall
    from memwork.core.storage.store import Store
    from tests.conftest import NOW

    store = Store.in_memory()
    sids = [
        sessions.start_session(store, title=f"s{i}", now=NOW, actor="t")["id"] for i in range(3)
    ]
    for i, sid in enumerate(sids):
        for n in range(4):
            text = f"note {n}: the heron by pier {i}" if n % 2 else f"note {n}: gulls over pier {i}"
            sessions.observe(store, sid, text, now=NOW, actor="t")
    query = "the heron at the pier"

    def scores(recall: Recall) -> dict[str, float]:
        search.search(store, query, now=NOW, recall=recall)  # catches the index up
        index = recall.index
        assert index is not None
        return {index.refs[s]: v for s, v in index.scores(query, small=0).items()}

    kept = Recall()
    before = scores(kept)
    assert kept.index is not None and set(kept.index._by_session) == {"heron", "pier"}
    note = sessions.observe(store, sids[2], "heron heron heron, pier", now=NOW, actor="t")
    after_write = scores(kept)
    assert after_write == scores(Recall()) and after_write != before
    forgetting.forget_observations(store, [f"{sids[2]}/{note['id']}"], now=NOW, actor="t")
    assert scores(kept) == scores(Recall()) == before
    # A session the kept arrays do not reach yet.
    late = sessions.start_session(store, title="d", now=NOW, actor="t")["id"]
    sessions.observe(store, late, "a heron, a pier, a heron", now=NOW, actor="t")
    assert scores(kept) == scores(Recall()) != before


def test_counts_by_session_outside_the_sessions_stay_a_dict() -> None:
    """A session code no session has (a damaged saved file) is never written into an
    array by session, where -1 would land on the last session: the dict is read."""
    pytest.importorskip("numpy")  # (arrays are made only where it is loaded)
    index = engine.RecallIndex()
    index.session_ids = ["a", "b", "c"]
    assert list(index._session_counts("heron", {0: 5, 2: 7})) == [5, 0, 7]
    for damaged in ({0: 5, 3: 7}, {-1: 4}):
        assert index._session_counts(f"w{len(damaged)}", damaged) is damaged
