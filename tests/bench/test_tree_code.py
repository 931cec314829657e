"""A baseline tree is measured only when its interpreter runs the tree's own code."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from tree_code import code_of, require_own_code, require_this_tree  # noqa: E402


def test_this_tree_runs_its_own_code() -> None:
    assert code_of(sys.executable) == (ROOT / "core").resolve()
    require_own_code(ROOT, sys.executable)  # no exit


def test_a_tree_whose_venv_is_this_ones_is_refused_naming_the_code_it_would_run(
    tmp_path: Path,
) -> None:
    """The shortcut that fooled a comparison: a checkout with this tree's .venv linked in,
    run with PYTHONPATH at the checkout, imports ``memwork`` from the checkout and
    ``memwork.core`` from this tree."""
    tree = tmp_path / "old"
    shutil.copytree(ROOT / "memwork", tree / "memwork")
    (tree / "core").mkdir()
    (tree / ".venv").symlink_to(Path(sys.executable).parents[1])
    env = {**os.environ, "PYTHONPATH": str(tree)}
    with pytest.raises(SystemExit) as refused:
        require_own_code(tree, tree / ".venv" / "bin" / "python", env)
    message = str(refused.value)
    assert str((ROOT / "core").resolve()) in message and "its own .venv" in message


def test_an_interpreter_without_memwork_is_named() -> None:
    base = getattr(sys, "_base_executable", "")
    if not base or base == sys.executable:
        pytest.skip("no interpreter apart from this environment's")
    with pytest.raises(SystemExit, match="cannot import memwork.core"):
        code_of(base, {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})


def test_a_bench_run_with_another_checkouts_code_says_so(tmp_path: Path) -> None:
    """The in-process check the recall bench makes as it starts: this tree passes, and a
    checkout whose bench this process is not running (its code came from here) exits."""
    import memwork.core  # noqa: F401 - the check reads it from sys.modules

    require_this_tree(ROOT)  # no exit
    with pytest.raises(SystemExit, match="memwork.core came from"):
        require_this_tree(tmp_path)
