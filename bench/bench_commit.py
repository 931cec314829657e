"""An agent step's durable commit, beside SQLite in WAL mode with synchronous=FULL.

``Memory.observe`` and ``Memory.record_episode`` on a folder store with fsync on, in
one process; after each call, the same rows go into SQLite (journal_mode=WAL,
synchronous=FULL) in the same process: every document the call committed, heard
through ``store.subscribe``, as one row (id, JSON text) of a table per memwork
table, in one transaction. The two take turns call by call, so both see the same
disk at the same moment. Reports p50 and p95 of each and their ratios, and the
fsyncs per commit (``os.fsync`` counted), folds of the log included.

With ``--size N`` the calls go to a copy of the benchmark store of N episodes
(``bench/bench_store.py`` builds it once), not to an empty store.

Usage: python bench/bench_commit.py [--calls 150] [--warm 30] [--size N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memwork.core.ops.memory import Memory  # noqa: E402
from memwork.core.storage.backend import Change  # noqa: E402

OUT = ROOT / "bench" / "out"


class SQLiteTwin:
    """The rows each memwork commit wrote, written again into SQLite."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.tables: set[str] = set()

    def table(self, name: str) -> str:
        quoted = '"' + name.replace('"', '""') + '"'
        if name not in self.tables:
            self.db.execute(f"CREATE TABLE IF NOT EXISTS {quoted} (id TEXT PRIMARY KEY, doc TEXT)")
            self.tables.add(name)
        return quoted

    def write(self, rows: list[tuple[str, str, dict | None]]) -> float:
        """One transaction of (table, id, document or None for a delete); its seconds."""
        started = time.perf_counter()
        self.db.execute("BEGIN")
        for name, doc_id, doc in rows:
            table = self.table(name)
            if doc is None:
                self.db.execute(f"DELETE FROM {table} WHERE id = ?", (doc_id,))
            else:
                self.db.execute(
                    f"INSERT OR REPLACE INTO {table} (id, doc) VALUES (?, ?)",
                    (doc_id, json.dumps(doc, sort_keys=True)),
                )
        self.db.execute("COMMIT")
        return time.perf_counter() - started


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=150)
    parser.add_argument("--warm", type=int, default=30)
    parser.add_argument("--size", type=int, default=0, help="episodes already in the store")
    args = parser.parse_args()
    os.environ["MEMWORK_FSYNC"] = "1"
    work = OUT / f"commit-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    clock = {"now": datetime(2026, 11, 1, 12, tzinfo=UTC)}

    def tick() -> datetime:
        clock["now"] += timedelta(seconds=1)
        return clock["now"]

    if args.size:
        import bench_store

        source = bench_store.build_memwork(args.size)
        shutil.copytree(source, work / "store", ignore=shutil.ignore_patterns(".lock"))
        clock["now"] = datetime(2026, 11, 2, 12, tzinfo=UTC)
    try:
        memory = Memory(work / "store", clock=tick)
        twin = SQLiteTwin(work / "twin.sqlite")
        rows: list[tuple[str, str, dict | None]] = []

        def heard(change: Change) -> None:
            for name, table in change.tables.items():
                docs = memory.store.docs(name)
                rows.extend((name, i, docs[i]) for i in sorted(table.put) if i in docs)
                rows.extend((name, i, None) for i in sorted(table.deleted))

        memory.store.subscribe(heard)
        session = memory.start_session(agent="bench")["id"]
        fsyncs = {"n": 0}
        real_fsync = os.fsync

        def counted_fsync(fd: int) -> None:
            fsyncs["n"] += 1
            real_fsync(fd)

        os.fsync = counted_fsync
        steps = {
            "Memory.observe": lambda n: memory.observe(
                session, f"step {n}: the canary for billing-api went green after {n % 7} min"
            ),
            "Memory.record_episode": lambda n: memory.record_episode(
                {
                    "task_id": f"deploy-{n % 4}",
                    "score": (n % 10) / 10,
                    "steps": n % 30,
                    "summary": f"Rolled out billing-api behind a flag, attempt {n}",
                    "mistakes": [f"skipped the canary {n % 5}"],
                    "successes": [f"checked the dashboards {n % 3}"],
                }
            ),
        }
        print(
            f"{args.calls} calls each, {args.warm} first ones not counted; fsync on; "
            f"a store of {args.size} episodes"
        )
        print()
        print(
            "| call | memwork p50 / p95 | SQLite WAL FULL p50 / p95 | ratio p50 / p95 "
            "| fsyncs per commit | memwork p99 / max | SQLite p99 / max |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, step in steps.items():
            ours: list[float] = []
            theirs: list[float] = []
            syncs = 0
            for n in range(args.warm + args.calls):
                rows.clear()
                fsyncs["n"] = 0
                started = time.perf_counter()
                step(n)
                took = time.perf_counter() - started
                synced = fsyncs["n"]
                twin_took = twin.write(list(rows))
                if n >= args.warm:
                    ours.append(took * 1000)
                    theirs.append(twin_took * 1000)
                    syncs += synced
            p50, p95 = statistics.median(ours), percentile(ours, 95)
            q50, q95 = statistics.median(theirs), percentile(theirs, 95)
            print(
                f"| `{label}` | {p50:.2f} / {p95:.2f} ms | {q50:.2f} / {q95:.2f} ms | "
                f"{p50 / q50:.2f}x / {p95 / q95:.2f}x | {syncs / args.calls:.2f} | "
                f"{percentile(ours, 99):.2f} / {max(ours):.2f} ms | "
                f"{percentile(theirs, 99):.2f} / {max(theirs):.2f} ms |",
                flush=True,
            )
        os.fsync = real_fsync
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
