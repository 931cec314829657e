"""Lessons filling the context's budget: what it costs against the ten-lesson cut it replaced.

The default context used to show at most ten lessons; now lessons fill whatever the
budget leaves and the rest are reported as dropped (docs/CONCEPTS.md, The context).
This times ``build_context`` (in process, budget 2000) on a store of N global
lessons three ways in the same run: as it is; with the budget loop alone (the
lines sure to go not taken out first, so every dropped line re-renders the
context); and with the ranking cut to ten (the old behaviour, the baseline). It
also checks that the first two give the same text and the same dropped lines.

Usage: python bench/bench_lessons_budget.py [N ...]
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memwork.core.base.clock import iso  # noqa: E402
from memwork.core.services.context import budget, default_style  # noqa: E402
from memwork.core.services.context.build import build_context  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)


def _store(count: int) -> Store:
    store = Store(Path(tempfile.mkdtemp()) / "db")
    fill(store, count)
    return store


def fill(store: Store, count: int) -> None:
    """``count`` global lessons of varied confidence, written in one transaction."""
    stamp = iso(NOW)
    with store.transaction():
        for n in range(count):
            doc = {
                "id": f"les_{n:026d}",
                "content": f"lesson number {n} about topic {n * 7919 % 1000}",
                "scope": "global",
                "confidence": 0.5 + (n % 50) / 100,
                "created_at": stamp,
                "updated_at": stamp,
                "last_reinforced_at": stamp,
                "decay_rate": 0.05,
                "deleted": False,
                "pinned": False,
                "reinforcements": 0,
                "tags": [],
                "source": "bench",
                "fingerprint": f"fp{n}",
                "wordings": [],
            }
            store.put("lessons", doc["id"], doc)


def _best(store: Store, repeat: int) -> float:
    build_context(store, now=NOW, budget_tokens=2000)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        build_context(store, now=NOW, budget_tokens=2000)
        times.append(time.perf_counter() - start)
    return min(times) * 1000


_RANKED = default_style.ranked_lessons


def _ten(*args: Any, **kwargs: Any) -> Any:
    """The ranking as the old context used it: the best ten."""
    return _RANKED(*args, **kwargs)[:10]


def main(sizes: list[int]) -> None:
    """One line per store size: the three timings and the ratios."""
    for count in sizes:
        store = _store(count)
        now_ms = _best(store, 5)
        result = build_context(store, now=NOW, budget_tokens=2000)
        sure_to_go = budget._sure_to_go
        budget._sure_to_go = lambda live, room: []  # noqa: ARG005
        try:
            loop_ms = _best(store, 1)
            loop = build_context(store, now=NOW, budget_tokens=2000)
        finally:
            budget._sure_to_go = sure_to_go
        default_style.ranked_lessons = _ten
        try:
            ten_ms = _best(store, 5)
        finally:
            default_style.ranked_lessons = _RANKED
        same = result.text == loop.text and [d.text for d in result.dropped] == [
            d.text for d in loop.dropped
        ]
        print(
            f"{count} lessons: {now_ms:.1f} ms; budget loop alone {loop_ms:.1f} ms "
            f"({loop_ms / now_ms:.1f}x); ten-lesson cut (baseline) {ten_ms:.1f} ms "
            f"-> {now_ms / ten_ms:.2f}x the baseline; same result: {same}"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [200, 2000])
