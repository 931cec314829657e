"""Recall on Chinese text against the same notes written as words.

N notes of 30 characters drawn from 3,000 Han characters (Zipf: a few very common,
as in real text) go into one store; into another, the same notes with each character
written as an ASCII word of its own. A Chinese record holds each character and each
pair side by side as terms, about twice an English record's; this measures what that
costs: the index built from the store (CPU, in a fresh process, no saved index), and
``Memory.search`` of 300 queries of 2-6 characters cut from the notes (p50 / p95),
each side in the same run.

Usage: python bench/bench_cjk.py [N]   (default 5000)
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out"

_BUILD = """
import os, sys, time
os.environ["MEMWORK_SEARCH_CACHE"] = "0"
from memwork.core.storage.store import Store
from memwork.core.services.recall.follow import Recall
store = Store(sys.argv[1], create=False)
began = time.process_time()
index = Recall().refresh(store)
print(time.process_time() - began)
"""


def _notes(n: int) -> tuple[list[str], list[str]]:
    rng = random.Random(7)
    chars = [chr(0x4E00 + i * 7) for i in range(3000)]
    weights = [1 / (rank + 1) for rank in range(3000)]
    notes = ["".join(rng.choices(chars, weights, k=30)) for _ in range(n)]
    queries = []
    for _ in range(300):
        note, at = rng.choice(notes), rng.randrange(0, 24)
        queries.append(note[at : at + rng.choice([2, 3, 4, 6])])
    return notes, queries


def _word(char: str) -> str:
    return "w" + "".join("bcdfghjklmnpqrstvz"[int(d)] for d in str(ord(char) - 0x4E00))


def _side(name: str, notes: list[str], queries: list[str], write: Callable[[str], str]) -> None:
    from memwork import Memory

    path = OUT / f"cjk-{name}"
    shutil.rmtree(path, ignore_errors=True)
    memory = Memory(path)
    for start in range(0, len(notes), 400):  # sessions below the cap on notes
        session = memory.start_session(agent="bench")["id"]
        for note in notes[start : start + 400]:
            memory.observe(session, write(note))
    memory.close()
    built = [
        float(subprocess.run([sys.executable, "-c", _BUILD, str(path)], **_CAPTURE).stdout)
        for _ in range(3)
    ]
    memory = Memory(path)
    memory.search(write(queries[0]))  # the index built (or read) here
    took = []
    for query in queries:
        began = time.perf_counter()
        memory.search(write(query), limit=10)
        took.append(time.perf_counter() - began)
    memory.close()
    took.sort()
    print(
        f"| {name} | {statistics.median(built):.2f} s | {1000 * statistics.median(took):.2f} ms "
        f"| {1000 * took[int(0.95 * len(took))]:.2f} ms |"
    )


_CAPTURE: dict = {"capture_output": True, "text": True, "check": True}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    os.environ.setdefault("MEMWORK_FSYNC", "0")  # the writes are not what is measured
    notes, queries = _notes(n)
    print(f"{n} notes of 30 characters; index build CPU (median of 3), search of 300 queries")
    print()
    print("| notes | index build | search p50 | search p95 |")
    print("|---|---:|---:|---:|")
    _side("Han characters", notes, queries, lambda text: text)
    _side("the same as ASCII words", notes, queries, lambda t: " ".join(_word(c) for c in t))


if __name__ == "__main__":
    main()
