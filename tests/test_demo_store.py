"""The committed demo store: reproducible, and worth opening (issue: demo store)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
DEMO_NOW = "2026-11-20T12:00:00Z"


@pytest.fixture(scope="module")
def demo_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Read a copy, so the tests cannot touch data/demo even by accident."""
    copy = tmp_path_factory.mktemp("demo") / "demo"
    shutil.copytree(DEMO, copy)
    return copy


@pytest.fixture(scope="module")
def cli(demo_copy: Path):  # noqa: ANN201 - a runner
    def run(*args: str) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWORK_")}
        env["MEMWORK_NOW"] = DEMO_NOW
        memwork = Path(sys.executable).parent / "memwork"
        result = subprocess.run(
            [str(memwork), "--db", str(demo_copy), *args],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        return result.stdout

    return run


@pytest.fixture(scope="module")
def tables(cli) -> dict[str, list[dict]]:  # noqa: ANN001
    return json.loads(cli("export"))["tables"]


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.name: p.read_bytes()
        for p in sorted(folder.iterdir())
        if p.is_file() and not p.name.startswith(".")
    }


@pytest.mark.slow
def test_generator_reproduces_the_committed_demo_byte_for_byte(tmp_path: Path) -> None:
    before = _files(DEMO)
    spec = importlib.util.spec_from_file_location("generate_demo", ROOT / "data/generate_demo.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.generate(tmp_path / "demo")
    assert _files(tmp_path / "demo") == before
    assert _files(DEMO) == before


def test_demo_shows_every_kind_of_memory(tables: dict[str, list[dict]]) -> None:
    episodes = tables["episodes"]
    assert len({e["task_id"] for e in episodes}) >= 5
    assert len(episodes) >= 100
    failures = [e for e in episodes if e["outcome"] == "failure"]
    assert failures and all(e["errors"] for e in failures)
    cards = tables["mistake_cards"]
    assert len(cards) >= 10
    assert any(c["seen_count"] > 1 for c in cards)
    assert len(tables["sessions"]) >= 3
    with_observations = Counter(o["session_id"] for o in tables["observations"])
    assert len(with_observations) >= 3
    assert {w["session_id"] for w in tables["working_memory"]} & set(with_observations)


def test_demo_lessons_span_confidence_and_age(cli) -> None:  # noqa: ANN001
    lessons = json.loads(cli("lesson", "list", "--all", "--json"))
    assert len(lessons) >= 20
    assert any(x["pinned"] for x in lessons)
    live = [x for x in lessons if not x["forgotten"] and not x["deleted"]]
    # About to be forgotten: still live, but within one decay step of the 0.1 floor.
    assert any(0.1 < x["effective_confidence"] <= 0.2 and not x["pinned"] for x in live)
    assert len({round(x["effective_confidence"], 1) for x in live}) >= 5
    assert len({x["created_at"][:10] for x in lessons}) >= 10


def test_demo_slots_include_an_over_limit_letta_import(
    cli,  # noqa: ANN001
    tables: dict[str, list[dict]],
) -> None:
    slots = json.loads(cli("slot", "list", "--json"))
    assert len(slots) >= 4
    over = [s for s in slots if s["over_limit"]]
    sample = (ROOT / "data/samples/support-agent.af").read_text()
    assert any(json.dumps(s["label"]) in sample for s in over)
    imports = [a for a in tables["audit"] if a["action"] == "import"]
    assert imports and "support-agent.af" in imports[0]["summary"]


def test_demo_has_checkpoints(cli) -> None:  # noqa: ANN001
    assert len(cli("checkpoint", "list").splitlines()) >= 2


def test_demo_history_reads_in_time_order_and_ends_at_its_now(
    tables: dict[str, list[dict]],
) -> None:
    audit = sorted(tables["audit"], key=lambda a: a["seq"])
    stamps = [a["ts"] for a in audit]
    assert stamps == sorted(stamps)
    assert stamps[-1] <= "2026-11-20T12:00:00.000000Z"
    lessons = tables["lessons"]
    assert max(x["last_reinforced_at"] for x in lessons) <= "2026-11-20T12:00:00.000000Z"
