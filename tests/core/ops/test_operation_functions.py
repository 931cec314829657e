"""An operation's function is found by name, and found whole even while another
thread is importing its module: a server's first calls arrive side by side."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from memwork.core.ops.runner import function


def test_a_module_another_thread_is_importing_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "slowpkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    # The module's body stops half way until told to go on: the function the call asks
    # for is defined after that point.
    (package / "slow.py").write_text(
        "import builtins\n"
        "builtins.slow_started.set()\n"
        "builtins.slow_go_on.wait(10)\n"
        "def answer():\n"
        "    return 42\n"
    )
    import builtins

    started, go_on = threading.Event(), threading.Event()
    monkeypatch.setattr(builtins, "slow_started", started, raising=False)
    monkeypatch.setattr(builtins, "slow_go_on", go_on, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("slowpkg", "slowpkg.slow"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    first: list[object] = []
    importing = threading.Thread(target=lambda: first.append(function("slow:answer", "slowpkg")))
    importing.start()
    assert started.wait(10)  # the other thread is inside the module's body now
    found: list[object] = []
    failed: list[BaseException] = []

    def second_call() -> None:
        try:
            found.append(function("slow:answer", "slowpkg"))
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    asking = threading.Thread(target=second_call)
    asking.start()
    asking.join(0.2)
    assert asking.is_alive()  # waiting for the import, not reading the half-made module
    go_on.set()
    asking.join(10)
    importing.join(10)
    assert not failed
    assert [f() for f in found] == [42]  # type: ignore[operator]
    assert [f() for f in first] == [42]  # type: ignore[operator]
