"""A workbench whose terminal goes away quits instead of spinning a core forever."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memwork.tui import hangup
from tests.conftest import python_env

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals only")


def test_terminal_gone_once_the_other_end_closes() -> None:
    master, slave = os.openpty()
    try:
        assert not hangup.terminal_gone(slave)
        os.close(master)
        assert hangup.terminal_gone(slave)
    finally:
        os.close(slave)


def _read_until(fd: int, needle: bytes, seconds: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + seconds
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536)
            except OSError:
                break
    return seen


@pytest.mark.slow
def test_the_workbench_quits_when_its_terminal_hangs_up(demo_path: Path) -> None:
    # No controlling terminal, so no SIGHUP arrives when the terminal closes: the
    # case (an SSH drop, a killed tmux, make in between) where Textual would spin.
    master, slave = os.openpty()
    env = python_env(TERM="xterm-256color", COLUMNS="100", LINES="30")
    child = subprocess.Popen(
        [sys.executable, "-m", "memwork", "--db", str(demo_path)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    try:
        screen = _read_until(master, b"Sessions", 20)
        assert b"Sessions" in screen, screen[-500:]
        assert child.poll() is None
        os.close(master)
        master = -1
        # A bound for a spinning process, not a timing expectation (the check runs every
        # CHECK_SECONDS; a loaded machine may run it late).
        code = child.wait(timeout=120)
        assert code == hangup.HANGUP_STATUS
    finally:
        if master >= 0:
            os.close(master)
        if child.poll() is None:
            child.kill()
            child.wait()
