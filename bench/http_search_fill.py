"""Fill a folder store with the notes of a texts file, for ``bench_http_search.py``.

Run by the Python of the tree being measured (its ``memwork`` first on
``PYTHONPATH``), so the store is written in that version's own format: the
current tree and the old baseline each get a store of the same notes. Only
``Store``, ``start_session`` and ``observe`` are used, which both have.

Usage: python bench/http_search_fill.py TEXTS.json STORE
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def main() -> None:
    from memwork.core.domain import sessions
    from memwork.core.storage.store import Store

    texts: list[str] = json.loads(Path(sys.argv[1]).read_text())
    store = Store(Path(sys.argv[2]))
    records = len(texts)
    count = max(100, records // 100)  # 100 notes to a session (a session keeps 500 at most)
    with store.transaction():
        sids = [
            sessions.start_session(store, title=f"run {s}", now=NOW, actor="b")["id"]
            for s in range(count)
        ]
    per = -(-records // count)
    for start in range(0, records, 2000):
        with store.transaction():
            for i in range(start, min(records, start + 2000)):
                at = NOW - timedelta(seconds=records - i)
                sessions.observe(store, sids[i // per], texts[i], now=at, actor="b")
    store.close()


if __name__ == "__main__":
    main()
