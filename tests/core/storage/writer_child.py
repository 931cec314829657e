"""A child process that writes to a store in a loop (used by the crash and concurrency tests).

Usage: python writer_child.py STORE WORKER COUNT
Prints ``ready`` once set up, then the id of every episode as soon as its
write is acknowledged (the transaction returned).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from memwork.core.domain import episodes
from memwork.core.storage.store import Store


def main() -> None:
    path, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = Store(path)
    print("ready", flush=True)
    n = 0
    while count <= 0 or n < count:
        n += 1
        item = {
            "task_id": f"task-{n % 3}",
            "score": (n % 10) / 10,
            "steps": n,
            "summary": f"worker {worker} attempt {n}",
            "mistakes": [f"mistake {n % 7}"],
            "successes": [f"success {n % 5}"],
            "worker_id": worker,
        }
        [doc] = episodes.record_episodes(
            store, [item], now=datetime.now(UTC), actor=f"api:{worker}"
        )
        print(doc["id"], flush=True)


if __name__ == "__main__":
    main()
