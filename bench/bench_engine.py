"""The recall index alone, beside tantivy, on the same texts in the same process.

Builds a :class:`RecallIndex` of N observations (100 to a session, Zipf-distributed
words, long texts of ~950 characters or short ones of <= 300) and a tantivy index of
the very same texts, then asks both the same 300 questions (six words of a random
record, two of them swapped for other words, as a person misremembers them) and
prints p50/p95 milliseconds and the ratio memwork / tantivy. Also: adding one record
to the index (p50/p95), and the index's memory (tracemalloc, this process).

    python bench/bench_engine.py 10000 100000
    python bench/bench_engine.py --short 100000

tantivy is the evaluation's own (``bench/recall_baselines.py``), installed into the
running environment when it is missing (the bench extra).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from recall_baselines import Tantivy, need  # noqa: E402

from memwork.core.services.recall.engine import RecallIndex, fingerprint  # noqa: E402
from memwork.core.services.recall.extract import NEVER, Unit  # noqa: E402
from memwork.core.services.recall.query import Filter  # noqa: E402

SESSION = 100
WORDS = 20_000
OBSERVATIONS = Filter(kinds=frozenset({"observation"}))


def vocabulary(rng: random.Random) -> list[str]:
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    words: set[str] = set()
    while len(words) < WORDS:
        words.add("".join(rng.choice(syllables) for _ in range(rng.choice((1, 2, 2, 3, 3, 4)))))
    return sorted(words)


def texts(n: int, short: bool, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    vocab = vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(vocab))]  # Zipf's law
    cum = list(_cumulative(weights))
    out = []
    for _ in range(n):
        target = rng.randint(40, 300) if short else int(rng.lognormvariate(math.log(800), 0.5))
        words: list[str] = []
        size = 0
        while size < target:
            word = vocab[_pick(cum, rng.random() * cum[-1])]
            words.append(word)
            size += len(word) + 1
        out.append(" ".join(words))
    return out


def _cumulative(weights: list[float]) -> list[float]:
    total = 0.0
    out = []
    for w in weights:
        total += w
        out.append(total)
    return out


def _pick(cum: list[float], x: float) -> int:
    import bisect

    return min(bisect.bisect_left(cum, x), len(cum) - 1)


def questions(corpus: list[str], count: int = 300, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = rng.choice(corpus).split()
        picked = rng.sample(words, min(6, len(words)))
        for i in rng.sample(range(len(picked)), min(2, len(picked))):
            picked[i] = rng.choice(rng.choice(corpus).split())
        out.append(" ".join(picked))
    return out


def unit(i: int, text: str) -> Unit:
    return Unit(
        ref=f"o{i}",
        kind="observation",
        title=text[:40],
        fields=((1.0, text),),
        time=1.7e9 + i,
        session=f"s{i // SESSION}",
        seq=i % SESSION,
        expires=NEVER,
    )


def build(corpus: list[str]) -> RecallIndex:
    index = RecallIndex()
    for start in range(0, len(corpus), SESSION):
        fresh = [
            (u, fingerprint(u))
            for u in (unit(i, corpus[i]) for i in range(start, min(start + SESSION, len(corpus))))
        ]
        index.append_in_order(f"observations-{start // SESSION}", fresh, None, "1")
    return index


def _top(engine: Tantivy, limit: int, query: str) -> list[int]:
    return engine.search(query, limit)


def timed(fn: Callable[[str], object], asked: list[str]) -> tuple[float, float]:
    for q in asked[:20]:
        fn(q)
    spent = []
    for q in asked:
        t0 = time.perf_counter()
        fn(q)
        spent.append((time.perf_counter() - t0) * 1000)
    spent.sort()
    return statistics.median(spent), spent[round(0.95 * (len(spent) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[10_000])
    ap.add_argument("--short", action="store_true", help="texts of <= 300 characters")
    ap.add_argument("--limit", type=int, default=10)
    args = ap.parse_args()
    need("tantivy", "bm25s")  # bm25s: the stop words tantivy is asked without
    print(
        "| records | texts | memwork p50 / p95 | tantivy p50 / p95 | ratio p50 / p95 "
        "| add one p50 / p95 | index memory |"
    )
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        corpus = texts(n + 200, args.short)
        base, extra = corpus[:n], corpus[n:]
        tracemalloc.start()
        index = build(base)
        memory = tracemalloc.get_traced_memory()[0] / 2**20
        tracemalloc.stop()
        engine = Tantivy(base)
        asked = questions(base)
        ours = timed(partial(index.search, limit=args.limit, where=OBSERVATIONS), asked)
        theirs = timed(partial(_top, engine, args.limit), asked)
        adds = []
        for j, text in enumerate(extra):
            u = unit(n + j, text)
            t0 = time.perf_counter()
            index.append_in_order(f"observations-extra-{j}", [(u, fingerprint(u))], None, "1")
            adds.append((time.perf_counter() - t0) * 1000)
        adds.sort()
        add = (statistics.median(adds), adds[round(0.95 * (len(adds) - 1))])
        shape = "short" if args.short else "long"
        print(
            f"| {n:,} | {shape} | {ours[0]:.2f} / {ours[1]:.2f} ms "
            f"| {theirs[0]:.2f} / {theirs[1]:.2f} ms "
            f"| {ours[0] / theirs[0]:.1f}x / {ours[1] / theirs[1]:.1f}x "
            f"| {add[0]:.2f} / {add[1]:.2f} ms | {memory:.0f} MB |",
            flush=True,
        )


if __name__ == "__main__":
    main()
