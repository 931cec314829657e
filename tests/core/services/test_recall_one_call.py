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
from memwork.core.services.recall.mapped import positions
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
    block = 65_536 // 4  # int32 elements searched at once
    values = array("i", [0] * (3 * block + 5))
    wanted = [0, block - 1, block, 2 * block + 7, len(values) - 1]
    for i in wanted:
        values[i] = 7
    # Two neighbours whose bytes hold 7's bytes across their border: no match.
    values[100], values[101] = 7 << 8, 0
    assert positions(values, 7) == wanted


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


def _run_and_look(store: Path, args: list[str], modules: tuple[str, ...]) -> tuple[str, list[str]]:
    """A CLI call in a fresh interpreter: what it printed, then its exit code and, for
    each of ``modules``, whether the call imported it."""
    code = (
        "import sys\n"
        "from memwork.core.doors.cli.main import main\n"
        f"code = main(['--db', {str(store)!r}, *{args!r}])\n"
        f"print(code, *(m in sys.modules for m in {modules!r}), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout, out.stderr.split()[-1 - len(modules) :]


def test_a_cli_search_loads_neither_openssl_nor_numpy(tmp_path: Path) -> None:
    store = tmp_path / "s"
    memory = Memory(store, clock=lambda: NOW)
    for i in range(30):
        memory.observe(f"run-{i % 3}", f"rolled back the canary on web-{i}")
    memory.close()
    printed, seen = _run_and_look(store, ["search", "canary web-7"], ("_hashlib", "numpy"))
    assert "web-7" in printed
    assert seen == ["0", "False", "False"]


@pytest.mark.parametrize(
    "verb",
    [["context", "--task", "deploy"], ["lesson", "add", "Never deploy on Fridays"], ["lint"]],
)
def test_the_calls_agents_make_every_step_do_not_load_numpy(tmp_path: Path, verb) -> None:
    # numpy's import alone costs a call ~60 ms (and its thread pool some CPU after it);
    # lint and the lessons need it only to compare many lessons at once.
    store = tmp_path / "s"
    memory = Memory(store, clock=lambda: NOW)
    memory.add_lesson("Always pin the image digest")
    memory.close()
    _, seen = _run_and_look(store, verb, ("numpy",))
    assert seen[-1] == "False"


def test_a_saved_column_takes_writes_beside_it(tmp_path: Path) -> None:
    import os

    from memwork.core.services.recall.mapped import FileReader, SavedNumbers

    values = array("i", range(0, 3000, 3))
    path = tmp_path / "column.bin"
    path.write_bytes(b"8 bytes!" + values.tobytes() + b"trailer")
    reader = FileReader(os.open(path, os.O_RDONLY), path.stat().st_size)
    column = SavedNumbers(reader, 8, 4 * len(values), "i")
    assert (len(column), column[0], column[999], column[-1]) == (1000, 0, 2997, 2997)
    column[5] = -1  # a saved slot
    column.append(7)
    column.append(9)
    column[1001] = 8  # an appended one
    assert (column[5], column[1000], column[1001], column[-1], len(column)) == (-1, 7, 8, 8, 1002)
    with pytest.raises(IndexError):
        column[1002]
    assert column.positions(-1) == [5] and column.positions(15) == []
    assert column.positions(3) == [1] and column.positions(8) == [1001]
    expected = [*values, 7, 8]
    expected[5] = -1
    whole = column.whole()
    assert list(whole) == expected
    # From now on the object reads and writes that array: a reference taken before
    # (a caller's local) stays right.
    column[0] = 42
    column.append(1)
    assert (whole[0], len(whole), column[1002]) == (42, 1003, 1)
    reader.close()
