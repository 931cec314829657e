"""A failure storm: what keeping every failure within 6 h of each writer's clock costs.

The failure block keeps, per minute of stamp, the newest three failures for every
minute within 6 hours of the recording clock (docs/MEMORY.md, Failure memory).
An agent stuck in a loop that fails three times a minute for 12 hours fills that
band to its worst; this times ``memwork context --task t0`` (the whole process,
what an agent pays per step) on such a store against a calm store that recorded
the same number of episodes, all successes, in the same run (runs in pairs, the ratio
the median of the pairs' ratios).

Usage: python bench/bench_failures.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
END = datetime(2026, 11, 1, 12, tzinfo=UTC)
PER_MINUTE = 3
HOURS = 12

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_store import median_ms  # noqa: E402

from memwork.core.domain import aggregates, episodes  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402


def build(path: Path, failing: bool) -> int:
    """A store of 12 hours of episodes, three a minute; the failures it keeps."""
    shutil.rmtree(path, ignore_errors=True)
    store = Store(path)
    count = PER_MINUTE * 60 * HOURS
    batch: list[dict[str, object]] = []
    for n in range(count):
        when = END - timedelta(minutes=(count - n) // PER_MINUTE)
        item: dict[str, object] = {
            "task_id": f"t{n % 5}",
            "score": 0.1 if failing else 0.95,
            "summary": f"run {n}",
            "recorded_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if failing:
            item["errors"] = [{"error_type": f"E{n % 7}", "message": f"failed at step {n}"}]
        batch.append(item)
        if len(batch) == PER_MINUTE * 60:  # an hour at a time, the clock at its end
            episodes.record_episodes(store, batch, now=when, actor="bench")
            batch = []
    with store.reading():
        kept = len(aggregates.read_global(store)["recent_failures"])
    store.close()
    return kept


def context_runs(calm: Path, storm: Path, repeat: int) -> tuple[float, float, float]:
    """Median ms of ``memwork context --task t0`` on each store, and the median ratio of
    storm to calm over pairs run back to back (a busy machine's drift cancels out)."""
    memwork = ROOT / ".venv" / "bin" / "memwork"
    env = {"MEMWORK_NOW": END.strftime("%Y-%m-%dT%H:%M:%SZ"), "PATH": "/usr/bin:/bin"}

    def run(path: Path) -> float:
        cmd = [str(memwork), "--db", str(path), "context", "--task", "t0"]
        return median_ms(
            lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env, cwd=ROOT),
            1,
        )

    run(calm), run(storm)  # warm the page cache and the bytecode
    pairs = [(run(calm), run(storm)) for _ in range(repeat)]
    calms = sorted(c for c, _ in pairs)
    storms = sorted(s for _, s in pairs)
    ratios = sorted(s / c for c, s in pairs)
    middle = repeat // 2
    return calms[middle], storms[middle], ratios[middle]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    calm, storm = OUT / "failures_calm", OUT / "failures_storm"
    build(calm, failing=False)
    kept = build(storm, failing=True)
    size = (storm / "meta.json").stat().st_size
    calm_ms, storm_ms, ratio = context_runs(calm, storm, args.repeat)
    episodes_n = PER_MINUTE * 60 * HOURS
    print(f"{episodes_n:,} episodes over {HOURS} h, {PER_MINUTE} a minute")
    print("| store | failures kept | `memwork context --task t0` | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| calm (all successes) | 0 | {calm_ms:.0f} ms | 1.00x |")
    print(
        f"| failure storm (all failures) | {kept:,} ({size / 1024:.0f} KiB meta) "
        f"| {storm_ms:.0f} ms | {ratio:.2f}x |"
    )


if __name__ == "__main__":
    main()
