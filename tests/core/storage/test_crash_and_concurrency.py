"""Killing a writer at any instant loses nothing acknowledged; concurrent writers lose nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memwork.core.domain import aggregates, episodes
from memwork.core.services.doctor.folder import report
from memwork.core.storage.store import Store
from tests.conftest import python_env

CHILD = str(Path(__file__).with_name("writer_child.py"))


def _stored_episodes(path: Path | str) -> list[dict]:
    store = Store(path)
    with store.reading():
        docs = list(episodes.iter_all(store))
        glob = aggregates.read_global(store)
    assert glob["stored_episodes"] == len(docs)
    return docs


# -- SIGKILLs at random instants --------------------------------------------------------
# The writer is a forked child of this process (modules already imported, so a kill
# costs milliseconds, not an interpreter start-up). It runs a random mix of what writes
# to a store: recording episodes, checkpoint create, checkpoint restore (a rewind: the
# model below knows which records it takes away) and imports, and reports each one on
# a pipe as soon as it is acknowledged. On a folder its log is small (LOG_BYTES), so
# the log is folded into the table files every few commits and kills land in folds
# too. The parent kills it at a random instant, then checks: doctor finds no problem
# (a pending commit or a torn last log record is fine), the store opens, every
# checkpoint is readable, and the store holds exactly what the acknowledged operations
# say, give or take the one operation that was in flight.
# 100 kills a backend (200 on a folder before: the suite's slowest test by 20 s). A run
# of 100 still lands a kill inside a restore some 25 times, between a commit's journal
# and its switch several times and across some 50 log folds, and the counts checked at
# the end scale with KILLS.
KILLS = 100
LOG_BYTES = "12000"


def _child_loop(
    path: Path | str, seed: int, target: str | None, out: int, work: Path
) -> None:  # pragma: no cover
    from datetime import UTC, datetime

    from memwork.core.domain import lessons
    from memwork.core.services import checkpoints
    from memwork.core.services.interop.importer import run_import

    os.environ["MEMWORK_FSYNC"] = "1"
    os.environ["MEMWORK_LOG_BYTES"] = LOG_BYTES
    rng = random.Random(seed)
    store = Store(path)

    def say(line: str) -> None:
        os.write(out, (line + "\n").encode())

    latest = target  # a checkpoint the parent knows the contents of
    n = 0
    while True:
        n += 1
        now = datetime.now(UTC)
        roll = rng.random()
        if roll < 0.12:
            doc = checkpoints.create(store, f"c{seed}-{n}", now=now, actor="crash")
            latest = doc["id"]
            say(f"cp {latest}")
        elif roll < 0.3 and latest is not None:
            say(f"rs {latest}")  # intent: the restore may or may not land
            checkpoints.restore(store, latest, now=now, actor="crash")
            say(f"rd {latest}")
        elif roll < 0.4:
            scratch = Store.in_memory()
            docs = [
                lessons.add_lesson(
                    scratch, f"import {seed}-{n}-{k} {os.urandom(6).hex()}", now=now, actor="x"
                ).lesson
                for k in range(3)
            ]
            file = work / f"import-{seed}-{n}.json"
            file.write_text(
                json.dumps(
                    {
                        "format": "memwork-export",
                        "schema_version": 1,
                        "tables": {"lessons": docs},
                    }
                )
            )
            say("im " + " ".join(d["id"] for d in docs))  # intent
            run_import(store, file, now=now, actor="crash")
            say("id")
        else:
            [doc] = episodes.record_episodes(
                store,
                [
                    {
                        "task_id": f"task-{n % 3}",
                        "score": (n % 10) / 10,
                        "steps": n,
                        "summary": f"attempt {seed}-{n}",
                        "mistakes": [f"mistake {n % 7}"],
                        "successes": [f"success {n % 5}"],
                    }
                ],
                now=now,
                actor="crash",
            )
            say(f"ep {doc['id']}")


def _fork_writer(path: Path | str, seed: int, target: str | None, work: Path) -> tuple[int, int]:
    """(pid, read end of its pipe)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 0
        try:
            os.close(read)
            _child_loop(path, seed, target, write, work)
        except BaseException as exc:  # noqa: BLE001 - tell the parent, never run its teardown
            os.write(write, f"err {exc!r}\n".encode())
            code = 3
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _state(path: Path | str, checked: set[str]) -> tuple[set[str], set[str]]:
    """Episode ids and lesson ids in the store, after checking it is whole.

    Every checkpoint not in ``checked`` is read back too (and added to it).
    """
    store = Store(path)
    with store.reading():
        docs = list(episodes.iter_all(store))
        glob = aggregates.read_global(store)
        lesson_ids = set(store.docs("lessons"))
        for cid in set(store.docs("checkpoints")) - checked:
            store.backend.snapshot_tables(cid)  # every checkpoint is readable
            checked.add(cid)
    assert glob["stored_episodes"] == len(docs)
    indexes = sorted(d["index"] for d in docs)
    assert indexes == list(range(1, len(docs) + 1)), "episode indexes must stay contiguous"
    return {d["id"] for d in docs}, lesson_ids


def _doctor(path: Path | str) -> dict:
    if isinstance(path, str):
        from memwork.core.services.doctor.redis import report as redis_report
        from memwork.core.storage.url import parse

        return redis_report(parse(path))
    return report(path)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["folder", "redis"])
def test_sigkill_at_random_instants_loses_no_acknowledged_write(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    path: Path | str = (
        request.getfixturevalue("redis_url") if backend == "redis" else tmp_path / "store"
    )
    Store(path)
    rng = random.Random(20261123)
    eps: set[str] = set()
    les: set[str] = set()
    snaps: dict[str, tuple[set[str], set[str]]] = {}
    checked: set[str] = set()
    counts = {
        "ep": 0,
        "cp": 0,
        "rd": 0,
        "id": 0,
        "restore in flight": 0,
        "pending journal": 0,
        "log folds": 0,
        "torn log record": 0,
    }
    folded_at = _folded_at(path)
    started = time.monotonic()
    for kill in range(KILLS):
        target = rng.choice(sorted(snaps)) if snaps else None
        pid, read = _fork_writer(path, kill, target, tmp_path)
        lines: list[str] = []
        with os.fdopen(read, "rb") as pipe:
            for _ in range(rng.randint(0, 3)):
                line = pipe.readline().decode().strip()
                if line:
                    lines.append(line)
            time.sleep(rng.uniform(0.0, 0.03))
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            lines.extend(line.decode().strip() for line in pipe.read().splitlines())
        in_flight: tuple[str, ...] = ()
        for line in lines:
            kind, _, rest = line.partition(" ")
            assert kind != "err", f"the writer failed: {rest}"
            counts[kind] = counts.get(kind, 0) + 1
            if kind == "ep":
                eps.add(rest)
            elif kind == "cp":
                snaps[rest] = (set(eps), set(les))
            elif kind == "rs":
                in_flight = ("restore", rest)
                continue
            elif kind == "rd":
                eps, les = set(snaps[rest][0]), set(snaps[rest][1])
            elif kind == "im":
                in_flight = ("import", *rest.split())
                continue
            elif kind == "id":
                les |= set(in_flight[1:])
            in_flight = ()
        if isinstance(path, Path):
            counts["pending journal"] += (path / "journal.json").exists()
            counts["torn log record"] += _torn_log(path)
            now_at = _folded_at(path)
            counts["log folds"] += now_at != folded_at
            folded_at = now_at
        verdict = _doctor(path)
        assert verdict["ok"], [c for c in verdict["checks"] if c["status"] == "problem"]
        stored_eps, stored_les = _state(path, checked)
        stored = (stored_eps, stored_les)
        if in_flight and in_flight[0] == "restore":
            # All or nothing: exactly the state before the restore, or exactly the checkpoint's.
            counts["restore in flight"] += 1
            assert stored in [(eps, les), snaps[in_flight[1]]], f"kill {kill}: a torn restore"
        else:
            lost = (eps - stored_eps) | (les - stored_les)
            assert not lost, f"acknowledged writes lost after kill {kill}: {sorted(lost)[:3]}"
            # Beyond them, only what the one operation in flight would have written.
            extra_les = set(in_flight[1:]) if in_flight else set()
            assert stored_les in (les, les | extra_les), f"kill {kill}: stray lessons"
            assert len(stored_eps - eps) <= (0 if in_flight else 1), f"kill {kill}: stray episodes"
        # Whatever landed is now part of the store: follow the store from here.
        eps, les = stored_eps, stored_les
    _state(path, set())  # at the end, every checkpoint once more
    elapsed = time.monotonic() - started
    print(f"{KILLS} kills in {elapsed:.1f} s: {counts}")
    assert counts["ep"] > KILLS // 2, "the writer should record episodes between kills"
    assert counts["cp"] > KILLS // 20 and counts["rd"] > KILLS // 40, counts
    assert counts["id"] > KILLS // 40, counts
    if isinstance(path, Path):
        assert counts["log folds"] > KILLS // 4, counts


def _folded_at(path: Path | str) -> int:
    """The commit the folder's table files were last folded at (its store.json)."""
    if not isinstance(path, Path):
        return 0
    return int(json.loads((path / "store.json").read_bytes())["generation"])


def _torn_log(path: Path) -> bool:
    """Whether the kill left a log record cut short (dropped whole on the next open)."""
    from memwork.core.storage import wal

    log = path / wal.LOG_NAME
    if (path / "journal.json").exists() or not log.exists():
        return False
    data = log.read_bytes()
    base = wal.read_header(log, data)
    return wal.read_records(log, data[wal.HEADER_SIZE :], wal.HEADER_SIZE, base).torn > 0


@pytest.mark.parametrize("backend", ["folder", "redis"])
def test_concurrent_writers_lose_nothing(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    path: Path | str = (
        request.getfixturevalue("redis_url") if backend == "redis" else tmp_path / "store"
    )
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
