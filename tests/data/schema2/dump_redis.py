"""Made ``redis.json``: run ``make_store.sh`` on a fresh Redis database, write every key.

Run from the repository root with the code of commit 20c8aa3 (see README.md):
``python tests/data/schema2/dump_redis.py tests/data/schema2/redis.json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, ".")
from tests.redis_server import RedisServer  # noqa: E402 - after the path is set

HERE = Path(__file__).resolve().parent


def main(target: str) -> None:
    server = RedisServer(Path(tempfile.mkdtemp()), fsync="no")
    server.start()
    try:
        url = server.fresh_db()
        script = str(HERE / "make_store.sh")
        subprocess.run(["bash", script, url], check=True, stdout=subprocess.DEVNULL)
        client = server.client(int(url.rsplit("/", 1)[1]))
        out: dict[str, dict[str, Any]] = {}
        for key in sorted(client.scan_iter(count=1000)):
            kind, name = client.type(key).decode(), key.decode()
            if kind == "hash":
                fields = sorted(client.hgetall(key).items())
                out[name] = {"hash": {f.decode(): v.decode() for f, v in fields}}
            elif kind == "set":
                out[name] = {"set": sorted(m.decode() for m in client.smembers(key))}
            else:
                raise SystemExit(f"unexpected {kind} {name}")
        Path(target).write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1])
