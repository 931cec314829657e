"""`memwork import` of files that are each format's real samples with parts broken: every
one is imported or refused with a line (exit 0 or 2), never an internal error, and a
store an import wrote still answers."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_in_process import run

DATA = Path(__file__).resolve().parents[2] / "data"
SAMPLES = {
    "letta": DATA / "letta" / "v1_support_agent.af",
    "agentmemory": DATA / "agentmemory" / "v0.9-export.json",
    "agentmemory-old": DATA / "agentmemory" / "v0.3-export.json",
    "memwork": DATA / "store-v2.export.json",
    # The episodic library's agent_memory.json, six episodes written by the model of it
    # in bench/episodic_reference.py (its timestamps as numbers ended in AttributeError).
    "episodic": DATA / "episodic" / "agent_memory.json",
}
#: What a broken file puts where a value was: wrong types, numbers past 64 bits, an
#: unpaired surrogate, empty and huge values, a path, a date that is none.
ODD: list[Any] = [
    None, True, 0, -1, 2**63, 2**80, 1.5, -1e308, "", "x", "\ud800", "é", [], {},
    [1, "a"], {"a": None}, "x" * 300_000, "2026-13-45", "../../etc/passwd", "NaN",
    # Text int() refuses though isdigit() passes it, a number past a float, dates at the
    # calendar's ends, and what the words of recall read apart.
    "\u00b2", "1" * 400, 10**400, "9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "C++ e-mail",
]  # fmt: skip


def _places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _places(inner, (*path, key))
    elif isinstance(value, list):
        for n, inner in enumerate(value[:5]):
            yield from _places(inner, (*path, n))


def _broken(doc: Any, rng: random.Random) -> Any:
    """``doc`` with one to three of its values replaced by odd ones or left out."""
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice([p for p in _places(doc) if p])
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if rng.random() < 0.25:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(ODD))
    return doc


@pytest.mark.slow
def test_broken_samples_are_imported_or_refused_never_an_internal_error(tmp_path: Path) -> None:
    samples = {name: json.loads(path.read_text()) for name, path in SAMPLES.items()}
    rng = random.Random(36)
    outcomes = {0: 0, 2: 0}
    for n in range(300):
        name = rng.choice(sorted(samples))
        file = tmp_path / f"broken-{n}.json"
        text = json.dumps(_broken(samples[name], rng))
        file.write_bytes(text.encode("utf-8", "surrogatepass"))  # "\ud800" as its bytes
        db = tmp_path / f"db-{n}"
        fmt = name.removesuffix("-old") if rng.random() < 0.5 else "auto"
        done = run(db, "import", str(file), "--format", fmt, MEMWORK_FSYNC="0")
        assert done.returncode in (0, 2), (name, done.stderr)
        assert "internal error" not in done.stderr, (name, done.stderr)
        outcomes[done.returncode] += 1
        if done.returncode == 2:
            assert done.stderr.startswith("memwork: "), done.stderr
            assert not db.exists() or run(db, "export").returncode == 0
        else:
            assert run(db, "doctor").returncode == 0
            assert run(db, "context").returncode == 0
    # Both outcomes are met: the corpus breaks files, and not every break is fatal.
    assert outcomes[0] > 30 and outcomes[2] > 30, outcomes
