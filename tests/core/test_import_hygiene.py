"""core/ never imports textual: agents call the CLI on every step; the core stays UI-free."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import memwork.core
from tests.conftest import python_env

# One interpreter imports every module in turn and names the first one after
# which textual is loaded, so the test stays fast and still points at the culprit.
PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
    if any(m == "textual" or m.startswith("textual.") for m in sys.modules):
        print(name)
        break
"""


def _core_modules() -> list[str]:
    return ["memwork.core"] + [
        m.name for m in pkgutil.walk_packages(memwork.core.__path__, "memwork.core.")
    ]


def test_every_core_module_imports_without_textual() -> None:
    modules = _core_modules()
    assert len(modules) > 20
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *modules], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"importing {done.stdout.strip()} pulled in textual"


def test_cli_context_path_does_not_import_textual_or_pydantic(tmp_path) -> None:
    probe = (
        "import sys; from memwork.core.cli.main import main; "
        f"main(['--db', {str(tmp_path / 's')!r}, 'context']); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'textual', 'pydantic', 'rich'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=python_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("[]")
