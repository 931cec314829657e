"""``POST /v1/search`` over HTTP: beside an echo route, and 16 clients at once.

For each size and note shape, on stores of the same notes (``long``: about 950
characters, ``short``: about 200; 100 notes to a session), one server
(``bench/http_echo_server.py``: the application ``memwork serve`` runs, plus
``POST /v1/echo`` served the same way), and in one run:

* latency: ``/v1/search`` (a question of the synthetic set, ``limit`` 10) and
  ``/v1/echo`` (the same body), one of each in turn over one keep-alive
  connection; p50 / p95 and the ratio of the p50s (goal: <= 3x at 100k); and an
  empty query in the same turn, answered before the index is asked: what the
  door and the operation cost around the search itself; and, for the current tree,
  ``/v1/tantivy`` in the same turn: tantivy (a compiled engine) searching the same
  notes behind the same door, what a compiled search costs over HTTP here;
* throughput (the largest size): 16 clients at once, each on its own keep-alive
  connection, searching again and again for ``--seconds``; searches/s, p50 /
  p95, and the statuses (no 5xx allowed); then the echo route the same way, the
  most this client and server can do on this machine;
* the server's resident memory (RSS) at the end (tantivy's index included where
  ``/v1/tantivy`` is served: ``--no-tantivy`` for memwork's alone).

``--workers 0 2`` measures the current tree once per value, with that many search
worker processes (``memwork serve --search-workers``). ``--baseline TREE`` measures
an older checkout the same way in the same run (its own ``.venv``, its own store of
the same notes written by its own code), size by size, each tree in turn: the
"vs baseline" column is against that tree's figures. The clients speak HTTP/1.1 on
raw sockets (a few microseconds a call), so the figures are the server's, not a
client library's.

fsync is off (``MEMWORK_FSYNC=0``). The first search of a server builds or
loads its recall index and is reported apart ("first search"); the timed calls then
wait until the server's first background save of that index has landed and the server
has gone quiet ("settled": the save checks the titles the build left unchecked and
writes the file again, some seconds of one-time work at 100k notes that begins after
the file first appears), unless ``--no-settle`` is given.
Usage: python bench/bench_http_search.py [--sizes 1000 10000 100000]
[--shapes long short] [--calls 200] [--clients 16] [--seconds 20] [--workers 0 2]
[--baseline /path/to/old/tree] [--no-settle] [--no-tantivy]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_agent import linked_copy, pct  # noqa: E402
from tree_code import python_of, require_own_code  # noqa: E402

OUT = ROOT / "bench" / "out"
#: Bumped whenever the texts or the fill change what a cached store holds.
VERSION = 1


# -- stores -----------------------------------------------------------------------------------
def texts_of(n: int, shape: str) -> tuple[Path, list[str]]:
    """The texts file of ``n`` notes of ``shape`` (made once) and the questions to ask."""
    from bench_recall import _shaped_texts

    texts = OUT / f"http-search-v{VERSION}-{shape}-{n}.texts.json"
    questions = texts.with_suffix(".questions.json")
    if not questions.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        made, asked = _shaped_texts(n, shape)
        texts.write_text(json.dumps(made))
        questions.write_text(json.dumps(asked))
    return texts, json.loads(questions.read_text())


def env(tree: Path) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**environ, "MEMWORK_FSYNC": "0", "PYTHONPATH": str(tree)}


def store_of(tree: Path, label: str, n: int, shape: str) -> Path:
    """``tree``'s store of the notes (written once by that tree's own code, no index)."""
    texts, _ = texts_of(n, shape)
    folder = OUT / f"http-search-v{VERSION}-{label}-{shape}-{n}"
    done = folder.with_suffix(".done")
    if not done.exists():
        shutil.rmtree(folder, ignore_errors=True)
        print(f"(building {folder.name} ...)", file=sys.stderr, flush=True)
        subprocess.run(
            [python_of(tree), str(ROOT / "bench" / "http_search_fill.py"), str(texts), str(folder)],
            env=env(tree),
            check=True,
        )
        shutil.rmtree(folder / "cache", ignore_errors=True)  # every server starts without one
        done.write_text("")
    return folder


# -- the server -------------------------------------------------------------------------------
def start(
    tree: Path, store: Path, workers: int, texts: Path | None = None
) -> tuple[subprocess.Popen[str], int]:
    """The benchmark server of ``tree`` on ``store``; with ``texts``, also serving
    ``/v1/tantivy`` over those notes."""
    extra = ["--search-workers", str(workers)] if workers else []
    if texts is not None:
        extra += ["--tantivy", str(texts)]
    server = subprocess.Popen(
        [python_of(tree), str(tree / "bench" / "http_echo_server.py"), str(store), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE if workers else None,
        env=env(tree),
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http://"):
        raise RuntimeError("the benchmark server did not start")
    return server, int(url.rsplit(":", 1)[1])


def workers_ready(server: subprocess.Popen[str]) -> str:
    """Wait for the server's line saying its search workers are ready; that line."""
    assert server.stderr is not None
    for line in server.stderr:
        if "search workers ready" in line:
            return line.strip()
    raise RuntimeError("the server ended before its search workers were ready")


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` and its children (worker processes), MiB."""
    total = 0
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        pids += [int(p) for p in (task / "children").read_text().split()]
    for p in pids:
        for line in Path(f"/proc/{p}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def stop(server: subprocess.Popen[str]) -> int:
    server.terminate()
    return server.wait(timeout=120)


# -- a keep-alive HTTP/1.1 client on a raw socket ----------------------------------------------
class Conn:
    """One keep-alive connection: POST a JSON body, read the status and body."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, port: int) -> Conn:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer)

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()


def body(question: str) -> bytes:
    return json.dumps({"query": question, "limit": 10}).encode()


async def first_search(port: int, question: str) -> float:
    """Seconds the first search takes (the index is built or loaded)."""
    conn = await Conn.open(port)
    for _ in range(600):
        try:
            started = time.perf_counter()
            status, answer = await conn.post("/v1/search", body(question))
            break
        except (ConnectionError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.1)
            conn = await Conn.open(port)
    await conn.close()
    if status != 200:
        raise RuntimeError(f"search answered {status}: {answer[:300]!r}")
    return time.perf_counter() - started


async def latency(
    port: int, questions: list[str], calls: int, tantivy: bool = False
) -> dict[str, list[float]]:
    """Echo, search and an empty search in turn over one connection (ms), and with
    ``tantivy`` its route too; the first 20 rounds not counted. An empty query is
    answered before the index is asked: what a search costs besides the search itself."""
    out: dict[str, list[float]] = {"echo": [], "search": [], "empty": []}
    if tantivy:
        out["tantivy"] = []
    conn = await Conn.open(port)
    for n in range(calls + 20):
        payload = body(questions[n % len(questions)])
        for name in out:
            route = "search" if name == "empty" else name
            started = time.perf_counter()
            status, answer = await conn.post(
                f"/v1/{route}", body(" ") if name == "empty" else payload
            )
            elapsed = (time.perf_counter() - started) * 1000
            if status != 200:
                raise RuntimeError(f"{name} answered {status}: {answer[:300]!r}")
            if n >= 20:
                out[name].append(elapsed)
    await conn.close()
    return out


async def load(
    port: int, route: str, questions: list[str], clients: int, seconds: float
) -> dict[str, Any]:
    """``clients`` connections at once, each calling ``route`` again and again."""
    statuses: dict[int, int] = {}
    times: list[float] = []
    wrong: list[str] = []

    async def client(number: int, deadline: float) -> None:
        conn = await Conn.open(port)
        n = number * 7
        while time.monotonic() < deadline:
            started = time.perf_counter()
            status, answer = await conn.post(route, body(questions[n % len(questions)]))
            times.append((time.perf_counter() - started) * 1000)
            statuses[status] = statuses.get(status, 0) + 1
            if status == 200 and route == "/v1/search" and not isinstance(json.loads(answer), list):
                wrong.append(answer[:200].decode())
            n += 1
        await conn.close()

    deadline = time.monotonic() + seconds
    started = time.monotonic()
    await asyncio.gather(*(client(c, deadline) for c in range(clients)))
    elapsed = time.monotonic() - started
    return {
        "calls": len(times),
        "per_second": len(times) / elapsed,
        "p50": statistics.median(times),
        "p95": pct(times, 0.95),
        "statuses": statuses,
        "fives": sum(v for k, v in statuses.items() if k >= 500),
        "wrong": wrong[:3],
    }


# -- one run ----------------------------------------------------------------------------------
def measure(
    tree: Path,
    label: str,
    workers: int,
    n: int,
    shape: str,
    args: argparse.Namespace,
    loaded: bool,
) -> dict[str, Any]:
    texts, questions = texts_of(n, shape)
    source = store_of(tree, label, n, shape)
    store = linked_copy(source, OUT / f"http-search-run-{os.getpid()}-{label}")
    # tantivy beside the current tree only: an older tree's server has no such route.
    beside = texts if tree == ROOT and args.tantivy else None
    server, port = start(tree, store, workers, beside)
    name = f"{label}, {workers} search workers" if workers else label
    row: dict[str, Any] = {"tree": name, "n": n, "shape": shape, "clients": args.clients}
    row["load_avg"] = os.getloadavg()
    try:
        row["first_s"] = asyncio.run(first_search(port, "warm up the index"))
        if args.settle:
            row["settled_s"] = settled(store, server.pid)
        if workers:  # every worker loads its index before anything is timed
            row["workers"] = workers_ready(server)
            threading.Thread(target=server.stderr.read, daemon=True).start()  # type: ignore[union-attr]
        row["latency"] = asyncio.run(latency(port, questions, args.calls, beside is not None))
        if loaded:
            row["search_load"] = asyncio.run(
                load(port, "/v1/search", questions, args.clients, args.seconds)
            )
            row["echo_load"] = asyncio.run(
                load(port, "/v1/echo", questions, args.clients, args.seconds / 2)
            )
        row["rss_mib"] = rss_mib(server.pid)
    finally:
        row["exit"] = stop(server)
        shutil.rmtree(store, ignore_errors=True)
    return row


def settled(store: Path, pid: int, most: float = 300.0) -> float:
    """Wait until the server's one-time work on the index it built is done: its file is
    in the store's cache folder, and the server (every thread of it) then spends under a
    twentieth of a core for a whole second, so that the timed calls do not share the CPU
    with that work (the first background save checks the titles the build left
    unchecked and writes the file again, some seconds after the file first appears);
    returns the seconds waited (``--no-settle`` times the calls during it)."""
    began = time.perf_counter()
    index = store / "cache" / "recall" / "index.bin"
    while not index.exists() and time.perf_counter() - began < most:
        time.sleep(0.2)
    ticks = os.sysconf("SC_CLK_TCK")

    def cpu() -> float:  # the process's user and system seconds, all threads
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks

    last = cpu()
    while time.perf_counter() - began < most:
        time.sleep(1.0)
        now = cpu()
        if now - last < 0.05:
            break
        last = now
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--shapes", nargs="+", default=["long", "short"])
    parser.add_argument(
        "--no-settle",
        dest="settle",
        action="store_false",
        help="time the calls while the server's first background save may still run",
    )
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--no-tantivy",
        dest="tantivy",
        action="store_false",
        help="leave out /v1/tantivy (tantivy over the same notes behind the same door)",
    )
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--baseline", type=Path, help="an older tree, measured the same way")
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[0],
        help="the current tree is measured once per value, with that many search workers",
    )
    args = parser.parse_args()
    trees = [(ROOT, "current", w) for w in args.workers]
    if args.baseline:
        trees.append((args.baseline.resolve(), "baseline", 0))
    for tree, _, _ in trees:
        require_own_code(tree, python_of(tree), env(tree))
    if args.tantivy:
        from recall_baselines import need

        need("bm25s", "tantivy")
    rows = []
    for shape in args.shapes:
        for n in args.sizes:
            for tree, label, workers in trees:
                loaded = n == max(args.sizes)
                row = measure(tree, label, workers, n, shape, args, loaded)
                rows.append(row)
                shown = {k: v for k, v in row.items() if k != "latency"}
                shown["p50_ms"] = {k: statistics.median(v) for k, v in row["latency"].items()}
                print(json.dumps(shown), flush=True)
                # Kept after every row: a run cut short keeps what it measured.
                (OUT / "http_search_results.json").write_text(json.dumps(rows, indent=2))
    report(rows)


def report(rows: list[dict[str, Any]]) -> None:
    """The tables of docs/PERFORMANCE.md."""
    base = {(r["n"], r["shape"]): r for r in rows if r["tree"] == "baseline"}
    print(
        "\n| tree | notes | echo p50 | empty search p50 | `/v1/search` p50 / p95 "
        "| ratio to echo (goal <= 3x) | `/v1/tantivy` p50 / p95 | its ratio to echo "
        "| first search | RSS (tantivy's index too, where it is served) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        lat = r["latency"]
        echo, search = statistics.median(lat["echo"]), statistics.median(lat["search"])
        if "tantivy" in lat:
            compiled = statistics.median(lat["tantivy"])
            beside = f"{compiled:.2f} / {pct(lat['tantivy'], 0.95):.2f} ms | {compiled / echo:.2f}x"
        else:
            beside = "— | —"
        print(
            f"| {r['tree']} | {r['n']:,} {r['shape']} | {echo:.2f} ms "
            f"| {statistics.median(lat['empty']):.2f} ms | {search:.2f} / "
            f"{pct(lat['search'], 0.95):.2f} ms | {search / echo:.2f}x | {beside} "
            f"| {r['first_s']:.1f} s | {r['rss_mib']:.0f} MiB |"
        )
    print(
        "\n| tree | notes | clients | searches/s | p50 / p95 | 5xx | vs baseline "
        "| echo calls/s (ceiling) | load avg |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "search_load" not in r:
            continue
        s, e = r["search_load"], r["echo_load"]
        old = base.get((r["n"], r["shape"]))
        versus = (
            f"{s['per_second'] / old['search_load']['per_second']:.1f}x"
            if old is not None and r is not old and "search_load" in old
            else "—"
        )
        print(
            f"| {r['tree']} | {r['n']:,} {r['shape']} | {r['clients']} "
            f"| {s['per_second']:.0f} | {s['p50']:.1f} / {s['p95']:.1f} ms | {s['fives']} "
            f"| {versus} | {e['per_second']:.0f} | {r['load_avg'][0]:.1f} |"
        )


if __name__ == "__main__":
    main()
