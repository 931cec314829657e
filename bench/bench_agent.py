"""What an agent pays per step: MCP tools, the Python API, CLI processes, search.

For each store size, in one run, on this machine:

* MCP: p50 / p95 of ``get_context`` and ``record_episode`` through a real SDK
  client over stdio against ``memwork mcp``, next to the p50 of a trivial
  ``echo`` tool served by the same SDK (``bench/echo_server.py``): the targets
  are 2.5x and 4x the echo's p50;
* Python API: ``Memory.context`` in-process (target 5 ms at 100k);
* processes: a whole ``memwork record-episode`` next to a whole
  ``memwork context`` (target 1.3x);
* search: a whole ``memwork search`` process, and ``Memory.search`` once its
  corpus is warm.

Writes go to a hard-linked copy of the cached benchmark store (the store
replaces files by rename, so the original is never touched). fsync is off for
the writes (``MEMWORK_FSYNC=0``), as in the other write benchmarks' second
column. Usage: python bench/bench_agent.py [--sizes 1000 100000] [--calls N]
"""

from __future__ import annotations

import argparse
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
from mcp import Client, StdioServerParameters  # noqa: E402
from store_copy import linked_copy  # noqa: E402, F401 - bench_http* import it from here

OUT = ROOT / "bench" / "out"
TASK = bench_store.TASK
EPISODE = {
    "task_id": TASK,
    "score": 0.42,
    "steps": 7,
    "summary": "Rolled back the canary after the health checks failed on worker-25",
    "mistakes": ["Skipped the smoke test"],
    "successes": [],
}
QUERIES = ["worker 25", "jwt expiry", "rollbak auth", "deploy-service canary"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


#: The memwork command the process figures time (``--memwork``; default: the dev venv's).
MEMWORK = ROOT / ".venv" / "bin" / "memwork"


def memwork_cmd(*args: str) -> list[str]:
    exe = MEMWORK
    return [str(exe), *args] if exe.exists() else [sys.executable, "-m", "memwork", *args]


CACHE = OUT / "agent-cache"


def env() -> dict[str, str]:
    # The search cache goes to a folder of its own, emptied before the search runs.
    # Bytecode is cached as on a user's machine (a sandbox may turn it off: then every
    # process compiles every module it imports and measures that instead).
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**environ, "MEMWORK_FSYNC": "0", "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(CACHE)}


async def timed(client: Client, name: str, payload: dict[str, Any]) -> float:
    start = time.perf_counter()
    result = await client.call_tool(name, payload)
    elapsed = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    return elapsed


def bench_mcp(store: Path, calls: int) -> dict[str, list[float]]:
    """Tool latencies (ms) over stdio: echo, get_context and record_episode, interleaved."""
    memwork = StdioServerParameters(
        command=memwork_cmd()[0], args=[*memwork_cmd()[1:], "--db", str(store), "mcp"], env=env()
    )
    echo = StdioServerParameters(
        command=sys.executable, args=[str(ROOT / "bench" / "echo_server.py")], env=env()
    )
    out: dict[str, list[float]] = {"echo": [], "get_context": [], "record_episode": []}

    async def main() -> None:
        async with Client(echo, cache=None) as e, Client(memwork, cache=None) as m:
            # One call of each in turn, so a busy moment on the machine hits all three alike;
            # the first rounds warm caches on both sides and are not counted.
            for n in range(calls + 10):
                times = (
                    await timed(e, "echo", {"text": "ping"}),
                    await timed(m, "get_context", {"task": TASK}),
                    await timed(m, "record_episode", {"episode": {**EPISODE, "steps": n}}),
                )
                if n >= 10:
                    for name, value in zip(out, times, strict=True):
                        out[name].append(value)

    anyio.run(main)
    return out


def bench_api(store: Path, calls: int) -> dict[str, float]:
    """``Memory.context`` and warm ``Memory.search`` in-process (ms)."""
    from memwork import Memory

    os.environ["XDG_CACHE_HOME"] = str(CACHE)
    shutil.rmtree(CACHE, ignore_errors=True)
    memory = Memory(store)
    memory.context(TASK)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        memory.context(TASK)
        times.append((time.perf_counter() - start) * 1000)
    search_cold = time.perf_counter()
    memory.search(QUERIES[0])
    search_cold = (time.perf_counter() - search_cold) * 1000
    warm = []
    for query in QUERIES * 2:
        start = time.perf_counter()
        memory.search(query)
        warm.append((time.perf_counter() - start) * 1000)
    return {
        "context_p50": statistics.median(times),
        "context_p95": pct(times, 0.95),
        "search_first": search_cold,
        "search_warm_p50": statistics.median(warm),
    }


def bench_processes(store: Path, repeat: int) -> dict[str, float]:
    """Whole processes (ms): context, record-episode, search."""
    payload = json.dumps(EPISODE).encode()
    process_env = env()
    if MEMWORK.parent != ROOT / ".venv" / "bin":
        # An installed memwork: the checkout's own memwork/ on the path would shadow it.
        del process_env["PYTHONPATH"]

    def run(args: list[str], stdin: bytes | None = None) -> float:
        start = time.perf_counter()
        subprocess.run(
            memwork_cmd("--db", str(store), *args),
            input=stdin,
            check=True,
            stdout=subprocess.DEVNULL,
            env=process_env,
            cwd=ROOT,
        )
        return (time.perf_counter() - start) * 1000

    context_args = ["context", "--task", TASK]
    run(context_args)
    run(["record-episode"], payload)  # warm the page cache and the bytecode
    context, record = [], []
    for _ in range(repeat):  # interleaved, so both see the same machine
        context.append(run(context_args))
        record.append(run(["record-episode"], payload))
    shutil.rmtree(CACHE, ignore_errors=True)
    first = run(["search", QUERIES[0]])  # reads every table and writes the search cache
    search = [run(["search", q]) for q in QUERIES for _ in range(3)]
    pairs = sorted(r / c for c, r in zip(context, record, strict=True))
    return {
        "context": statistics.median(context),
        "record": statistics.median(record),
        "pair_p25": pct(pairs, 0.25),
        "pair_p75": pct(pairs, 0.75),
        "search_first": first,
        "search": statistics.median(search),
        "search_max": max(search),
    }


def main() -> None:
    global MEMWORK
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--calls", type=int, default=200, help="tool calls per series")
    parser.add_argument("--repeat", type=int, default=15, help="process runs per command")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=["mcp", "api", "processes"],
        default=["mcp", "api", "processes"],
        help="measure only these (the tables of the others are left out)",
    )
    parser.add_argument(
        "--memwork",
        type=Path,
        default=MEMWORK,
        help="the memwork command whose processes are timed (an installed one, say: the dev "
        "venv's import hook costs every process ~5 ms)",
    )
    args = parser.parse_args()
    MEMWORK = args.memwork
    os.environ["MEMWORK_FSYNC"] = "0"
    rows = []
    for n in args.sizes:
        source, _, _ = bench_store.build(n)
        store = linked_copy(source, OUT / f"agent-n{n}")
        row: dict[str, Any] = {"n": n}
        if "mcp" in args.only:
            row["mcp"] = bench_mcp(store, args.calls)
        if "api" in args.only:
            row["api"] = bench_api(store, args.calls)
        if "processes" in args.only:
            row["processes"] = bench_processes(store, args.repeat)
        rows.append(row)
        shutil.rmtree(store, ignore_errors=True)
    report(rows)
    (OUT / "agent_results.json").write_text(json.dumps(rows, indent=2))


def report(rows: list[dict[str, Any]]) -> None:
    """The tables of docs/PERFORMANCE_JOURNAL.md, for what was measured."""
    if all("mcp" in r for r in rows):
        report_mcp(rows)
    if all("processes" in r for r in rows):
        report_processes(rows)


def report_mcp(rows: list[dict[str, Any]]) -> None:
    print(
        "\n| episodes | echo p50 | `get_context` p50 / p95 | ratio "
        "| `record_episode` p50 / p95 | ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        m = r["mcp"]
        echo = statistics.median(m["echo"])
        ctx, rec = statistics.median(m["get_context"]), statistics.median(m["record_episode"])
        print(
            f"| {r['n']:,} | {echo:.2f} ms | {ctx:.2f} / {pct(m['get_context'], 0.95):.2f} ms "
            f"| {ctx / echo:.2f}x | {rec:.2f} / {pct(m['record_episode'], 0.95):.2f} ms "
            f"| {rec / echo:.2f}x |"
        )


def report_processes(rows: list[dict[str, Any]]) -> None:
    api = all("api" in r for r in rows)
    print(
        "\n| episodes |"
        + (" `Memory.context` p50 / p95 |" if api else "")
        + " `memwork context` | `memwork record-episode` | ratio (run by run, p25–p75) |"
    )
    print("|---:|" + ("---:|" if api else "") + "---:|---:|---:|")
    for r in rows:
        p = r["processes"]
        ctx_api = (
            f" {r['api']['context_p50']:.2f} / {r['api']['context_p95']:.2f} ms |" if api else ""
        )
        print(
            f"| {r['n']:,} |{ctx_api} {p['context']:.0f} ms | {p['record']:.0f} ms "
            f"| {p['record'] / p['context']:.2f}x ({p['pair_p25']:.2f}–{p['pair_p75']:.2f}) |"
        )
    print(
        "\n| episodes | `memwork search` process: first (no cache) | cached, median / max "
        + ("| `Memory.search` first / warm p50 |" if api else "|")
    )
    print("|---:|---:|---:|" + ("---:|" if api else ""))
    for r in rows:
        p = r["processes"]
        warm = (
            f" {r['api']['search_first']:.0f} / {r['api']['search_warm_p50']:.0f} ms |"
            if api
            else ""
        )
        print(
            f"| {r['n']:,} | {p['search_first']:.0f} ms | {p['search']:.0f} / "
            f"{p['search_max']:.0f} ms |{warm}"
        )


if __name__ == "__main__":
    main()
