"""Checkpoint and context cost against a baseline checkout, in one run.

Store checkpoints used to be hard links to the live table files (free, but an
in-place edit of a table file changed the checkpoint too); they are now
independent copies (a reflink where the filesystem offers one). This measures
what that costs, and checks that ``memwork context`` did not get slower:

* ``checkpoint create`` in-process (median of several, each deleted after),
  with this tree's code and with the baseline tree's code, on copies of the
  same store;
* the whole ``memwork context --task T`` process, both trees alternately.

The baseline is another checkout with its own ``.venv`` (default: /work/main).
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_store  # noqa: E402

OUT = ROOT / "bench" / "out"
TASK = bench_store.TASK

CHILD = """
import os, statistics, sys, time
from datetime import UTC, datetime
from core import checkpoints
from core.storage.store import Store
store = Store(sys.argv[1])
now = datetime(2026, 11, 1, tzinfo=UTC)
times = []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    doc = checkpoints.create(store, "bench", now=now, actor="bench")
    times.append((time.perf_counter() - t0) * 1000)
    checkpoints.delete(store, doc["id"], now=now, actor="bench")
print(statistics.median(times))
"""


def _python(tree: Path) -> str:
    return str(tree / ".venv" / "bin" / "python")


def checkpoint_ms(tree: Path, store: Path, repeat: int) -> float:
    """Median ``checkpoints.create`` time with ``tree``'s code on a scratch copy of ``store``."""
    scratch = OUT / "scratch-checkpoint"
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(store, scratch)
    os.sync()
    env = dict(os.environ, PYTHONPATH=str(tree), MEMWORK_FSYNC="1")
    out = subprocess.run(
        [_python(tree), "-c", CHILD, str(scratch), str(repeat)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tree,
    ).stdout
    shutil.rmtree(scratch, ignore_errors=True)
    return float(out.strip())


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
                else [checkpoint_ms(t, mw, cp_repeat) for t in trees],
                "context": [0.0, 0.0]
                if args.only == "checkpoint"
                else context_ms(trees, mw, args.repeat),
            }
        )
    print(f"baseline: {args.baseline}; this tree: {ROOT}")
    print("\n| episodes | store size | checkpoint create: baseline | this tree | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        base, now = r["checkpoint"]
        if not base:
            continue
        print(
            f"| {r['n']:,} | {r['mb']:.1f} MB | {base:.1f} ms | {now:.1f} ms | {now / base:.1f}x |"
        )
    print("\n| episodes | `memwork context --task`: baseline | this tree | ratio |")
    print("|---:|---:|---:|---:|")
    for r in rows:
        base, now = r["context"]
        if not base:
            continue
        print(f"| {r['n']:,} | {base:.0f} ms | {now:.0f} ms | {now / base:.2f}x |")
    (OUT / "checkpoint_results.json").write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
