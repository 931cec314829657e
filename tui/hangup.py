"""Leave when the terminal goes away.

Textual's input thread busy-loops once stdin reaches EOF (Textualize/textual
PR #6690, still open). A workbench whose terminal vanished without a SIGHUP
reaching it (an SSH connection that dropped, a killed tmux server, an app
started under make) would otherwise spin a core forever and keep polling the
store. The app watches its terminal and quits when it is gone.
"""

from __future__ import annotations

import os
import sys

#: How often the app checks that its terminal is still there.
CHECK_SECONDS = 1.0


def terminal_fd() -> int | None:
    """The file descriptor of the terminal the app reads keys from, if it has one."""
    stream = sys.__stdin__
    if stream is None:
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError):
        return None
    return fd if os.isatty(fd) else None


def terminal_gone(fd: int) -> bool:
    """True once the terminal behind ``fd`` has hung up (``isatty`` fails on a hung-up tty)."""
    return not os.isatty(fd)
