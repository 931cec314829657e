"""How much a tool list costs an agent session: ``tools/list`` of ``memwork mcp`` per choice.

Starts the real server over stdio for each ``--tools`` choice, speaks raw JSON-RPC
(initialize, then ``tools/list``) and measures what comes back on the wire: the
number of tools and the characters of the ``tools/list`` answer (the JSON line as
sent, and its ``result`` alone), with the share of the ``all`` baseline measured
in the same run. About 4 characters make a token.

    .venv/bin/python bench/mcp_tools_size.py [CHOICE ...]   # default: all agent workspace curation
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def tools_list(choice: str, store: Path) -> tuple[int, int, int]:
    """(tools, characters of the answer line, characters of its result) for ``choice``."""
    server = subprocess.Popen(
        [sys.executable, "-m", "memwork", "--db", str(store), "mcp", "--tools", choice],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert server.stdin is not None
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "size", "version": "1"},
            },
        }
    )
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    line = server.stdout.readline().rstrip("\n")
    server.stdin.close()
    server.wait(timeout=60)
    result = json.loads(line)["result"]
    compact = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
    return len(result["tools"]), len(line), len(compact)


def main(argv: list[str]) -> int:
    """Print one line per choice, ``all`` first as the baseline."""
    choices = argv or ["agent", "workspace", "curation"]
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "store"
        base_tools, base_line, _ = tools_list("all", store)
        print(f"{'all':<24} {base_tools:>4} tools {base_line:>8,} chars  (baseline)")
        for choice in choices:
            if choice == "all":
                continue
            count, line, compact = tools_list(choice, store)
            share = line / base_line
            print(
                f"{choice:<24} {count:>4} tools {line:>8,} chars  "
                f"{share:.2f}x of all (result alone {compact:,})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
