"""Writes with the recall index kept current: this checkout beside another, in one run.

An agent writes (``observe``, ``record_episode``) between its questions. Recall
adds nothing to a write: a long-lived process's index catches up at the next
query, re-reading the documents the write changed. This measures both, beside
the same writes made by another checkout (the code before recall, say):

* in-process: ``Memory.observe`` and ``Memory.record_episode`` on a fresh
  hard-linked copy of the 10k benchmark store of ``bench_recall.py`` (100
  sessions), CPU and wall p50 per call, and, where the checkout has recall, what
  the index's catch-up with that one write adds to the next query (timed inside
  the read of the store a query opens anyway);
* each side runs in its own child process, the two sides taking turns round by
  round (A B A B ...), so a busy moment on the machine hits both alike; the
  ratio is taken round by round.

fsync is off (``MEMWORK_FSYNC=0``), as in the other write benchmarks' second column.

    python bench/bench_writes.py --vs ../main/.venv/bin/python [--records 10000] [--rounds 4]
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
EPISODE = {
    "task_id": "billing-ops",
    "score": 0.42,
    "steps": 7,
    "summary": "Rolled back the billing replicas on db-3 after the health checks failed",
    "mistakes": ["Skipped the smoke tests"],
}


def child(store: Path, calls: int) -> dict[str, float]:
    """Time ``calls`` observes then ``calls`` episodes in this interpreter's memwork."""
    from memwork import Memory

    memory = Memory(store)
    recall = None
    try:
        from memwork.core.services.recall.search import (
            kept_recall,  # recall's own index (not before it)
        )

        recall = kept_recall(memory.store)[1]
        recall.refresh(memory.store)  # built before the clock starts, as in a server
    except ImportError:
        pass
    sid = memory.list_sessions()[0]["id"]
    out: dict[str, list[float]] = {}

    def timed(name: str, fn: object) -> None:
        c0, w0 = time.process_time(), time.perf_counter()
        fn()  # type: ignore[operator]
        out.setdefault(f"{name} cpu", []).append((time.process_time() - c0) * 1000)
        out.setdefault(f"{name} wall", []).append((time.perf_counter() - w0) * 1000)

    def catch_up(name: str) -> None:
        # What the next query adds for the write: its catch-up, timed inside the read of
        # the store that every query opens anyway (the read itself costs a query the
        # same with or without a write before it).
        assert recall is not None
        with memory.store.reading():
            timed(name, lambda: recall.refresh(memory.store))

    for n in range(calls + 10):
        timed("observe", lambda n=n: memory.observe(sid, f"ran the smoke tests again, {n} passed"))
        if recall is not None:
            catch_up("observe catch-up")
    for n in range(calls + 10):
        timed("episode", lambda n=n: memory.record_episode({**EPISODE, "steps": n}))
        if recall is not None:
            catch_up("episode catch-up")
    memory.close()
    # The first ten calls of each warm caches and are not counted.
    return {name: statistics.median(values[10:]) for name, values in out.items()}


def run_side(python: str, store: Path, calls: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["MEMWORK_FSYNC"] = "0"
    done = subprocess.run(
        [python, __file__, "--child", str(store), "--calls", str(calls)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd="/",
    )
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vs", help="the other checkout's Python (its venv's python)")
    ap.add_argument("--records", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--calls", type=int, default=150, help="writes of each kind per round")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.calls)))
        return
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_recall

    source, _ = bench_recall.cached_store(args.records)
    sides = {"this checkout": sys.executable}
    if args.vs:
        sides["the other"] = args.vs
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name, python in sides.items():
            copy = bench_recall.linked_copy(source, bench_recall.OUT / "writes-run")
            rounds[name].append(run_side(python, copy, args.calls))
            shutil.rmtree(copy, ignore_errors=True)
            print(f"(round {r + 1}, {name}: {rounds[name][-1]})", file=sys.stderr)
    ours = rounds["this checkout"]
    theirs = rounds.get("the other")
    head = "| write | this checkout: CPU / wall p50 | index catch-up (CPU p50) |"
    rule = "|---|---:|---:|"
    if theirs:
        head += " the other: CPU / wall p50 | ratio, CPU (wall) | with the catch-up, CPU |"
        rule += "---:|---:|---:|"
    print(head)
    print(rule)
    for kind, label in (("observe", "`observe`"), ("episode", "`record_episode`")):
        cpu = statistics.median(r[f"{kind} cpu"] for r in ours)
        wall = statistics.median(r[f"{kind} wall"] for r in ours)
        catch = [r.get(f"{kind} catch-up cpu", 0.0) for r in ours]
        line = f"| {label} | {cpu:.2f} / {wall:.2f} ms | {statistics.median(catch):.2f} ms |"
        if theirs:
            o_cpu = statistics.median(r[f"{kind} cpu"] for r in theirs)
            o_wall = statistics.median(r[f"{kind} wall"] for r in theirs)
            pairs = list(zip(ours, theirs, strict=True))
            ratio_cpu = statistics.median(a[f"{kind} cpu"] / b[f"{kind} cpu"] for a, b in pairs)
            ratio_wall = statistics.median(a[f"{kind} wall"] / b[f"{kind} wall"] for a, b in pairs)
            ratio_all = statistics.median(
                (a[f"{kind} cpu"] + a.get(f"{kind} catch-up cpu", 0.0)) / b[f"{kind} cpu"]
                for a, b in pairs
            )
            line += (
                f" {o_cpu:.2f} / {o_wall:.2f} ms | {ratio_cpu:.2f}x ({ratio_wall:.2f}x) "
                f"| {ratio_all:.2f}x |"
            )
        print(line)


if __name__ == "__main__":
    main()
