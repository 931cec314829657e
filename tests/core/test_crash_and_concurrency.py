"""Killing a writer at any instant loses nothing acknowledged; concurrent writers lose nothing."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from core import aggregates, episodes
from core.doctor import report
from core.storage.store import Store
from tests.conftest import python_env

CHILD = str(Path(__file__).with_name("writer_child.py"))


def _stored_episodes(path: Path) -> list[dict]:
    store = Store(path)
    with store.reading():
        docs = list(episodes.iter_all(store))
        glob = aggregates.read_global(store)
    assert glob["stored_episodes"] == len(docs)
    return docs


def test_sigkill_at_random_instants_keeps_every_acknowledged_write(tmp_path: Path) -> None:
    path = tmp_path / "store"
    rng = random.Random(20261122)
    acknowledged: list[str] = []
    env = python_env(MEMWORK_FSYNC="1")
    for _ in range(50):
        child = subprocess.Popen(
            [sys.executable, CHILD, str(path), "w", "0"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        # Let a few writes land first, so the run makes progress however busy the
        # machine is; then kill at a random instant of the writes that follow.
        for _ in range(rng.randint(0, 3)):
            acknowledged.append(child.stdout.readline().strip())
        time.sleep(rng.uniform(0.0, 0.03))
        child.send_signal(signal.SIGKILL)
        out, _ = child.communicate()
        acknowledged.extend(line for line in out.split() if line.startswith("ep_"))
        docs = _stored_episodes(path)
        stored = {d["id"] for d in docs}
        missing = [a for a in acknowledged if a not in stored]
        assert not missing, f"acknowledged writes lost after a kill: {missing[:3]}"
        indexes = sorted(d["index"] for d in docs)
        assert indexes == list(range(1, len(docs) + 1)), "episode indexes must stay contiguous"
    assert len(acknowledged) > 50, "the child should have written between kills"
    assert report(path)["ok"]


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "store"
    Store(path)
    per_worker = 25
    children = [
        subprocess.Popen(
            [sys.executable, CHILD, str(path), f"w{n}", str(per_worker)],
            stdout=subprocess.PIPE,
            text=True,
            env=python_env(),
        )
        for n in range(4)
    ]
    acknowledged = []
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        acknowledged.extend(line for line in out.split() if line.startswith("ep_"))
    docs = _stored_episodes(path)
    assert len(acknowledged) == 4 * per_worker
    assert {d["id"] for d in docs} == set(acknowledged)
    assert sorted(d["index"] for d in docs) == list(range(1, 4 * per_worker + 1))
    store = Store(path)
    with store.reading():
        tasks = aggregates.all_tasks(store)
    assert sum(t["episodes"] for t in tasks) == 4 * per_worker
