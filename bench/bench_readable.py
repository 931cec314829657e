"""What checking the lessons for wrong-typed records (core/domain/readable.py) adds to a
cold read of the lessons table, the baseline measured in the same run.

Writes a folder store of N lessons (default 10,000) through an import, then, in fresh
processes, times (a) opening the store and reading the lessons table and (b) the same
followed by the check; prints both medians and the ratio (b - a) / a: the share the
check adds to the read it guards. Usage: python bench/bench_readable.py [N] [RUNS]
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import sys, time
from memwork.core.storage.store import Store
from memwork.core.domain import readable
store = Store(sys.argv[1])
start = time.perf_counter()
with store.reading():
    count = len(store.docs("lessons"))
    read = time.perf_counter()
    if sys.argv[2] == "check":
        readable.docs(store, "lessons")
done = time.perf_counter()
print((read - start) * 1000, (done - start) * 1000, count)
"""


def _export(path: Path, count: int) -> None:
    from memwork.core.base.ids import new_id
    from memwork.core.base.text import fingerprint

    stamp = "2026-11-01T10:00:00Z"
    words = "deploy canary rollback worker queue cache index shard lock retry budget".split()
    rng = random.Random(1)
    lessons = []
    for n in range(count):
        text = " ".join(rng.choice(words) for _ in range(8)) + f" {n}"
        lessons.append(
            {
                "id": new_id("les"),
                "content": text,
                "fingerprint": fingerprint(text),
                "confidence": 0.5,
                "reinforcements": 0,
                "scope": "global",
                "tags": ["ops"],
                "source": "agent",
                "decay_rate": 0.05,
                "last_reinforced_at": stamp,
                "pinned": False,
                "deleted": False,
                "wordings": [],
                "effect_base": None,
                "created_at": stamp,
                "updated_at": stamp,
            }
        )
    document = {"format": "memwork-export", "schema_version": 3, "tables": {"lessons": lessons}}
    path.write_text(json.dumps(document))


def _times(store: Path, mode: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(store), mode],
            capture_output=True,
            text=True,
            check=True,
        )
        _, total, count = done.stdout.split()
        assert int(count) > 0, "the store holds no lessons"
        out.append(float(total))
    return out


def main() -> None:
    """Print the read's median, the read-and-check's median, and the check's share."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    with tempfile.TemporaryDirectory() as tmp:
        export, store = Path(tmp) / "lessons.json", Path(tmp) / "db"
        _export(export, count)
        subprocess.run(
            [sys.executable, "-m", "memwork", "--db", str(store), "import", str(export)],
            capture_output=True,
            check=True,
        )
        subprocess.run(
            [
                sys.executable,
                "-c",
                f"from memwork.core.storage.store import Store; Store({str(store)!r}).fold_log()",
            ],
            check=True,
        )
        base = statistics.median(_times(store, "read", runs))
        checked = statistics.median(_times(store, "check", runs))
    print(f"{count} lessons, median of {runs} fresh processes")
    print(f"baseline: open + read lessons           {base:8.1f} ms")
    print(f"with the wrong-type check                {checked:8.1f} ms")
    print(f"ratio (check / baseline read)            {(checked - base) / base:8.2f}")


if __name__ == "__main__":
    main()
