"""Recall's memory: what a process holds once it has searched a big store.

Every figure is one fresh child process's resident memory (``VmRSS``, and its peak
``VmHWM``, from ``/proc/self/status``), on a copy of the benchmark store of
``bench/bench_recall.py`` (N notes of the ``--shape``, built once into
``bench/out``, with its saved recall index):

* ``python`` (the baseline): the interpreter with ``memwork`` and numpy imported,
  nothing opened;
* ``Memory, index file``: a long-lived ``Memory`` after a warm-up and
  ``--rounds`` searches, its index read from the store's cache folder;
* ``Memory, built apart`` (``--built``): the same with the cache off
  (``MEMWORK_SEARCH_CACHE=0``), so the index is built from the store's documents, by
  a child process at this size (core/services/recall/build_apart.py);
* ``Memory, built in this process`` (``--built``): the same with
  ``MEMWORK_SEARCH_BUILD_APART=0``, as every build was before (the baseline);
* ``Memory, built and saved here`` (``--built``): the cache on but no index file yet,
  so the process builds the index, saves it in the background and (the index
  unchanged meanwhile) reads it back from that file; measured once the save landed;
* ``Memory on Redis`` (``--redis``): the store copied into a redis-server of its own,
  a long-lived ``Memory`` on it with its index built by a child and, the baseline,
  in the process;
* ``memwork search`` and ``memwork context``: CLI calls (peak RSS, ``VmHWM`` as the
  CLI process reads it at exit): a search for each of the first ``--cli`` questions
  (median and most), one context, and their ratios.

The second column, ``RssFile``, counts the pages of mapped files the process
touched: mostly the recall index file read in place, pages the kernel shares and
can drop under memory pressure, unlike the rest. The third is the memory file a
child built the index into: the pages of it the process touched (``RssShmem``,
counted in its RSS) and the whole file, which the system holds in memory as shared
memory whether touched or not (it is not on disk).

The children import memwork as this interpreter does (run it with the venv's
python), with its bytecode compiled first; the stores are shared with
bench_recall.py.

    python bench/bench_recall_memory.py 100000 --shape long
    python bench/bench_recall_memory.py 100000 --shape short --built
    python bench/bench_recall_memory.py 100000 --shape long --built --redis
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import bench_recall as recall_bench  # noqa: E402

_PROBE = """
import json, sys
def status():
    out = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
            out[key] = int(value.split()[0]) / 1024
    whole = 0
    for line in open("/proc/self/maps"):
        if "memwork-recall-index" in line:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            whole += end - start
    out["memfile"] = whole / 2**20
    return out
import numpy
from memwork import Memory
path, questions, rounds = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
if sys.argv[4] == "1":
    import time
    from memwork.core.services.recall.search import kept_recall, saver_of
    memory = Memory(path)
    memory.search("warm up")
    # An index built here is saved in the background at once: measure after that.
    saver, recall = saver_of(memory.store), kept_recall(memory.store)[1]
    deadline = time.monotonic() + 300
    while saver is not None and time.monotonic() < deadline:
        if saver.landed or (not saver.saving and recall.save_due() is None):
            break
        time.sleep(0.05)
    for q in questions[:rounds]:
        memory.search(q, limit=10)
print(json.dumps(status()))
"""


def _child(path: Path, questions: list[str], rounds: int, open_it: bool, env: dict) -> dict:
    asked = json.dumps(questions)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(path), asked, str(rounds), "01"[open_it]],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


_CLI = """
import atexit, sys
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            sys.stderr.write("PEAK %s\\n" % line.split()[1])
atexit.register(peak)
sys.argv = ["memwork", *sys.argv[1:]]
from memwork.core.doors.cli.main import entry
entry()
"""


def _cli_peak(args: list[str], env: dict) -> float:
    """Peak RSS (MB) of one ``memwork`` CLI call, as the process itself saw it at exit.

    Not the child's ``ru_maxrss``: that counts the pages it shared with this
    process between fork and exec (this process holds numpy and the benchmark:
    ~40 MB), which hid what the CLI itself used."""
    out = subprocess.run(
        [sys.executable, "-c", _CLI, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
        check=False,
    )
    peaks = [line.split()[1] for line in out.stderr.splitlines() if line.startswith("PEAK ")]
    if out.returncode or not peaks:
        raise RuntimeError(out.stderr or f"exit {out.returncode}")
    return int(peaks[-1]) / 1024


def _on_redis(
    store: Path, tmp: Path, asked: list[str], rounds: int, env: dict
) -> list[tuple[str, dict]]:
    """The same store copied into a redis-server of its own (the one ``make test``
    installs): a long-lived ``Memory`` on it, its index built by a child (there is no
    index file on Redis) and, as before, in the process."""
    sys.path.insert(0, str(ROOT))
    from tests.redis_server import RedisServer

    folder = tmp / "redis"
    folder.mkdir()
    server = RedisServer(folder, fsync="no")
    server.start()
    try:
        url = server.url + "/0"
        copy = "import sys; from memwork.core.doors.cli.main import entry; entry()"
        subprocess.run(
            [sys.executable, "-c", copy, "copy", str(store), url],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        apart = _child(url, asked, rounds, True, env)  # type: ignore[arg-type]
        here = dict(env, MEMWORK_SEARCH_BUILD_APART="0")
        built = _child(url, asked, rounds, True, here)  # type: ignore[arg-type]
    finally:
        server.stop()
    return [
        ("Memory on Redis, built apart", apart),
        ("Memory on Redis, built in this process", built),
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", type=int, nargs="?", default=100_000)
    ap.add_argument("--shape", default="long", help="long, short or mixed")
    ap.add_argument("--rounds", type=int, default=100, help="searches before measuring")
    ap.add_argument("--cli", type=int, default=10, help="questions asked of CLI searches")
    ap.add_argument("--built", action="store_true", help="also build the index in the child")
    ap.add_argument(
        "--redis", action="store_true", help="also the store copied into a Redis server"
    )
    args = ap.parse_args(argv)
    # The CLI processes read memwork's bytecode from its cache, as an installed package
    # does: compiling a module at import (PYTHONDONTWRITEBYTECODE, a fresh checkout)
    # costs a process ~1-2 MB at its peak for each module it compiles.
    for part in ("core", "memwork"):
        compileall.compile_dir(ROOT / part, quiet=1)
    if args.shape == "mixed":
        source, questions = recall_bench.cached_store(args.records)
    else:
        source, questions = recall_bench.cached_shaped_store(args.records, args.shape)
    env = {k: v for k, v in os.environ.items() if k != "MEMWORK_SEARCH_CACHE"}
    env["MEMWORK_NOW"] = recall_bench.NOW.isoformat()
    asked = questions[: args.rounds]
    with tempfile.TemporaryDirectory(dir=recall_bench.OUT) as tmp:
        saved = source.joinpath("cache", "recall", "index.bin")
        if not saved.exists():  # saved once, by a Memory that closes, for every run after
            _child(source, [], 0, True, env)
        store = recall_bench.linked_copy(source, Path(tmp) / "store")
        rows = [("python (memwork and numpy imported)", _child(store, [], 0, False, env))]
        rows.append(("Memory, index file", _child(store, asked, args.rounds, True, env)))
        if args.built:
            cold = dict(env, MEMWORK_SEARCH_CACHE="0")
            rows.append(("Memory, built apart", _child(store, asked, args.rounds, True, cold)))
            here = dict(cold, MEMWORK_SEARCH_BUILD_APART="0")
            rows.append(
                ("Memory, built in this process", _child(store, asked, args.rounds, True, here))
            )
            fresh = recall_bench.linked_copy(source, Path(tmp) / "fresh")
            fresh.joinpath("cache", "recall", "index.bin").unlink(missing_ok=True)
            rows.append(
                ("Memory, built and saved here", _child(fresh, asked, args.rounds, True, env))
            )
        if args.redis:
            rows += _on_redis(store, Path(tmp), asked, args.rounds, env)
        searches = [_cli_peak(["--db", str(store), "search", q], env) for q in asked[: args.cli]]
        context = _cli_peak(["--db", str(store), "context"], env)
    print(f"{args.records:,} {args.shape} notes, after a warm-up and {args.rounds} searches")
    print(
        "| process | RSS | of it, the index file's pages | the child's memory file: "
        "touched / whole | peak RSS |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, got in rows:
        memfile = f"{got['RssShmem']:.0f} / {got['memfile']:.0f} MB" if got["memfile"] else ""
        print(
            f"| {name} | {got['VmRSS']:.0f} MB | {got['RssFile']:.0f} MB | {memfile} "
            f"| {got['VmHWM']:.0f} MB |"
        )
    middle, most = statistics.median(searches), max(searches)
    print(
        f"| `memwork search` (CLI), {len(searches)} questions: median / most "
        f"| | | | {middle:.1f} / {most:.1f} MB |"
    )
    print(f"| `memwork context` (CLI) | | | | {context:.1f} MB |")
    print(
        f"\nCLI search / context peak RSS: {middle / context:.2f}x median, "
        f"{most / context:.2f}x the most"
    )


if __name__ == "__main__":
    main()
