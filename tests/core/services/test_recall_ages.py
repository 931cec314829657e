"""Records of equal scores are ordered by their ages (from their time-ordered ids), so
two processes that numbered the same records otherwise pick and list the same ones."""

from __future__ import annotations

import random

from memwork.core.base import ids
from memwork.core.services.recall.ages import age_key
from memwork.core.services.recall.engine import DEPTH, RecallIndex, fingerprint
from memwork.core.services.recall.extract import NEVER, Unit


def test_an_id_made_later_is_older_by_no_age() -> None:
    ids.seed(3)
    try:
        made = [ids.new_id("obs") for _ in range(2_000)]  # many in one millisecond
    finally:
        ids.seed(None)
    ages = [age_key(f"ses_X/{ref}") for ref in made]
    assert ages == sorted(ages)
    assert len(set(ages)) == len(ages)
    assert all(0 <= age < 2**63 for age in ages)


def test_a_ref_with_no_id_is_aged_by_its_text_alike_everywhere() -> None:
    assert age_key("birds") == age_key("birds") < 0
    assert age_key("birds") != age_key("herons")
    assert age_key("ep_not-an-id") < 0


def _units(count: int, rng: random.Random) -> list[Unit]:
    """Episodes of a few words each, many alike: scores tie in runs past the hundredth."""
    ids.seed(rng.randrange(1 << 30))
    try:
        refs = [ids.new_id("ep") for _ in range(count)]
    finally:
        ids.seed(None)
    words = ["canary", "rollback", "deploy", "gate"]
    return [
        Unit(
            ref,
            "episode",
            ref,
            ((1.0, " ".join(rng.sample(words, rng.randint(1, 3)))),),
            1.0,
            None,
            0,
            NEVER,
        )
        for ref in refs
    ]


def test_indexes_of_the_same_records_in_other_orders_answer_alike() -> None:
    """The same 600 records put in three orders (and some taken out and put back, so
    slots are reused): every query's hits are the same, though far more than the best
    hundred candidates tie."""
    rng = random.Random(11)
    units = _units(600, rng)
    answers = []
    for order in range(3):
        shuffled = units[:]
        random.Random(order).shuffle(shuffled)
        index = RecallIndex()
        index.sync_changes("t", [], [(u, fingerprint(u)) for u in shuffled], "1")
        back = shuffled[: 50 * order]
        index.sync_changes("t", [u.ref for u in back], [], "2")  # their slots freed
        index.sync_changes("t", [], [(u, fingerprint(u)) for u in back], "3")  # reused
        answers.append(
            [
                [(h.ref, h.score) for h in index.search(q, 20)]
                for q in ("canary", "rollback deploy", "gate canary deploy")
            ]
        )
    assert answers[0] == answers[1] == answers[2]
    hits = answers[0][0]
    assert len({score for _, score in hits}) < len(hits)  # ties among the hits shown
    tied = [ref for ref, score in hits if score == hits[0][1]]
    assert tied == sorted(tied, key=age_key, reverse=True)  # the later made first
    assert sum(1 for u in units if "canary" in u.fields[0][1]) > DEPTH  # past the depth
