"""Open a store and read the tables ``memwork context --task T`` reads, timed in-process
with the storage modules already imported: the storage engine's part of a context call,
apart from the rest of the command.

Prints milliseconds. Runs with this checkout's ``memwork`` package, or with an older
checkout's top-level ``core`` package (``PYTHONPATH=<checkout> <its python>
bench/bench_read_tables.py STORE``), so two engines can be compared on copies of one
store. Usage: python bench/bench_read_tables.py STORE [TASK]
"""

from __future__ import annotations

import sys
import time

try:
    import memwork.core.storage.folder_backend  # noqa: F401
    from memwork.core.storage.store import Store
except ImportError:  # a checkout from before the one import name
    import core.storage.folder_storage  # type: ignore[import-not-found]  # noqa: F401

    from core.storage.store import Store  # type: ignore[import-not-found,no-redef]


def main() -> None:
    """Print the milliseconds from opening ``STORE`` to having read the context's tables."""
    task = sys.argv[2] if len(sys.argv) > 2 else "deploy-service"
    tables = [
        "meta",
        "mistake_cards",
        "rules.global",
        f"rules.task.{task}",
        f"task_stats.{task}",
        "slots",
        "lessons",
    ]
    start = time.perf_counter()
    store = Store(sys.argv[1])
    with store.reading():
        for name in tables:
            store.docs(name)
    print(f"{(time.perf_counter() - start) * 1000:.2f}")


if __name__ == "__main__":
    main()
