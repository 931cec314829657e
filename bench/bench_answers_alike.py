"""Whether two processes that came by their recall indexes differently answer alike, at
size; and how often a query's candidates tie at the place where they are cut.

On a linked copy of the benchmark store of ``bench/bench_recall.py`` (N notes of the
``--shape``, with its saved recall index):

* ties: for ``--asked`` of its questions, whether the score of the hundredth candidate
  (the depth a query's first pick keeps) equals the next one's, so that which records
  are kept hangs on how ties are broken;
* answers: a long-lived ``Memory`` deletes ``--writes`` notes among the hits of some
  questions and adds as many (so slots are freed and taken again in its index), then
  answers ``--asked`` questions (top 10, ids and scores); a second ``Memory`` with the
  index file off (``MEMWORK_SEARCH_CACHE=0``) builds its index from the store and
  answers the same. Prints how many answers differ (goal: none), and the first few.

Usage: python bench/bench_answers_alike.py [N] [--shape mixed] [--asked 400]
[--writes 200] [--seed 5]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_agent import linked_copy  # noqa: E402
from bench_recall import OUT, cached_shaped_store, cached_store  # noqa: E402

from memwork import Memory  # noqa: E402
from memwork.core.services.recall import engine  # noqa: E402


def tie_share(memory: Memory, questions: list[str]) -> float:
    """The share of ``questions`` whose hundredth candidate ties with the next."""
    loops = engine._compiled
    if loops is None:
        raise SystemExit("the scoring loops are not built: nothing to measure")
    real = loops.sum_best
    tied = asked = 0

    def one_more(acc: Any, norms: Any, words: Any, k: int, *rest: Any) -> Any:
        nonlocal tied, asked
        found = real(acc, norms, words, k + 1, *rest)
        if isinstance(found, int):
            return found
        asked += 1
        tied += len(found) > k and found[k - 1][1] == found[k][1]
        return found[:k]

    engine._compiled = _With(loops, sum_best=one_more)
    try:
        for q in questions:
            memory.search(q, limit=10)
    finally:
        engine._compiled = loops
    return tied / max(asked, 1)


class _With:
    """A module with one function stood in for."""

    def __init__(self, module: Any, **given: Any) -> None:
        self._module, self._given = module, given

    def __getattr__(self, name: str) -> Any:
        return self._given.get(name) or getattr(self._module, name)


def answers(memory: Memory, questions: list[str]) -> dict[str, list[tuple[str, float]]]:
    return {q: [(h["id"], h["score"]) for h in memory.search(q, limit=10)] for q in questions}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("size", nargs="?", type=int, default=100_000)
    parser.add_argument("--shape", default="mixed")
    parser.add_argument("--asked", type=int, default=400)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    os.environ.setdefault("MEMWORK_FSYNC", "0")
    if args.shape == "mixed":
        source, questions = cached_store(args.size)
    else:
        source, questions = cached_shaped_store(args.size, args.shape)
    rng = random.Random(args.seed)
    copy = OUT / f"answers-alike-{args.shape}-{args.size}"
    shutil.rmtree(copy, ignore_errors=True)
    linked_copy(source, copy)
    try:
        kept = Memory(str(copy))
        asked = rng.sample(questions, min(args.asked, len(questions)))
        share = tie_share(kept, asked)
        print(f"{share:.0%} of {len(asked)} questions tie at their hundredth candidate")
        hits = [h for q in rng.sample(questions, 150) for h in kept.search(q, limit=5)]
        notes = [h["id"].split("/")[1] for h in hits if h["kind"] == "observation"]
        for note in list(dict.fromkeys(notes))[: args.writes]:
            kept.delete_observations(observations=[note])
        session = kept.start_session(title="answers alike")["id"]
        for q in rng.sample(questions, args.writes):
            kept.observe(session, q.replace("?", "") + " done")
        mine = answers(kept, asked)
        kept.close()
        os.environ["MEMWORK_SEARCH_CACHE"] = "0"
        fresh = Memory(str(copy))
        theirs = answers(fresh, asked)
        fresh.close()
        differ = [q for q in asked if mine[q] != theirs[q]]
        print(
            f"{len(differ)} of {len(asked)} answers differ between the index kept write by "
            "write and one built afresh"
        )
        for q in differ[:3]:
            print(f"  {q}\n    kept:   {mine[q][:4]}\n    afresh: {theirs[q][:4]}")
    finally:
        shutil.rmtree(copy, ignore_errors=True)


if __name__ == "__main__":
    main()
