"""What a one-call search (the CLI) holds: a word's mapped pages only while it sums
them, no OpenSSL for its digests, and the hits' session titles from the index rather
than a read of the whole sessions table."""

from __future__ import annotations

import hashlib
import mmap
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from memwork import Memory
from memwork.core.services.recall import engine
from memwork.core.services.recall.engine import fingerprint
from memwork.core.services.recall.extract import NEVER, Unit
from tests.conftest import NOW


def _rss_file_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssFile:"):
            return int(line.split()[1])
    raise AssertionError("no RssFile line")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_words_mapped_pages_are_let_go_once_summed(tmp_path: Path) -> None:
    path = tmp_path / "postings.bin"
    path.write_bytes(bytes(range(256)) * (32 * 1024))  # 8 MB
    with path.open("rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(data)[: len(data) // 2].cast("i")
    before = _rss_file_kb()
    assert sum(view[::1024]) != 0  # every page of the first half read
    touched = _rss_file_kb()
    assert touched - before > 3_000
    engine._let_go(view)
    assert _rss_file_kb() - before < 1_000
    assert view[5] == int.from_bytes(bytes(range(20, 24)), sys.byteorder)  # still readable
    view.release()
    data.close()


def test_letting_go_of_postings_that_are_not_mapped_changes_nothing() -> None:
    docs = array("i", [3, 1, 2])
    engine._let_go(docs)
    engine._let_go(memoryview(bytes(8)).cast("i"))
    assert list(docs) == [3, 1, 2]


def test_fingerprints_are_the_blake2b_digests_saved_indexes_hold() -> None:
    unit = Unit("a", "observation", "t", ((1.0, "rolled back"),), 1.0, "s", 0, NEVER)
    import marshal

    expected = hashlib.blake2b(marshal.dumps(tuple(unit)), digest_size=8).digest()
    assert fingerprint(unit) == int.from_bytes(expected, "big") >> 1


def test_positions_are_found_across_blocks_and_never_between_elements() -> None:
    values = array("i", [0] * (3 * engine._BLOCK + 5))
    wanted = [0, engine._BLOCK - 1, engine._BLOCK, 2 * engine._BLOCK + 7, len(values) - 1]
    for i in wanted:
        values[i] = 7
    # Two neighbours whose bytes hold 7's bytes across their border: no match.
    values[100], values[101] = 7 << 8, 0
    assert engine._positions(values, 7) == wanted


def _hit_titles(memory: Memory) -> list[str]:
    return [h["title"] for h in memory.search("canary", limit=3)]


def test_a_hit_names_its_session_by_the_sessions_current_title(db: Path, cli) -> None:  # noqa: ANN001
    memory = Memory(db, clock=lambda: NOW)
    memory.observe("run-42", "rolled back the canary on web-3")
    first = _hit_titles(memory)
    memory.start_session(session="run-42", title="Friday deploy")
    renamed = _hit_titles(memory)
    memory.close()
    assert len(first) == 1 and "Friday deploy" not in first[0]
    assert renamed == [
        f"{first[0].split(' · ')[0]} · Friday deploy: rolled back the canary on web-3"
    ]
    # A fresh process reads the saved index and catches up: the same title.
    out = cli("search", "canary").out
    assert "Friday deploy: rolled back the canary" in out


def test_a_cli_search_loads_neither_openssl_nor_numpy(tmp_path: Path) -> None:
    store = tmp_path / "s"
    memory = Memory(store, clock=lambda: NOW)
    for i in range(30):
        memory.observe(f"run-{i % 3}", f"rolled back the canary on web-{i}")
    memory.close()
    code = (
        "import sys\n"
        "from memwork.core.doors.cli.main import main\n"
        f"code = main(['--db', {str(store)!r}, 'search', 'canary web-7'])\n"
        "print(code, '_hashlib' in sys.modules, 'numpy' in sys.modules, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "web-7" in out.stdout
    assert out.stderr.split()[-3:] == ["0", "False", "False"]
