"""bench/bench_fleet.py --breakdown: where a fleet writer's CPU goes, the figures the
fleet's documentation quotes. Run small (two writers, a few commits, one round)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_fleet.py"


@pytest.mark.slow
def test_the_breakdown_names_each_part_and_they_add_up_to_no_more_than_the_whole() -> None:
    out = subprocess.run(
        [sys.executable, str(BENCH), "--writers", "2", "--calls", "6", "--rounds", "1"]
        + ["--breakdown"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MEMWORK_FSYNC": "0", "FLEET_FSYNC": "0"},
        check=True,
    ).stdout
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("| round | user |"))
    assert "catching up while waiting" in header and "writing the commit" in header
    row = lines[lines.index(header) + 2]
    cells = [float(c) for c in row.strip("|").split("|")[1:]]
    user, system, *parts, rest = cells
    assert user > 0 and all(p >= 0 for p in parts)
    assert parts[-1] > 0  # every writer wrote its commits
    # Each of the seven figures is printed rounded to 0.01: together they may be 0.035 off.
    assert rest == pytest.approx(user + system - sum(parts), abs=0.036)
