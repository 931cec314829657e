"""The first search after a write, beside a plain search, in one long-lived process.

An agent's process writes (``Memory.observe``) between its questions. The recall
index catches up with a write at the next search (the documents the write
changed), and the index file is saved outside any search: by a background thread
of the long-lived process, and when it closes. This measures, on a folder store
of N long observations (~950 characters each, 100 to a session; built once into
``bench/out/`` and kept for the next run):

* ``plain search``: ``Memory.search`` with nothing written since the last one;
* ``first search after a write, save not due``: the first search after one
  ``observe``, while the index file is not due for a save (``save_after`` 1 hour);
* ``first search after a write, save due``: the same with a save due after every
  write (``save_after`` 1 ms; the background thread runs it while the next calls
  run);
* ``main's rule``: the save written inside the search that found it due, as the
  code before did, on the same index (``--inline-rounds`` of them);
* ``observe``: the time to add one record (``Memory.observe``), alone and while a
  background save runs. A first run builds the store and its index file (a few
  minutes at 30k) into ``bench/out/``; the timed runs use a hard-linked copy.

Rounds are a plain search, an observe, the first search after it, then ``--think``
seconds (the agent's own work between calls; the background thread saves then, and
during the calls that follow). Each row is p50 / p95
wall milliseconds, and the ratio of its p50 (and p95) to the plain search's, all
measured in this run on this machine. Goals: the first search
after a write within 3x a plain one, an observe within 5 ms. fsync is off
(``MEMWORK_FSYNC=0``), as in the other write benchmarks.

    python bench/bench_recall_writes.py 10000 30000 [--rounds 60]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("MEMWORK_FSYNC", "0")

from store_copy import linked_copy  # noqa: E402

from memwork import Memory  # noqa: E402
from memwork.core.domain import sessions  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

OUT = ROOT / "bench" / "out"
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
#: Bumped whenever ``_fill`` changes what a cached store holds.
STORE_VERSION = 1
PER_SESSION = 100
TEXT_CHARS = 950
QUERIES = [
    "why did the billing replica fail its health check",
    "rotate the staging keys",
    "flaky integration test timeout",
    "what did we decide about the cache eviction policy",
    "memory leak in the ingest worker",
    "rollback of the schema migration",
    "who owns the payments gateway",
    "slow query on the orders table",
    "tls certificate expired",
    "retry storm after the deploy",
]


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """Pronounceable made-up words (a Zipf draw over them reads like real text to BM25)."""
    onsets = "b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st tr sh ch".split()
    vowels = "a e i o u ai ea io ou".split()
    codas = ["", "n", "r", "s", "t", "l", "nd", "st", "ck"]
    words: set[str] = set()
    while len(words) < size:
        n = rng.choice((1, 2, 2, 3))
        stem = "".join(rng.choice(onsets) + rng.choice(vowels) for _ in range(n))
        words.add(stem + rng.choice(codas))
    plain = (
        "the a of to and in is was we it for on that this with as by at from deploy billing "
        "replica health check staging keys cache test timeout worker ingest schema migration "
        "payments gateway query orders table certificate retry storm rollback memory leak"
    ).split()
    return plain + sorted(words)


def _text(rng: random.Random, vocab: list[str], weights: list[float]) -> str:
    out: list[str] = []
    length = 0
    while length < TEXT_CHARS:
        sentence = rng.choices(vocab, weights, k=rng.randint(8, 18))
        line = " ".join(sentence).capitalize() + "."
        out.append(line)
        length += len(line) + 1
    return " ".join(out)[:TEXT_CHARS]


def _fill(path: Path, records: int) -> None:
    rng = random.Random(records)
    vocab = _vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    store = Store(path)
    count = max(1, -(-records // PER_SESSION))
    with store.transaction():
        sids = [
            sessions.start_session(store, title=f"run {s}", now=NOW, actor="bench")["id"]
            for s in range(count)
        ]
    done = 0
    while done < records:
        with store.transaction():
            for i in range(done, min(records, done + 2000)):
                at = NOW - timedelta(seconds=records - i)
                text = _text(rng, vocab, weights)
                sessions.observe(store, sids[i % count], text, now=at, actor="bench")
        done = min(records, done + 2000)
    store.close()


def cached_store(records: int) -> Path:
    """The store of ``records`` long observations, built once into ``bench/out``."""
    folder = OUT / f"recall-writes-v{STORE_VERSION}-{records}"
    done = folder.with_suffix(".done")
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        print(f"(building a store of {records:,} long notes in {folder} ...)", file=sys.stderr)
        _fill(folder, records)
        done.write_text("ok\n")
    if not (folder / "cache" / "recall" / "index.bin").exists():
        print(f"(building the recall index of {folder} ...)", file=sys.stderr)
        with Memory(folder, clock=lambda: NOW) as memory:
            memory.search(QUERIES[0])  # saved on close
    return folder


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _ms(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


class Row:
    """Wall milliseconds of one kind of call."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ms: list[float] = []

    def p50(self) -> float:
        return statistics.median(self.ms)

    def p95(self) -> float:
        return _p95(self.ms)


def measure(records: int, rounds: int, inline_rounds: int, think: float) -> list[Row]:
    """The rows for a store of ``records`` notes (see the module docstring)."""
    from memwork.core.services.recall.search import kept_recall, saver_of

    store_path = linked_copy(cached_store(records), OUT / f"recall-writes-run-{records}")
    memory = Memory(store_path, clock=lambda: NOW)
    lock, recall = kept_recall(memory.store)
    t0 = time.perf_counter()
    memory.search(QUERIES[0])
    print(f"({records:,} notes: index loaded in {time.perf_counter() - t0:.2f} s)", file=sys.stderr)
    saver = saver_of(memory.store)
    assert saver is not None
    sid = memory.start_session(title="bench")["id"]
    for q in QUERIES * 2:  # warm-up: every query's words decoded once
        memory.search(q)

    def settled() -> None:
        """Wait until the background thread has nothing left to save."""
        while True:
            with lock:
                due = recall.save_due()
            if not saver.saving and (due is None or due > time.monotonic()):
                break
            time.sleep(0.01)

    plain, observe = Row("plain search"), Row("observe (one record)")
    not_due, due = (
        Row("first search after a write, save not due"),
        Row("first search after a write, save due"),
    )
    observe_saving = Row("observe while a save runs")
    inline = Row("main's rule: the save inside the search")
    n = 0
    recall.save_after = 3600.0
    settled()
    for i in range(rounds):
        q = QUERIES[i % len(QUERIES)]
        plain.ms.append(_ms(lambda q=q: memory.search(q)))
        text = f"bench note {n}: {q}"
        observe.ms.append(_ms(lambda text=text: memory.observe(sid, text)))
        n += 1
        not_due.ms.append(_ms(lambda q=q: memory.search(q)))
        time.sleep(think)
    # Due: every write makes a save due at once; a save takes longer than a round, so
    # the background thread is saving while the next writes and searches run.
    recall.save_after = 0.001
    landed = saver.landed
    for i in range(rounds):
        q = QUERIES[i % len(QUERIES)]
        text = f"bench note {n}: {q}"
        observe_saving.ms.append(_ms(lambda text=text: memory.observe(sid, text)))
        n += 1
        due.ms.append(_ms(lambda q=q: memory.search(q)))
        time.sleep(think)
    settled()
    saves, took = saver.landed - landed, saver.last_seconds
    # The rule this replaces: a save due is written inside the search that found it.
    recall.save_after = 3600.0
    for i in range(inline_rounds):
        q = QUERIES[i % len(QUERIES)]
        memory.observe(sid, f"bench note {n}: {q}")
        n += 1

        def search_then_save(q: str = q) -> None:
            memory.search(q)
            with lock:
                recall.flush(memory.store)

        inline.ms.append(_ms(search_then_save))
    memory.close()
    shutil.rmtree(store_path, ignore_errors=True)
    print(
        f"({records:,} notes: {saves} background saves landed during the due rounds, "
        f"the last in {took:.2f} s of wall time)",
        file=sys.stderr,
    )
    return [plain, not_due, due, inline, observe, observe_saving]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="*", type=int, default=[10_000, 30_000])
    ap.add_argument("--rounds", type=int, default=60, help="calls per row")
    ap.add_argument("--inline-rounds", type=int, default=10, help="calls of main's rule row")
    ap.add_argument(
        "--think", type=float, default=0.05, help="seconds an agent thinks between rounds"
    )
    args = ap.parse_args(argv)
    print("| notes | call | p50 ms | p95 ms | p50 / plain | p95 / plain |")
    print("|---:|---|---:|---:|---:|---:|")
    for records in args.records:
        rows = measure(records, args.rounds, args.inline_rounds, args.think)
        plain = rows[0]
        for row in rows:
            ratio = (
                f"{row.p50() / plain.p50():.2f}x | {row.p95() / plain.p95():.2f}x"
                if "search" in row.name
                else "| "
            )
            print(
                f"| {records:,} | {row.name} | {row.p50():.2f} | {row.p95():.2f} | {ratio} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
