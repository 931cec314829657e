"""Which checkout's code a baseline tree's interpreter runs.

The benchmarks that measure another checkout beside this one (``--baseline TREE``) run
``TREE/.venv/bin/python``, with ``PYTHONPATH=TREE`` where they import it. A ``.venv``
made for that tree (``make -C TREE .venv/.installed``) maps ``memwork.core`` to
``TREE/core``. A ``.venv`` that is another checkout's (a symbolic link to this one's,
which saves the install) maps it to that checkout's ``core/``: ``memwork`` then comes
from ``TREE`` and ``memwork.core`` from the other checkout, and the "baseline" runs
this tree's code without a word. :func:`require_own_code` refuses such a tree.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

_ASK = "import memwork.core as c; print(c.__file__)"


def python_of(tree: Path) -> Path:
    """``tree``'s own interpreter (its ``.venv``)."""
    return tree / ".venv" / "bin" / "python"


def code_of(python: str | Path, env: Mapping[str, str] | None = None) -> Path:
    """The folder of the ``memwork.core`` that ``python`` imports (under ``env``)."""
    done = subprocess.run(
        [str(python), "-c", _ASK], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no error text"])[-1]
        raise SystemExit(f"{python} cannot import memwork.core: {last}")
    return Path(done.stdout.strip()).resolve().parent


def require_own_code(tree: Path, python: str | Path, env: Mapping[str, str] | None = None) -> None:
    """Exit with a message unless ``python`` (under ``env``) runs ``tree``'s own code."""
    found = code_of(python, env)
    if not found.is_relative_to(tree.resolve()):
        raise SystemExit(
            f"{tree}: its interpreter {python} runs the memwork.core of {found}, not the "
            f"tree's own, so it would measure that code as the baseline; give the tree "
            f"its own .venv (make -C {tree} .venv/.installed)"
        )


def require_this_tree(root: Path) -> None:
    """Exit with a message unless this process imported ``root``'s own ``memwork.core``
    (a bench run in a checkout whose ``.venv`` is another's measures the other's code)."""
    core = sys.modules.get("memwork.core")
    found = Path(core.__file__ or "").resolve().parent if core is not None else None
    if found is not None and not found.is_relative_to(root.resolve()):
        raise SystemExit(
            f"this bench is {root}'s, but memwork.core came from {found}: give the tree "
            f"its own .venv (make -C {root} .venv/.installed)"
        )
