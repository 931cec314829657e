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


def fill(folder: Path, texts: list[str]) -> None:
    """Write ``texts`` as notes into the folder store at ``folder``, 100 notes to a
    session (a session keeps 500 at most), one second apart, ending at ``NOW``.
    ``bench_recall.py`` fills its latency stores with this too."""
    from memwork.core.domain import sessions
    from memwork.core.storage.store import Store

    store = Store(folder)
    records = len(texts)
    count = max(100, records // 100)
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


def main() -> None:
    fill(Path(sys.argv[2]), json.loads(Path(sys.argv[1]).read_text()))


if __name__ == "__main__":
    main()
