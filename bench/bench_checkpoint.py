"""Checkpoint and context cost, each against its baseline in the same run.

Store checkpoints used to be hard links to the live table files (free, but an
in-place edit of a table file changed the checkpoint too); they are now
independent copies packed into one file (a reflink where the filesystem offers
one). This measures what that costs, and checks that ``memwork context`` did
not get slower:

* ``checkpoint create`` in-process, fsync on (median of several, each deleted
  after): the pack against the old hard-link snapshot (kept below as the
  baseline, run through the same ``checkpoints.create``), alternately, on a
  scratch copy of the same store;
* the whole ``memwork context --task T`` process, this tree against a baseline
  checkout with its own ``.venv`` (default /work/main; skipped when absent),
  alternately.

Usage: python bench/bench_checkpoint.py [--sizes 1000 100000] [--baseline DIR]
                                        [--only checkpoint|context]
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
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_store  # noqa: E402
from tree_code import python_of, require_own_code  # noqa: E402

from memwork.core.services import checkpoints  # noqa: E402
from memwork.core.storage import atomic  # noqa: E402
from memwork.core.storage.codec import dumps  # noqa: E402
from memwork.core.storage.folder_backend import FolderBackend  # noqa: E402
from memwork.core.storage.manifest import table_file  # noqa: E402
from memwork.core.storage.snapshot_files import SNAPSHOT_MANIFEST, SNAPSHOTS  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

OUT = ROOT / "bench" / "out"
TASK = bench_store.TASK


def hardlink_snapshot(self: FolderBackend, key: str, names: list[str]) -> None:
    """The baseline: snapshots as they were, one hard link per committed table file."""
    target = self.path / SNAPSHOTS / key
    target.mkdir(parents=True)
    versions = {}
    for name in names:
        if name not in self.head.tables:
            continue
        os.link(self.path / table_file(name), target / table_file(name))
        versions[name] = self.head.tables[name]
    atomic.atomic_write(target / SNAPSHOT_MANIFEST, dumps({"tables": versions}), "snap")


def checkpoint_ms(store_path: Path, repeat: int) -> tuple[float, float]:
    """Median ``checkpoints.create`` (hard links, pack) on a scratch copy of the store."""
    scratch = OUT / "scratch-checkpoint"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(store_path, scratch)
    os.sync()  # flush the copy first, or the first fsyncs pay for writing it back
    os.environ["MEMWORK_FSYNC"] = "1"
    store = Store(scratch)
    now = datetime(2026, 11, 1, tzinfo=UTC)
    pack = FolderBackend.snapshot_create
    times: dict[str, list[float]] = {"links": [], "pack": []}
    try:
        for _ in range(repeat):
            for variant, snapshot in (("links", hardlink_snapshot), ("pack", pack)):
                FolderBackend.snapshot_create = snapshot  # type: ignore[method-assign]
                t0 = time.perf_counter()
                doc = checkpoints.create(store, "bench", now=now, actor="bench")
                times[variant].append((time.perf_counter() - t0) * 1000)
                checkpoints.delete(store, doc["id"], now=now, actor="bench")
    finally:
        FolderBackend.snapshot_create = pack  # type: ignore[method-assign]
    shutil.rmtree(scratch, ignore_errors=True)
    return statistics.median(times["links"]), statistics.median(times["pack"])


def _bytecode_env() -> dict[str, str]:
    """Compiled modules cached as an installed memwork has them, outside both trees.

    With ``PYTHONDONTWRITEBYTECODE`` set and no ``__pycache__``, every run would
    compile every imported module, and the figures would measure source size.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
    return env


def context_ms(trees: list[Path], store: Path, repeat: int) -> list[float]:
    """Median whole-process ``memwork context --task`` time per tree, runs interleaved."""
    cmds = [
        [str(t / ".venv" / "bin" / "memwork"), "--db", str(store), "context", "--task", TASK]
        for t in trees
    ]
    env = _bytecode_env()
    times: list[list[float]] = [[] for _ in trees]
    for cmd in cmds:  # warm the page cache and the bytecode cache
        for _ in range(2):
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    for _ in range(repeat):
        for i, cmd in enumerate(cmds):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
            times[i].append((time.perf_counter() - t0) * 1000)
    return [statistics.median(t) for t in times]


def folder_mb(folder: Path) -> float:
    """Size of a store's table files in MB."""
    return sum(p.stat().st_size for p in folder.glob("*.json")) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--baseline", type=Path, default=Path("/work/main"))
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", choices=["checkpoint", "context"])
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    trees = [args.baseline, ROOT]
    with_context = args.only != "checkpoint" and (args.baseline / ".venv").exists()
    if with_context:
        for tree in trees:
            require_own_code(tree, python_of(tree))
    rows = []
    for n in args.sizes:
        mw, _, _ = bench_store.build(n)
        cp_repeat = 5 if n >= 100_000 else 15
        rows.append(
            {
                "n": n,
                "mb": folder_mb(mw),
                "checkpoint": [0.0, 0.0]
                if args.only == "context"
                else list(checkpoint_ms(mw, cp_repeat)),
                "context": context_ms(trees, mw, args.repeat) if with_context else [0.0, 0.0],
            }
        )
    print("\n| episodes | store size | checkpoint create: hard links | pack of copies | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        base, now = r["checkpoint"]
        if not base:
            continue
        print(
            f"| {r['n']:,} | {r['mb']:.1f} MB | {base:.1f} ms | {now:.1f} ms | {now / base:.1f}x |"
        )
    if with_context:
        print(f"\nbaseline tree: {args.baseline}; this tree: {ROOT}")
        print("\n| episodes | `memwork context --task`: baseline | this tree | ratio |")
        print("|---:|---:|---:|---:|")
        for r in rows:
            base, now = r["context"]
            print(f"| {r['n']:,} | {base:.0f} ms | {now:.0f} ms | {now / base:.2f}x |")
    (OUT / "checkpoint_results.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
