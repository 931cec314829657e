"""A fresh server's first search: with its recall index readied as it starts, and not.

``memwork serve`` and ``memwork mcp`` ready their saved recall index in a thread of
their own as they start (``core/services/recall/warm.py``). This starts a real
``memwork serve`` on a hard-linked copy of a 100k-record benchmark store (its index
file saved), waits ``--think`` seconds (an agent's handshake and first thought), then
times ``POST /v1/search`` over one keep-alive connection: the first question, then
``--calls`` more. Each round starts two servers in turn, one with
``MEMWORK_WARM_RECALL=0`` (the first search does the work, as before), each on its own
copy, with a different question first each round. Reported: the first search's
wall time p50 / max over the rounds in each mode and their ratio, and the later
searches' p50 (what the first one is measured against), and the server's RSS once
its calls are answered.

Usage: python bench/bench_first_search.py [--shape mixed|short|long] [--rounds 5]
[--think 1.0] [--calls 20]
"""

from __future__ import annotations

import argparse
import os
import re
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
from bench_http_search import Conn, body, rss_mib  # noqa: E402
from store_copy import linked_copy  # noqa: E402

OUT = ROOT / "bench" / "out"
RECORDS = 100_000


def source_of(shape: str) -> tuple[Path, list[str]]:
    """The prepared store of ``shape`` (index file saved, as a store in use has) and its
    questions."""
    if shape == "mixed":
        source, questions = bench_recall.cached_store(RECORDS)
    else:
        source, questions = bench_recall.cached_shaped_store(RECORDS, shape)
    if not (source / "cache" / "recall" / "index.bin").exists():
        raise SystemExit(f"{source} has no saved recall index: run bench_recall.py --latency first")
    return source, questions


def serve(store: Path, warm: bool) -> tuple[subprocess.Popen[str], int]:
    """``memwork serve`` on ``store`` (port chosen by the system); the process and port."""
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environ.update(
        MEMWORK_FSYNC="0",
        MEMWORK_NOW=bench_recall.NOW.isoformat(),
        MEMWORK_WARM_RECALL="1" if warm else "0",
        PYTHONPATH=str(ROOT),
    )
    exe = ROOT / ".venv" / "bin" / "memwork"
    server = subprocess.Popen(
        [str(exe), "--db", str(store), "serve", "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        env=environ,
        text=True,
    )
    assert server.stderr is not None
    for line in server.stderr:
        found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if found:
            return server, int(found.group(1))
    raise RuntimeError("memwork serve did not start")


async def timed(port: int, questions: list[str]) -> list[float]:
    """Each question's ``/v1/search`` wall time, ms, in turn over one connection."""
    conn = await Conn.open(port)
    out = []
    try:
        for question in questions:
            started = time.perf_counter()
            status, answer = await conn.post("/v1/search", body(question))
            out.append((time.perf_counter() - started) * 1000)
            if status != 200:
                raise RuntimeError(f"/v1/search answered {status}: {answer[:200]!r}")
    finally:
        await conn.close()
    return out


def one(source: Path, warm: bool, questions: list[str], think: float) -> tuple[list[float], float]:
    """A fresh server's times for ``questions`` after ``think`` seconds, and its RSS."""
    import asyncio

    copy = linked_copy(source, OUT / f"first-search-{'warm' if warm else 'cold'}")
    server, port = serve(copy, warm)
    try:
        time.sleep(think)
        times = asyncio.run(timed(port, questions))
        rss = rss_mib(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=120)
        shutil.rmtree(copy, ignore_errors=True)
    return times, rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", default="mixed", choices=("mixed", "short", "long"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--think", type=float, default=1.0)
    ap.add_argument("--calls", type=int, default=20)
    args = ap.parse_args()
    source, questions = source_of(args.shape)
    first: dict[bool, list[float]] = {True: [], False: []}
    later: dict[bool, list[float]] = {True: [], False: []}
    rss: dict[bool, list[float]] = {True: [], False: []}
    for n in range(args.rounds):
        asked = questions[n * (args.calls + 1) : (n + 1) * (args.calls + 1)]
        for warm in (n % 2 == 0, n % 2 != 0):  # which goes first alternates
            times, resident = one(source, warm, asked, args.think)
            first[warm].append(times[0])
            later[warm] += times[1:]
            rss[warm].append(resident)
    print(
        f"{RECORDS:,} records ({args.shape}), {args.rounds} rounds, "
        f"{args.think:.1f} s after the server starts:"
    )
    print()
    print("| server | first search p50 / max | later searches p50 | RSS after |")
    print("|---|---:|---:|---:|")
    labels = ((False, "index readied by the first search"), (True, "readied as it starts"))
    for warm, label in labels:
        print(
            f"| {label} | {statistics.median(first[warm]):.1f} / {max(first[warm]):.1f} ms "
            f"| {statistics.median(later[warm]):.2f} ms | {statistics.median(rss[warm]):.0f} MiB |"
        )
    print()
    ratio = statistics.median(first[True]) / statistics.median(first[False])
    print(f"first search, readied / not: {ratio:.2f}x")


if __name__ == "__main__":
    main()
