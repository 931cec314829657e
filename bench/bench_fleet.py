"""A fleet of writer processes on one folder store, beside SQLite WAL (synchronous=FULL).

N processes each make K ``Memory.observe`` calls on the same folder store (fsync on),
all started at one moment; then N processes each commit the same rows K times into
one SQLite database (journal_mode=WAL, synchronous=FULL, one transaction per call,
a busy timeout so none fails). The rows are the documents one ``observe`` commits,
heard through ``store.subscribe`` once before the run: the same tables, the same
document sizes, a new id per call. Reports commits per second for each side (all
commits / the time from the first start to the last end) and their ratio, round by
round with the sides taking turns, so a busy moment on the machine hits all three.

Each round also runs memwork with its lock waiters polling (as before they waited in
the kernel), the baseline for that change, and the same writers while ``memwork
serve`` serves the store: they hand their writes to its desk, which commits each batch
that arrives together with one fsync (``core/ops/hand_over.py``; "served" below; its
CPU counts with the writers', and each writer reports how many of its calls the desk
took: a writer the desk finds alone writes for itself until its lock is found taken).
Per side: CPU time per commit (all writers' user+system time in the loop / all
commits), and fairness: each writer's
commits while all of them were running (until the first one finished), fewest–most.

One writer (``--writers 1``) is the single-writer commit cost.

``--breakdown``: where a memwork writer's CPU goes, per commit: user and system time,
catching up on the other writers' commits while waiting for the lock (what
``Store._catch_up`` reads and replays), the catch-up that remains under the lock
(``Store._refresh``), writing the commit (``Store._commit``), and the rest (the
operation itself, and the waits' own cost). Timed per thread, around those functions.

``--own-sessions``: each memwork writer observes into a session of its own (started
before the timed loop, as an agent of a fleet would), and each SQLite writer updates
a session row of its own, instead of all of them sharing one.

150 calls a writer by default: SQLite's commits take about twice as long while its
WAL file grows (each fsync also records the file's new size) as once it wraps and
writes over its own pages, ~450 commits into a run (0.21 against 0.11 ms a commit,
one writer). Runs of 40 calls a writer, the earlier default, timed SQLite mostly
while its WAL grew; memwork's log grows on every commit, so those runs flattered it.

Usage: python bench/bench_fleet.py [--writers 8] [--calls 150] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "bench" / "out"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


#: Methods a ``--breakdown`` run times in each writer (class, method), with the names it
#: reports. The lock's wait calls the catch-up while it waits: it is reported less that.
_PARTS = {
    "acquire": "waiting for the lock, less catching up",
    "_catch_up": "catching up while waiting",
    "_refresh": "catching up under the lock",
    "_commit": "writing the commit",
}


def _timed_parts() -> dict[str, float]:
    """Wrap the :data:`_PARTS` methods (the folder backend's ``acquire``, the others
    ``Store``'s) to add up their thread CPU time."""
    from memwork.core.storage.folder_backend import FolderBackend
    from memwork.core.storage.store import Store

    spent = dict.fromkeys(_PARTS, 0.0)
    for name in _PARTS:
        owner = FolderBackend if name == "acquire" else Store
        real = getattr(owner, name)

        def timed(self: object, *args: object, _real=real, _name=name, **kw: object) -> object:  # noqa: ANN001
            began = time.thread_time()
            try:
                return _real(self, *args, **kw)
            finally:
                spent[_name] += time.thread_time() - began

        setattr(owner, name, timed)
    return spent


def _memwork_writer(
    store: str, session: str, calls: int, start_at: float, me: int, poll: bool
) -> dict:
    from memwork.core.ops.memory import Memory

    spent = _timed_parts() if os.environ.get("FLEET_BREAKDOWN") else None

    if poll:
        from memwork.core.storage import lock

        lock._KERNEL_WAIT = False  # the baseline: waiters poll the busy lock

    memory = Memory(store)
    if os.environ.get("FLEET_OWN_SESSIONS"):
        session = memory.start_session(agent=f"writer-{me}")["id"]
    memory.observe(session, f"writer {me} is ready")  # opening costs are not the commit's
    while time.time() < start_at:
        time.sleep(0.0005)
    if spent is not None:
        spent.update(dict.fromkeys(spent, 0.0))  # the loop's commits only
    way = memory._hand_over
    handed_before = way.handed if way else 0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    began, cpu = time.time(), _cpu()
    done = []
    for n in range(calls):
        memory.observe(session, f"writer {me} step {n}: the canary for billing-api went green")
        done.append(time.time())
    ended, cpu = time.time(), _cpu() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF)
    handed = (way.handed if way else 0) - handed_before  # the loop's calls only
    memory.close()
    result = {"began": began, "ended": ended, "calls": calls, "cpu": cpu, "done": done}
    result["handed"] = handed
    if spent is not None:
        spent["acquire"] -= spent["_catch_up"]  # (called inside the wait)
        result["parts"] = {
            "user": after.ru_utime - usage.ru_utime,
            "system": after.ru_stime - usage.ru_stime,
            **spent,
        }
    return result


def _sqlite_writer(path: str, rows_file: str, calls: int, start_at: float, me: int) -> dict:
    rows = json.loads(Path(rows_file).read_text())
    own = bool(os.environ.get("FLEET_OWN_SESSIONS"))
    db = sqlite3.connect(path, isolation_level=None, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    while time.time() < start_at:
        time.sleep(0.0005)
    began, cpu = time.time(), _cpu()
    done = []
    for n in range(calls):
        db.execute("BEGIN IMMEDIATE")
        for table, doc_id, doc in rows:
            # A new observation each call; the rows it updates (its session) stay the same.
            if table == rows[0][0]:
                key = f"{doc_id}-{me}-{n}"
            else:  # with --own-sessions, each writer's session row is its own
                key = f"{doc_id}-{me}" if own and table == "sessions" else doc_id
            db.execute(
                f'INSERT OR REPLACE INTO "{table}" (id, doc) VALUES (?, ?)',
                (key, json.dumps(doc, sort_keys=True)),
            )
        db.execute("COMMIT")
        done.append(time.time())
    ended, cpu = time.time(), _cpu() - cpu
    db.close()
    return {"began": began, "ended": ended, "calls": calls, "cpu": cpu, "done": done}


def _worker(argv: list[str]) -> None:
    kind, target, extra, calls, start_at, me = argv
    if kind in ("memwork", "polling", "served"):
        poll = kind == "polling"
        result = _memwork_writer(target, extra, int(calls), float(start_at), int(me), poll)
    else:
        result = _sqlite_writer(target, extra, int(calls), float(start_at), int(me))
    print(json.dumps(result))


class Side:
    """One fleet's run: commits per second, CPU ms per commit, fairness."""

    def __init__(self, results: list[dict]) -> None:
        began = min(r["began"] for r in results)
        ended = max(r["ended"] for r in results)
        commits = sum(r["calls"] for r in results)
        self.rate = commits / (ended - began)
        self.cpu_ms = 1000 * sum(r["cpu"] for r in results) / commits
        #: Commits a serving process's desk made for the writers.
        self.handed = sum(r.get("handed", 0) for r in results)
        first_done = min(r["ended"] for r in results)
        shares = [sum(1 for t in r["done"] if t <= first_done) for r in results]
        self.fairness = f"{min(shares)}–{max(shares)}"
        #: With ``--breakdown``: each part's CPU ms a commit, over every writer.
        self.parts: dict[str, float] = {}
        if all("parts" in r for r in results):
            for name in results[0]["parts"]:
                self.parts[name] = 1000 * sum(r["parts"][name] for r in results) / commits


def _fleet(kind: str, target: str, extra: str, writers: int, calls: int) -> Side:
    """``writers`` processes started at one moment."""
    start_at = time.time() + 1.5 + 0.15 * writers  # every process imported and open by then
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", kind, target, extra, str(calls)]
            + [str(start_at), str(me)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "MEMWORK_FSYNC": os.environ.get("FLEET_FSYNC", "1")},
        )
        for me in range(writers)
    ]
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a {kind} writer failed (exit {proc.returncode})")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return Side(results)


def _proc_cpu(pid: int) -> float:
    """A process's user + system CPU seconds so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _served(store: str, session: str, writers: int, calls: int) -> Side:
    """The writers while ``memwork serve`` serves the store (its desk commits for them);
    the server's CPU in the run is added to theirs."""
    env = {**os.environ, "MEMWORK_FSYNC": os.environ.get("FLEET_FSYNC", "1")}
    server = subprocess.Popen(
        [sys.executable, "-m", "memwork", "--db", store, "serve", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stderr is not None
        for line in server.stderr:
            if "committed here" in line:
                break
        else:
            raise SystemExit("memwork serve opened no desk for the store")
        cpu = _proc_cpu(server.pid)
        side = _fleet("served", store, session, writers, calls)
        side.cpu_ms += 1000 * (_proc_cpu(server.pid) - cpu) / (writers * calls)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    return side


def _setup(work: Path) -> tuple[str, str, str, str]:
    """A store with a session, the SQLite twin's tables, and the rows one observe commits."""
    os.environ["MEMWORK_FSYNC"] = "1"
    from memwork.core.ops.memory import Memory
    from memwork.core.storage.backend import Change

    store = work / "store"
    memory = Memory(store)
    session = memory.start_session(agent="bench")["id"]
    rows: list[tuple[str, str, dict]] = []

    def heard(change: Change) -> None:
        for name, table in change.tables.items():
            docs = memory.store.docs(name)
            rows.extend((name, i, docs[i]) for i in sorted(table.put) if i in docs)

    memory.store.subscribe(heard)
    memory.observe(session, "writer 0 step 0: the canary for billing-api went green")
    memory.close()
    # The new observation first: the SQLite writers give it a new id each call.
    rows.sort(key=lambda row: row[0] != "observations")
    rows_file = work / "rows.json"
    rows_file.write_text(json.dumps(rows))
    twin = work / "twin.sqlite"
    db = sqlite3.connect(twin, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    for table in {row[0] for row in rows}:
        db.execute(f'CREATE TABLE IF NOT EXISTS "{table}" (id TEXT PRIMARY KEY, doc TEXT)')
    db.close()
    return str(store), session, str(twin), str(rows_file)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        _worker(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--calls", type=int, default=150, help="commits per writer")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--own-sessions", action="store_true", help="each writer in a session of its own"
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="where a memwork writer's CPU goes"
    )
    args = parser.parse_args()
    if args.own_sessions:
        os.environ["FLEET_OWN_SESSIONS"] = "1"  # the writers' processes inherit it
    if args.breakdown:
        os.environ["FLEET_BREAKDOWN"] = "1"
    breakdowns: list[dict[str, float]] = []
    work = OUT / f"fleet-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        store, session, twin, rows_file = _setup(work)
        print(
            f"{args.writers} writer processes x {args.calls} commits, fsync on, "
            f"{args.rounds} rounds (memwork with either lock wait, taking turns, then SQLite)"
            + (", each writer in a session of its own" if args.own_sessions else "")
        )
        print()
        print(
            "| round | memwork commits/s | served commits/s (calls the desk took) "
            "| polling wait commits/s "
            "| SQLite WAL FULL commits/s | ratio | served ratio | polling ratio "
            "| CPU ms/commit (memwork, served, polling, SQLite) "
            "| commits per writer, all running (memwork, served, polling, SQLite) "
            "| load avg |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        ratios: list[float] = []
        polled: list[float] = []
        served_ratios: list[float] = []
        for r in range(args.rounds):
            # The store grows every run: the two memwork sides swap places each round.
            if r % 2 == 0:
                ours = _fleet("memwork", store, session, args.writers, args.calls)
                poll = _fleet("polling", store, session, args.writers, args.calls)
            else:
                poll = _fleet("polling", store, session, args.writers, args.calls)
                ours = _fleet("memwork", store, session, args.writers, args.calls)
            served = _served(store, session, args.writers, args.calls)
            theirs = _fleet("sqlite", twin, rows_file, args.writers, args.calls)
            if ours.parts:
                breakdowns.append(ours.parts)
            ratios.append(ours.rate / theirs.rate)
            polled.append(poll.rate / theirs.rate)
            served_ratios.append(served.rate / theirs.rate)
            print(
                f"| {r + 1} | {ours.rate:.0f} "
                f"| {served.rate:.0f} ({served.handed} of {args.writers * args.calls}) "
                f"| {poll.rate:.0f} "
                f"| {theirs.rate:.0f} | {ratios[-1]:.2f}x | {served_ratios[-1]:.2f}x "
                f"| {polled[-1]:.2f}x "
                f"| {ours.cpu_ms:.2f}, {served.cpu_ms:.2f}, {poll.cpu_ms:.2f}, "
                f"{theirs.cpu_ms:.2f} "
                f"| {ours.fairness}, {served.fairness}, {poll.fairness}, {theirs.fairness} "
                f"| {os.getloadavg()[0]:.1f} |",
                flush=True,
            )
        print(f"\nmedian ratio (memwork / SQLite): {statistics.median(ratios):.2f}x")
        print(
            "median ratio, served (memwork serve's desk commits / SQLite): "
            f"{statistics.median(served_ratios):.2f}x"
        )
        print(f"median ratio, polling wait (memwork / SQLite): {statistics.median(polled):.2f}x")
        if breakdowns:
            _print_breakdown(breakdowns)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _print_breakdown(rounds: list[dict[str, float]]) -> None:
    """Each round's CPU ms a commit of memwork's writers, by part."""
    print("\nWhere a memwork writer's CPU goes, ms a commit (user + system = the whole):\n")
    names = ["user", "system", *_PARTS]
    print("| round | user | system | " + " | ".join(_PARTS.values()) + " | the rest |")
    print("|---|" + "---:|" * (len(names) + 1))
    for n, parts in enumerate(rounds, 1):
        rest = parts["user"] + parts["system"] - sum(parts[p] for p in _PARTS)
        cells = " | ".join(f"{parts[name]:.2f}" for name in names)
        print(f"| {n} | {cells} | {rest:.2f} |")


if __name__ == "__main__":
    main()
