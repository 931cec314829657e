"""Copying text out of the workbench, and saying honestly what happened.

The terminal's clipboard (OSC 52) works over SSH but cannot confirm anything:
the terminal may ignore it (tmux does unless ``set-clipboard`` is on). So the
text also goes to the local clipboard tool when one is found on PATH for the
session we run in (``wl-copy`` under Wayland, ``xclip`` / ``xsel`` under X,
``pbcopy`` on macOS, ``clip.exe`` under WSL), and the message names what was
used, or how to enable OSC 52 when it was all there was.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping

#: (program, arguments, environment variable that must be set for it to make sense)
LOCAL_TOOLS: tuple[tuple[str, tuple[str, ...], str | None], ...] = (
    ("wl-copy", (), "WAYLAND_DISPLAY"),
    ("xclip", ("-selection", "clipboard"), "DISPLAY"),
    ("xsel", ("--clipboard", "--input"), "DISPLAY"),
    ("pbcopy", (), "darwin"),
    ("clip.exe", (), None),
)
#: Seconds a local tool may take (they return at once; a stuck one must not hang us).
TOOL_TIMEOUT = 3.0


def local_tool(
    env: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    platform: str = sys.platform,
) -> list[str] | None:
    """The command line of the local clipboard tool for this session, or None."""
    env = os.environ if env is None else env
    for program, args, needs in LOCAL_TOOLS:
        if needs == "darwin":
            if platform != "darwin":
                continue
        elif needs is not None and not env.get(needs):
            continue
        path = which(program)
        if path:
            return [path, *args]
    return None


def copy_locally(text: str, command: list[str]) -> str | None:
    """Give ``text`` to a local clipboard tool; None when it took it, else why not."""
    try:
        done = subprocess.run(
            command,
            input=text.encode("utf-8"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=TOOL_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc) or type(exc).__name__
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return error[-1] if error else f"exit status {done.returncode}"
    return None


def tool_name(command: list[str]) -> str:
    """``wl-copy`` from ``/usr/bin/wl-copy``."""
    return os.path.basename(command[0])


def report(what: str, tool: str | None, error: str | None, in_tmux: bool) -> tuple[str, str]:
    """(title, message) of the toast after a copy of ``what`` ("3,985 characters")."""
    if tool is not None and error is None:
        return (
            "Copied",
            f"{what} copied with {tool} (and sent to the terminal's clipboard, OSC 52)",
        )
    hint = (
        "in tmux: set -g set-clipboard on"
        if in_tmux
        else "your terminal must allow OSC 52 clipboard writes"
    )
    failed = f" {tool} failed: {error}." if tool is not None else ""
    return (
        "Sent to the terminal",
        f"{what} sent to the terminal's clipboard (OSC 52), which cannot confirm it.{failed} "
        f"If nothing arrived: {hint}.",
    )
