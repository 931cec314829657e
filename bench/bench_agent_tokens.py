"""Agent tokens over HTTP: what resolving one costs beside the operator's token.

One `memwork serve` (MEMWORK_TOKEN set) on a fresh store holding ``--tokens`` agent
tokens. Over one keep-alive connection, in turn: ``POST /v1/list_lessons`` with the
operator's token and ``X-Memwork-Agent: coder`` (the baseline), and the same with
coder's own agent token (the guard reads the token table and compares digests on every
such request). Prints p50 of each and the ratio agent/baseline.

Usage: python bench/bench_agent_tokens.py [--tokens 1 100] [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402

from tests.http_server import Served  # noqa: E402

OPERATOR = "bench-operator-token"


def env(**extra: str) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**environ, "MEMWORK_FSYNC": "0", "PYTHONPATH": str(ROOT), **extra}


def issue(db: Path, agent: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memwork", "--db", str(db), "--json", "agent-token", "add", agent],
        capture_output=True,
        text=True,
        env=env(),
        check=True,
    )
    return str(json.loads(done.stdout)["token"])


def run(tokens: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "db"
        coder = issue(db, "coder")
        for i in range(tokens - 1):
            issue(db, f"agent-{i}")
        server = Served(db, env(MEMWORK_TOKEN=OPERATOR))
        try:
            url = f"{server.url}/v1/list_lessons"
            base_headers = {"Authorization": f"Bearer {OPERATOR}", "X-Memwork-Agent": "coder"}
            agent_headers = {"Authorization": f"Bearer {coder}"}
            base: list[float] = []
            agent: list[float] = []
            with httpx2.Client(timeout=60) as client:
                for _ in range(20):  # warm up both paths
                    client.post(url, json={}, headers=base_headers)
                    client.post(url, json={}, headers=agent_headers)
                for _ in range(calls):
                    for headers, into in ((base_headers, base), (agent_headers, agent)):
                        start = time.perf_counter()
                        answer = client.post(url, json={}, headers=headers)
                        into.append(time.perf_counter() - start)
                        assert answer.status_code == 200, answer.text
        finally:
            server.stop()
    b, a = statistics.median(base) * 1000, statistics.median(agent) * 1000
    print(
        f"tokens={tokens:<4} operator+header p50 {b:6.2f} ms   agent token p50 {a:6.2f} ms   "
        f"ratio {a / b:4.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    for n in args.tokens:
        run(n, args.calls)


if __name__ == "__main__":
    main()
