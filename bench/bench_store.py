"""Storage and context benchmark: memwork against default TinyDB and the episodic file.

For 1k / 10k / 100k recorded episodes, in one run, on this machine:

* durable write: recording one episode (fsync on and off) vs one TinyDB insert;
* open: opening the store and reading one record vs TinyDB's first read;
* aggregates: what the context needs (per-task mean, recent episodes, rules,
  cards) vs computing the same by scanning TinyDB;
* context: the whole ``memwork context --task T`` process vs a process that
  loads the same history from an agent_memory.json and formats it.

Stores are built once under ``bench/out/`` (seeded, so every run sees the same
data) and reused. Usage: python bench/bench_store.py [--sizes 1000 10000 100000]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import episodic_reference  # noqa: E402
import synthetic  # noqa: E402
from tinydb import Query, TinyDB  # noqa: E402

from memwork.core.domain import episodes  # noqa: E402
from memwork.core.services.context.build import read_inputs  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

OUT = ROOT / "bench" / "out"
SEED = 7
TASK = "deploy-service"
BATCH = 2000
#: Bump when the store layout changes, so cached benchmark stores are rebuilt.
LAYOUT = 6


def median_ms(fn, repeat: int) -> float:
    """Median wall time of ``fn`` in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def build_memwork(n: int) -> Path:
    """Only the memwork store for ``n`` episodes (cached; the 1M store has no TinyDB twin).

    Built batch by batch from the seeded generator, so it is the same store
    :func:`build` makes for ``n``.
    """
    folder = OUT / f"n{n}"
    mw, marker = folder / "memwork", folder / "memwork.json"
    stamp = {"n": n, "layout": LAYOUT}
    if marker.exists() and json.loads(marker.read_text()) == stamp:
        return mw
    shutil.rmtree(mw, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    os.environ["MEMWORK_FSYNC"] = "0"
    items = synthetic.episodes(SEED, n)
    store = Store(mw)
    now = datetime(2026, 11, 1, tzinfo=UTC)
    for _ in range(0, n, BATCH):
        batch = list(itertools.islice(items, BATCH))
        episodes.record_episodes(store, batch, now=now, actor="bench")
    marker.write_text(json.dumps(stamp))
    os.environ["MEMWORK_FSYNC"] = "1"
    return mw


def build(n: int) -> tuple[Path, Path, Path]:
    """The memwork store, the TinyDB file and the agent_memory.json for ``n`` episodes."""
    folder = OUT / f"n{n}"
    marker = folder / "built.json"
    tdb, amj = folder / "tinydb.json", folder / "agent_memory.json"
    stamp = {"n": n, "layout": LAYOUT}
    mw = build_memwork(n)
    if marker.exists() and json.loads(marker.read_text()) == stamp:
        return mw, tdb, amj
    items = list(synthetic.episodes(SEED, n))
    tdb.unlink(missing_ok=True)
    db = TinyDB(tdb)
    db.insert_multiple(items)
    db.close()
    memory = episodic_reference.empty()
    for item in items:
        episodic_reference.record(memory, item, "2026-11-01T00:00:00+00:00")
    episodic_reference.trim(memory)
    amj.write_text(json.dumps(memory, indent=2))
    marker.write_text(json.dumps(stamp))
    return mw, tdb, amj


def bench_write(mw: Path, tdb: Path, n: int) -> dict[str, float]:
    """One durable write at size ``n``."""
    scratch = OUT / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(mw, scratch / "mw")
    shutil.copy(tdb, scratch / "t.json")
    os.sync()  # flush the copy first, or the first fsyncs pay for writing it back
    store = Store(scratch / "mw")
    item = next(synthetic.episodes(99, 1))
    now = datetime(2026, 11, 1, tzinfo=UTC)
    result = {}
    for fsync in ("1", "0"):
        os.environ["MEMWORK_FSYNC"] = fsync
        result[f"memwork_fsync{fsync}"] = median_ms(
            lambda: episodes.record_episodes(store, [item], now=now, actor="bench"), 15
        )
    os.environ["MEMWORK_FSYNC"] = "1"
    db = TinyDB(scratch / "t.json")
    db.all()
    result["tinydb"] = median_ms(lambda: db.insert(item), 3 if n >= 100_000 else 7)
    db.close()
    shutil.rmtree(scratch, ignore_errors=True)
    return result


def bench_open(mw: Path, tdb: Path) -> dict[str, float]:
    """Open and read one record, from a fresh handle each time."""

    def memwork_open() -> None:
        store = Store(mw)
        with store.reading():
            store.get("meta", "episodes")

    def tinydb_open() -> None:
        db = TinyDB(tdb)
        db.get(doc_id=1)
        db.close()

    return {"memwork": median_ms(memwork_open, 15), "tinydb": median_ms(tinydb_open, 5)}


def bench_aggregates(mw: Path, tdb: Path) -> dict[str, float]:
    """What the context reads: memwork's aggregates vs a scan of TinyDB."""

    def memwork_read() -> None:
        read_inputs(Store(mw), TASK)

    def tinydb_read() -> None:
        db = TinyDB(tdb)
        rows = db.search(Query().task_id == TASK)
        scores = [r["score"] for r in rows]
        _ = (sum(scores) / len(scores), rows[-3:])
        db.close()

    return {"memwork": median_ms(memwork_read, 15), "tinydb": median_ms(tinydb_read, 5)}


def bench_context(mw: Path, amj: Path, repeat: int = 15) -> dict[str, float]:
    """Whole processes: ``memwork context`` vs loading agent_memory.json and formatting it."""
    memwork = [str(ROOT / ".venv" / "bin" / "memwork"), "--db", str(mw), "context", "--task", TASK]
    if not Path(memwork[0]).exists():
        memwork = [sys.executable, "-m", "memwork", *memwork[1:]]
    baseline = [sys.executable, str(ROOT / "bench" / "episodic_baseline.py"), str(amj), TASK]

    def run(cmd: list[str]) -> None:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)

    run(memwork)
    run(baseline)  # warm the page cache for both
    return {
        "memwork": median_ms(lambda: run(memwork), repeat),
        "baseline": median_ms(lambda: run(baseline), repeat),
    }


def bench_empty_context() -> float:
    """``memwork context`` on an empty store, whole process."""
    empty = OUT / "empty"
    shutil.rmtree(empty, ignore_errors=True)
    Store(empty)
    nothing = OUT / "empty_agent_memory.json"
    nothing.write_text(json.dumps(episodic_reference.empty()))
    return bench_context(empty, nothing, repeat=20)["memwork"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.sizes:
        t0 = time.perf_counter()
        mw, tdb, amj = build(n)
        print(f"[{n}] stores ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        gc.collect()
        rows.append(
            {
                "n": n,
                "write": bench_write(mw, tdb, n),
                "open": bench_open(mw, tdb),
                "aggregates": bench_aggregates(mw, tdb),
                "context": bench_context(mw, amj),
            }
        )
    empty = bench_empty_context()
    first = rows[0]["context"]["memwork"]
    print("\n| episodes | write: memwork (fsync / no fsync) | write: TinyDB | ratio |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        w = r["write"]
        print(
            f"| {r['n']:,} | {w['memwork_fsync1']:.1f} / {w['memwork_fsync0']:.1f} ms "
            f"| {w['tinydb']:.1f} ms | {w['tinydb'] / w['memwork_fsync1']:.0f}x faster |"
        )
    print("\n| episodes | open + one read: memwork | TinyDB | aggregates: memwork | TinyDB scan |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        o, a = r["open"], r["aggregates"]
        print(
            f"| {r['n']:,} | {o['memwork']:.2f} ms | {o['tinydb']:.1f} ms "
            f"| {a['memwork']:.2f} ms | {a['tinydb']:.1f} ms |"
        )
    print(
        "\n| episodes | `memwork context --task` (process) | vs 1k | agent_memory.json baseline |"
    )
    print("|---:|---:|---:|---:|")
    for r in rows:
        c = r["context"]
        print(
            f"| {r['n']:,} | {c['memwork']:.0f} ms | {c['memwork'] / first:.2f}x "
            f"| {c['baseline']:.0f} ms ({c['baseline'] / c['memwork']:.2f}x memwork) |"
        )
    print(f"\n`memwork context` on an empty store (whole process): {empty:.0f} ms")
    (OUT / "results.json").write_text(
        json.dumps({"rows": rows, "empty_context_ms": empty}, indent=2)
    )


if __name__ == "__main__":
    main()
