"""CLI calls around a forget or a restore: the search after it, beside a plain search,
at 100k records.

A forget (or a redaction, a deletion) takes text out of the store, and its commit
removes the recall index file with it. The forget's own process then saves the index
again in a child, from the removed file, caught up (``save_again_apart`` in
``core/services/recall/save_apart.py``); a search that finds no file while the child
saves waits for it. This runs whole ``memwork`` processes on a hard-linked copy of the
100k-record agent memory (its index file saved), round by round: a plain ``memwork
search``, a ``memwork forget observation`` of the best note it found, a search at once
after it, and one more once the child's file has landed. Reported: each call's wall
time p50 / max over the rounds, and the ratio of each search's p50 to the plain one's
(goal: the first search after a write within 3x a plain search).

With ``--after restore`` each round instead adds a note to a session of its own
(``memwork observe``) and restores a checkpoint taken before the first round: the
restore takes the note's table out, which removes the file as a forget does, and
rewrites only that table.

Usage: python bench/bench_search_after_forget.py [--rounds 7] [--after forget|restore]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall  # noqa: E402
from store_copy import linked_copy  # noqa: E402

OUT = ROOT / "bench" / "out"


def memwork(store: Path, *args: str, **env: str) -> tuple[float, str]:
    """One whole ``memwork`` process: its wall seconds and its output."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(MEMWORK_FSYNC="0", MEMWORK_NOW=bench_recall.NOW.isoformat(), **env)
    started = time.perf_counter()
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "memwork"), "--db", str(store), *args],
        capture_output=True,
        text=True,
        check=True,
        env=environ,
    )
    return time.perf_counter() - started, done.stdout


def missing(store: Path) -> bool:
    """Whether the index file is not there (yet)."""
    return not (store / "cache" / "recall" / "index.bin").exists()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--after", choices=("forget", "restore"), default="forget")
    args = ap.parse_args()
    write = args.after
    source, questions = bench_recall.cached_store(100_000)
    if not (source / "cache" / "recall" / "index.bin").exists():
        raise SystemExit(f"{source} has no saved recall index: run bench_recall.py --latency first")
    store = linked_copy(source, OUT / "search-after-forget")
    times: dict[str, list[float]] = {
        "plain search": [],
        write: [],
        "search at once after it": [],
        "search once the file is back": [],
    }
    gone = 0  # rounds whose search at once after the write found no file
    try:
        memwork(store, "search", "warm up")  # the page cache and bytecode, as in use
        if write == "restore":
            _, made = memwork(store, "--json", "checkpoint", "create", "-m", "bench")
            point = json.loads(made)["id"]
        for n, question in enumerate(questions[: args.rounds]):
            took, found = memwork(store, "--json", "search", question)
            times["plain search"].append(took)
            if write == "forget":
                notes = [h["id"] for h in json.loads(found) if h["kind"] == "observation"]
                took, _ = memwork(store, "forget", "observation", notes[0])
            else:
                memwork(store, "observe", "--session", f"bench-{n}", f"round {n}: {question}")
                took, _ = memwork(store, "checkpoint", "restore", point)
            times[write].append(took)
            gone += missing(store)
            took, _ = memwork(store, "search", question)
            times["search at once after it"].append(took)
            while missing(store):
                time.sleep(0.01)
            took, _ = memwork(store, "search", question)
            times["search once the file is back"].append(took)
    finally:
        shutil.rmtree(store, ignore_errors=True)
    plain = statistics.median(times["plain search"])
    print(f"100,000 records (the agent memory), {args.rounds} rounds, whole processes:")
    print()
    print("| call | p50 / max | ratio to a plain search |")
    print("|---|---:|---:|")
    for name, values in times.items():
        ratio = "" if name == write else f"{statistics.median(values) / plain:.2f}x"
        p50, most = statistics.median(values) * 1e3, max(values) * 1e3
        print(f"| {name} | {p50:.0f} / {most:.0f} ms | {ratio} |")
    print()
    print(f"no index file yet as the search after the {write} began: {gone} of {args.rounds}")


if __name__ == "__main__":
    main()
