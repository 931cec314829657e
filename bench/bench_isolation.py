"""What per-agent isolation costs ``memwork context``: one store, two copies, isolation
on in one (``config isolation agent``) and off in the other, timed side by side.

The store holds a few thousand records from eight agents: 80 sessions of 25
observations (2,000 observations), 1,600 episodes (an eighth of them failures, a
tenth recorded with no agent id), and a few lessons and slots. The context an
agent asks for on every step reads the same tables with isolation on; what it
adds is reading the setting and leaving the other agents' entries out of the
episode aggregates (and, with ``--query``, out of the search hits).

Usage: python bench/bench_isolation.py [OUT]   (default bench/out/isolation)

It builds ``OUT/base``, copies it to ``OUT/on`` and ``OUT/off`` and prints the
farm-bench commands that time them, pair by pair (A: isolation on, B: off):

    MEMWORK_AGENT=agent-3 MEMWORK_NOW=2026-11-01T12:00:00Z farm-bench -n 20 \\
        --vs "memwork --db OUT/off context --task t1" -- memwork --db OUT/on context --task t1
"""

from __future__ import annotations

import shutil
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memwork.core.domain import episodes, lessons, sessions, slots
from memwork.core.ledger import config
from memwork.core.storage.copy import copy_store
from memwork.core.storage.store import Store

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)
AGENTS = 8
SESSIONS_PER_AGENT = 10
NOTES_PER_SESSION = 25
EPISODES = 1_600
TASKS = ("t0", "t1", "t2", "t3")


def build(path: Path) -> None:
    """The store: every agent's sessions, notes and episodes, and shared knowledge."""
    shutil.rmtree(path, ignore_errors=True)
    store = Store(path)
    start = NOW - timedelta(days=10)
    with store.transaction():
        for a in range(AGENTS):
            actor = f"cli:agent-{a}"
            for s in range(SESSIONS_PER_AGENT):
                when = start + timedelta(hours=a * 10 + s)
                sid = sessions.start_session(
                    store, agent_id=f"agent-{a}", project="shop", now=when, actor=actor
                )["id"]
                for n in range(NOTES_PER_SESSION):
                    text = f"agent {a} session {s} note {n}: ran the deploy check on worker-{n}"
                    sessions.observe(store, sid, text, now=when, actor=actor)
                sessions.end_session(
                    store, sid, summary=f"run {s} of agent {a}", now=when, actor=actor
                )
    batch = []
    for n in range(EPISODES):
        failed = n % 8 == 0
        batch.append(
            {
                "task_id": TASKS[n % len(TASKS)],
                "score": 0.2 if failed else 0.9,
                "steps": 5,
                "summary": f"episode {n}: deployed worker-{n % 50}",
                "mistakes": [f"skipped canary {n % 9}"] if failed else [],
                "recorded_at": (NOW - timedelta(minutes=EPISODES - n)).isoformat(),
            }
        )
    for agent in range(AGENTS + 1):  # the last "agent" records with no agent id
        mine = batch[agent :: AGENTS + 1]
        actor = f"api:agent-{agent}" if agent < AGENTS else "api"
        episodes.record_episodes(store, mine, now=NOW, actor=actor)
    for n in range(20):
        lessons.add_lesson(store, f"Shared lesson {n}: canary before rollout", now=NOW, actor="tui")
    slots.set_slot(store, "persona", "A careful deploy agent.", now=NOW, actor="tui")
    store.close()


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else ROOT / "bench" / "out" / "isolation"
    out.mkdir(parents=True, exist_ok=True)
    build(out / "base")
    for name in ("off", "on"):  # two copies, laid out alike (no log to replay in either)
        shutil.rmtree(out / name, ignore_errors=True)
        copy_store(str(out / "base"), str(out / name))
    on = Store(out / "on")
    config.set_value(on, "isolation", "agent", now=NOW, actor="tui")
    on.close()
    memwork = Path(sys.executable).parent / "memwork"
    env = "MEMWORK_AGENT=agent-3 MEMWORK_NOW=2026-11-01T12:00:00Z"
    for extra in ("--task t1", "--task t1 --query 'deploy check worker'"):
        print(
            f'{env} farm-bench -n 20 --vs "{memwork} --db {out}/off context {extra}" -- '
            f"{memwork} --db {out}/on context {extra}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
