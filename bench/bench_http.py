"""The HTTP door (`memwork serve`): latency beside an echo baseline, and 50 clients at once.

On a copy of the cached benchmark store of each size, one server
(``bench/http_echo_server.py``: the application `memwork serve` runs, plus a
trivial echo route and echo tool served the same way), and in one run:

* JSON routes: p50 / p95 of ``POST /v1/context`` (a task's context) beside
  ``POST /v1/echo``, one call of each in turn over one keep-alive connection
  (target: context p50 <= 2.5x echo at 100k episodes);
* MCP over streamable HTTP (the SDK's client): ``record_episode`` and
  ``get_context`` beside the ``echo`` tool, in turn (target: record_episode
  p50 <= 4x echo);
* load: 50 clients at once for 30 s on loopback (40 on the JSON routes, 10 over
  MCP), each recording an episode then fetching the context, again and again;
  afterwards every episode a client was told was recorded must be in the store,
  and no answer may be a 5xx.

fsync is off (``MEMWORK_FSYNC=0``), as in the other write benchmarks' second
column. Usage: python bench/bench_http.py [--sizes 1000 100000] [--calls 300]
[--clients 50] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import anyio  # noqa: E402
import bench_store  # noqa: E402
import httpx2  # noqa: E402
from bench_agent import EPISODE, TASK, linked_copy, pct  # noqa: E402
from mcp import Client  # noqa: E402

OUT = ROOT / "bench" / "out"


def env() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**environ, "MEMWORK_FSYNC": "0", "PYTHONPATH": str(ROOT)}


def start(store: Path) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "http_echo_server.py"), str(store)],
        stdout=subprocess.PIPE,
        env=env(),
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http://"):
        raise RuntimeError("the benchmark server did not start")
    with httpx2.Client() as client:  # wait until it answers (its lifespan has run)
        for _ in range(600):
            try:
                if client.get(f"{url}/livez").status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.05)
    return server, url


def stop(server: subprocess.Popen[str]) -> int:
    server.terminate()
    return server.wait(timeout=60)


def bench_rest(url: str, calls: int) -> dict[str, list[float]]:
    """``POST /v1/context`` beside ``POST /v1/echo`` (ms), in turn, one connection."""
    out: dict[str, list[float]] = {"echo": [], "context": []}
    bodies = {"echo": {"task": TASK}, "context": {"task": TASK}}
    with httpx2.Client(timeout=120) as client:
        for n in range(calls + 20):
            for name in out:
                started = time.perf_counter()
                answer = client.post(f"{url}/v1/{name}", json=bodies[name])
                elapsed = (time.perf_counter() - started) * 1000
                answer.raise_for_status()
                if n >= 20:  # the first rounds warm both sides and are not counted
                    out[name].append(elapsed)
    return out


async def _timed(client: Client, name: str, payload: dict[str, Any]) -> float:
    started = time.perf_counter()
    result = await client.call_tool(name, payload)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    return elapsed


def bench_mcp(url: str, calls: int) -> dict[str, list[float]]:
    """MCP over streamable HTTP: echo, get_context and record_episode (ms), in turn."""
    out: dict[str, list[float]] = {"echo": [], "get_context": [], "record_episode": []}

    async def main() -> None:
        async with Client(f"{url}/mcp", cache=None) as client:
            for n in range(calls + 10):
                times = (
                    await _timed(client, "echo", {"text": "ping"}),
                    await _timed(client, "get_context", {"task": TASK}),
                    await _timed(client, "record_episode", {"episode": {**EPISODE, "steps": n}}),
                )
                if n >= 10:
                    for name, value in zip(out, times, strict=True):
                        out[name].append(value)

    anyio.run(main)
    return out


def bench_load(url: str, clients: int, seconds: float) -> dict[str, Any]:
    """``clients`` at once for ``seconds``: what they were told, and what the store kept."""
    statuses: dict[int, int] = {}
    recorded: list[str] = []
    failures: list[str] = []
    calls = 0
    mcp_clients = clients // 5

    async def rest(number: int, deadline: float) -> None:
        nonlocal calls
        async with httpx2.AsyncClient(timeout=120, headers={"X-Memwork-Agent": f"c{number}"}) as c:
            n = 0
            while time.monotonic() < deadline:
                episode = {**EPISODE, "summary": f"client {number} episode {n}"}
                for name, body in (
                    ("record_episode", {"episode": episode}),
                    ("context", {"task": TASK}),
                ):
                    answer = await c.post(f"{url}/v1/{name}", json=body)
                    statuses[answer.status_code] = statuses.get(answer.status_code, 0) + 1
                    calls += 1
                    if answer.status_code != 200:
                        failures.append(answer.text[:200])
                    elif name == "record_episode":
                        recorded.extend(answer.json()["ids"])
                n += 1

    async def mcp(number: int, deadline: float) -> None:
        nonlocal calls
        async with Client(f"{url}/mcp", cache=None) as client:
            n = 0
            while time.monotonic() < deadline:
                episode = {**EPISODE, "summary": f"mcp client {number} episode {n}"}
                result = await client.call_tool("record_episode", {"episode": episode})
                calls += 1
                if result.is_error:
                    failures.append(result.content[0].text[:200])
                else:
                    recorded.extend(result.structured_content["ids"])
                result = await client.call_tool("get_context", {"task": TASK})
                calls += 1
                if result.is_error:
                    failures.append(result.content[0].text[:200])
                n += 1

    async def main() -> None:
        deadline = time.monotonic() + seconds
        async with asyncio.TaskGroup() as group:
            for number in range(clients - mcp_clients):
                group.create_task(rest(number, deadline))
            for number in range(mcp_clients):
                group.create_task(mcp(number, deadline))

    started = time.monotonic()
    asyncio.run(main())
    elapsed = time.monotonic() - started
    return {
        "clients": clients,
        "mcp_clients": mcp_clients,
        "seconds": elapsed,
        "calls": calls,
        "statuses": statuses,
        "failures": failures[:5],
        "failure_count": len(failures),
        "recorded": recorded,
    }


def missing_episodes(store: Path, ids: list[str]) -> int:
    """How many of ``ids`` the store does not hold."""
    from memwork.core.domain import episodes
    from memwork.core.storage.store import Store

    opened = Store(store)
    with opened.reading():
        held = {doc["id"] for doc in episodes.iter_all(opened, newest_first=True)}
    return sum(1 for i in ids if i not in held)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--no-load", action="store_true", help="latencies only")
    args = parser.parse_args()
    os.environ["MEMWORK_FSYNC"] = "0"
    rows = []
    for n in args.sizes:
        source = bench_store.build_memwork(n)
        store = linked_copy(source, OUT / f"http-n{n}")
        server, url = start(store)
        try:
            row: dict[str, Any] = {"n": n}
            row["rest"] = bench_rest(url, args.calls)
            row["mcp"] = bench_mcp(url, args.calls)
            if not args.no_load and n == args.sizes[-1]:
                row["load"] = bench_load(url, args.clients, args.seconds)
        finally:
            row["exit"] = stop(server)
        if "load" in row:
            row["load"]["missing"] = missing_episodes(store, row["load"]["recorded"])
            row["load"]["recorded"] = len(row["load"]["recorded"])
        rows.append(row)
        shutil.rmtree(store, ignore_errors=True)
    report(rows)
    (OUT / "http_results.json").write_text(json.dumps(rows, indent=2))


def report(rows: list[dict[str, Any]]) -> None:
    """The tables of docs/PERFORMANCE_JOURNAL.md."""
    print(
        "\n| episodes | echo route p50 | `POST /v1/context` p50 / p95 | ratio (target <= 2.5x) "
        "| MCP echo p50 | `record_episode` p50 / p95 | ratio (target <= 4x) "
        "| `get_context` p50 | ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        rest, mcp = r["rest"], r["mcp"]
        echo, ctx = statistics.median(rest["echo"]), statistics.median(rest["context"])
        m_echo = statistics.median(mcp["echo"])
        rec, m_ctx = statistics.median(mcp["record_episode"]), statistics.median(mcp["get_context"])
        print(
            f"| {r['n']:,} | {echo:.2f} ms | {ctx:.2f} / {pct(rest['context'], 0.95):.2f} ms "
            f"| {ctx / echo:.2f}x | {m_echo:.2f} ms | {rec:.2f} / "
            f"{pct(mcp['record_episode'], 0.95):.2f} ms | {rec / m_echo:.2f}x | {m_ctx:.2f} ms "
            f"| {m_ctx / m_echo:.2f}x |"
        )
    for r in rows:
        load = r.get("load")
        if not load:
            continue
        fives = sum(v for k, v in load["statuses"].items() if int(k) >= 500)
        print(
            f"\nload at {r['n']:,} episodes: {load['clients']} clients ({load['mcp_clients']} over "
            f"MCP) for {load['seconds']:.0f} s: {load['calls']:,} calls "
            f"({load['calls'] / load['seconds']:.0f}/s), statuses {load['statuses']}, "
            f"{fives} 5xx, {load['failure_count']} failures; {load['recorded']:,} episodes "
            f"acknowledged, {load['missing']} missing from the store; server exit {r['exit']}"
        )


if __name__ == "__main__":
    main()
