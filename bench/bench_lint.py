"""Lint's pairwise work on the 100k agent memory's 3,204 lessons, against comparing
every pair in Python (how it was done before), in the same run.

Lint flags lessons that contradict each other and offers near-duplicates for merging;
the workbench works both out for its header and its Slots and Lessons panes. Timed
here: ``contradictions.lesson_pairs`` and ``lessons.near_duplicate_clusters``, each
against the every-pair way, with their answers compared, and a whole ``memwork lint``
process. Each figure is the best of ``--rounds`` (the process-wide cache of the last
answer is cleared before each round).

Usage: python bench/bench_lint.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402
from store_copy import linked_copy  # noqa: E402

from core.base.last_result import LastResult  # noqa: E402
from core.base.text import normalise  # noqa: E402
from core.domain import contradictions, lessons  # noqa: E402
from core.storage.store import Store  # noqa: E402


def every_pair_contradicting(docs: list[dict[str, Any]], now: Any) -> list[tuple[str, str]]:
    """The pairs as lint found them before: every pair that shares a word, one side
    negating something, compared in Python."""
    parsed = [contradictions._Parsed(x) for x in contradictions._live(docs, now)]
    by_word: dict[str, list[int]] = {}
    negating: dict[str, list[int]] = {}
    for i, item in enumerate(parsed):
        for word in item.words:
            by_word.setdefault(word, []).append(i)
            if item.negates:
                negating.setdefault(word, []).append(i)
    found = []
    for i, item in enumerate(parsed):
        index = by_word if item.negates else negating
        for j in sorted({j for w in item.words for j in index.get(w, ()) if j > i}):
            other = parsed[j]
            if contradictions.scopes_meet(
                item.doc["scope"], other.doc["scope"]
            ) and contradictions._contradict(item, other):
                found.append((item.doc["id"], other.doc["id"]))
    return found


def every_pair_linked(docs: list[dict[str, Any]], now: Any) -> set[tuple[str, str]]:
    """The near-duplicate links as found before: every pair of one scope in Python."""
    live = [x for x in docs if lessons.is_live(x, now)]
    texts = [normalise(x["content"]) for x in live]
    found = set()
    for i, a in enumerate(live):
        for j in range(i + 1, len(live)):
            b = live[j]
            if (
                a["scope"] == b["scope"]
                and fuzz.token_set_ratio(texts[i], texts[j]) >= 90
                and not contradictions.texts_contradict(a["content"], b["content"])
            ):
                found.add((a["id"], b["id"]))
    return found


def best(rounds: int, run: Callable[[], Any]) -> tuple[float, Any]:
    times, answer = [], None
    for _ in range(rounds):
        contradictions._PAIRS = LastResult()
        lessons._LINKED = LastResult()
        started = time.perf_counter()
        answer = run()
        times.append(time.perf_counter() - started)
    return min(times), answer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    source, _ = bench_recall.cached_store(100_000)
    now = bench_recall.NOW
    store = Store(source, create=False)
    with store.reading():
        docs = lessons.all_lessons(store)
    print(f"{len(docs):,} lessons, best of {args.rounds} rounds:")
    print()
    print("| work | now | every pair in Python | ratio | same answer |")
    print("|---|---:|---:|---:|---|")
    took, pairs = best(args.rounds, lambda: contradictions.lesson_pairs(docs, now))
    old, expected = best(1, lambda: every_pair_contradicting(docs, now))
    same = [(a["id"], b["id"]) for a, b in pairs] == expected
    print(f"| contradicting pairs | {took:.2f} s | {old:.2f} s | {took / old:.2f}x | {same} |")
    took, groups = best(args.rounds, lambda: lessons.near_duplicate_clusters(docs, now))
    old, links = best(1, lambda: every_pair_linked(docs, now))
    grouped = {x["id"] for g in groups for x in g}
    same = grouped == {i for link in links for i in link}
    print(f"| near-duplicate groups | {took:.2f} s | {old:.2f} s | {took / old:.2f}x | {same} |")
    env = {**os.environ, "MEMWORK_NOW": now.isoformat(), "MEMWORK_FSYNC": "0"}
    copy = linked_copy(source, ROOT / "bench" / "out" / "lint-copy")
    times = []
    try:
        for _ in range(args.rounds):
            started = time.perf_counter()
            subprocess.run(
                [str(ROOT / ".venv" / "bin" / "memwork"), "--db", str(copy), "lint"],
                capture_output=True,
                check=False,
                env=env,
            )
            times.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    print(f"| a whole `memwork lint` | {min(times):.2f} s | | | |")


if __name__ == "__main__":
    main()
