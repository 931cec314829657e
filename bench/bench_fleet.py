"""A fleet of writer processes on one folder store, beside SQLite WAL (synchronous=FULL).

N processes each make K ``Memory.observe`` calls on the same folder store (fsync on),
all started at one moment; then N processes each commit the same rows K times into
one SQLite database (journal_mode=WAL, synchronous=FULL, one transaction per call,
a busy timeout so none fails). The rows are the documents one ``observe`` commits,
heard through ``store.subscribe`` once before the run: the same tables, the same
document sizes, a new id per call. Reports commits per second for each side (all
commits / the time from the first start to the last end) and their ratio, round by
round with the two sides taking turns, so a busy moment on the machine hits both.

One writer (``--writers 1``) is the single-writer commit cost.

Usage: python bench/bench_fleet.py [--writers 8] [--calls 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"


def _memwork_writer(store: str, session: str, calls: int, start_at: float, me: int) -> dict:
    from memwork.core.ops.memory import Memory

    memory = Memory(store)
    memory.observe(session, f"writer {me} is ready")  # opening costs are not the commit's
    while time.time() < start_at:
        time.sleep(0.0005)
    began = time.time()
    for n in range(calls):
        memory.observe(session, f"writer {me} step {n}: the canary for billing-api went green")
    ended = time.time()
    memory.close()
    return {"began": began, "ended": ended, "calls": calls}


def _sqlite_writer(path: str, rows_file: str, calls: int, start_at: float, me: int) -> dict:
    rows = json.loads(Path(rows_file).read_text())
    db = sqlite3.connect(path, isolation_level=None, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    while time.time() < start_at:
        time.sleep(0.0005)
    began = time.time()
    for n in range(calls):
        db.execute("BEGIN IMMEDIATE")
        for table, doc_id, doc in rows:
            # A new observation each call; the rows it updates (its session) stay the same.
            key = f"{doc_id}-{me}-{n}" if table == rows[0][0] else doc_id
            db.execute(
                f'INSERT OR REPLACE INTO "{table}" (id, doc) VALUES (?, ?)',
                (key, json.dumps(doc, sort_keys=True)),
            )
        db.execute("COMMIT")
    ended = time.time()
    db.close()
    return {"began": began, "ended": ended, "calls": calls}


def _worker(argv: list[str]) -> None:
    kind, target, extra, calls, start_at, me = argv
    if kind == "memwork":
        result = _memwork_writer(target, extra, int(calls), float(start_at), int(me))
    else:
        result = _sqlite_writer(target, extra, int(calls), float(start_at), int(me))
    print(json.dumps(result))


def _fleet(kind: str, target: str, extra: str, writers: int, calls: int) -> float:
    """Commits per second of ``writers`` processes started at one moment."""
    start_at = time.time() + 1.5 + 0.15 * writers  # every process imported and open by then
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", kind, target, extra, str(calls)]
            + [str(start_at), str(me)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "MEMWORK_FSYNC": os.environ.get("FLEET_FSYNC", "1")},
        )
        for me in range(writers)
    ]
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a {kind} writer failed (exit {proc.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    began = min(r["began"] for r in results)
    ended = max(r["ended"] for r in results)
    return sum(r["calls"] for r in results) / (ended - began)


def _setup(work: Path) -> tuple[str, str, str, str]:
    """A store with a session, the SQLite twin's tables, and the rows one observe commits."""
    os.environ["MEMWORK_FSYNC"] = "1"
    from memwork.core.ops.memory import Memory
    from memwork.core.storage.backend import Change

    store = work / "store"
    memory = Memory(store)
    session = memory.start_session(agent="bench")["id"]
    rows: list[tuple[str, str, dict]] = []

    def heard(change: Change) -> None:
        for name, table in change.tables.items():
            docs = memory.store.docs(name)
            rows.extend((name, i, docs[i]) for i in sorted(table.put) if i in docs)

    memory.store.subscribe(heard)
    memory.observe(session, "writer 0 step 0: the canary for billing-api went green")
    memory.close()
    # The new observation first: the SQLite writers give it a new id each call.
    rows.sort(key=lambda row: row[0] != "observations")
    rows_file = work / "rows.json"
    rows_file.write_text(json.dumps(rows))
    twin = work / "twin.sqlite"
    db = sqlite3.connect(twin, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    for table in {row[0] for row in rows}:
        db.execute(f'CREATE TABLE IF NOT EXISTS "{table}" (id TEXT PRIMARY KEY, doc TEXT)')
    db.close()
    return str(store), session, str(twin), str(rows_file)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--calls", type=int, default=40, help="commits per writer")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = OUT / f"fleet-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        store, session, twin, rows_file = _setup(work)
        print(
            f"{args.writers} writer processes x {args.calls} commits, fsync on, "
            f"{args.rounds} rounds (memwork then SQLite each round)"
        )
        print()
        print("| round | memwork commits/s | SQLite WAL FULL commits/s | ratio |")
        print("|---|---:|---:|---:|")
        ratios: list[float] = []
        for r in range(args.rounds):
            ours = _fleet("memwork", store, session, args.writers, args.calls)
            theirs = _fleet("sqlite", twin, rows_file, args.writers, args.calls)
            ratios.append(ours / theirs)
            print(f"| {r + 1} | {ours:.0f} | {theirs:.0f} | {ours / theirs:.2f}x |", flush=True)
        print(f"\nmedian ratio (memwork / SQLite): {statistics.median(ratios):.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
