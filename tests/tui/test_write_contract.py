"""A pane cannot reach a core write except by naming its operation.

``MemoryService.write`` takes an operation's name, never a function; the import
contracts in ``pyproject.toml`` (checked by ``make lint``) keep every workbench module
but ``tui.service`` from importing a core module that holds a write. This test keeps
those contracts whole: each writing operation's function lives in a module they forbid.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memwork.core.base.errors import InvalidInput
from memwork.core.ops.internal import INTERNAL, workbench_op
from memwork.core.ops.operations import OPERATIONS
from memwork.core.storage.store import Store
from memwork.tui.service import MemoryService

ROOT = Path(__file__).resolve().parents[2]


def _forbidden_to_the_workbench() -> set[str]:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"
    ]
    return {
        module
        for contract in contracts
        if contract["type"] == "forbidden" and contract["source_modules"] == ["memwork.tui"]
        for module in contract["forbidden_modules"]
    }


def test_every_module_holding_a_write_is_closed_to_the_panes() -> None:
    forbidden = _forbidden_to_the_workbench()
    writes = {
        f"memwork.core.{op.run.partition(':')[0]}" for op in (*OPERATIONS, *INTERNAL) if op.writes
    }
    open_to_panes = {
        module
        for module in writes
        if not any(module == f or module.startswith(f + ".") for f in forbidden)
    }
    assert not open_to_panes, f"add to the workbench's import contract: {sorted(open_to_panes)}"


def test_the_workbench_runs_operations_by_name_only(tmp_path: Path) -> None:
    service = MemoryService(Store(tmp_path / "db"))
    with pytest.raises(KeyError):
        service.write("no_such_operation")
    # The runner checks what a pane gives under the declared names, before any write.
    with pytest.raises(InvalidInput, match="name: is not a parameter of create_slot"):
        service.write("create_slot", name="persona")
    with pytest.raises(InvalidInput, match="must be an integer") as refused:
        service.write("create_slot", label="persona", limit="2000")
    assert refused.value.field == "limit"
    assert service.store.docs("slots") == {}
    # Its own operations are offered by no door.
    assert all(op not in OPERATIONS for op in INTERNAL)
    assert workbench_op("take_restore_point").doors == ("api",)
