"""Leave when the terminal goes away.

Textual's input thread busy-loops once stdin reaches EOF (Textualize/textual
PR #6690, still open). A workbench whose terminal vanished without a SIGHUP
reaching it (an SSH connection that dropped, a killed tmux server, an app
started under make) would otherwise spin a core forever and keep polling the
store. The app watches its terminal and quits when it is gone.

Quitting has its own trap: Textual's output thread dies on the first write to
a hung-up terminal, and once its small queue is full the shutdown's own writes
block forever. So the app points the standard streams at the null device
before it exits, and a watchdog ends the process if the shutdown still hangs.
Ending it that way is as safe as a kill: every store write is atomic.

The same trap can close before the app looks: a screen that refreshes often
(a timer, a progress bar) fills that queue within a second of the hang-up, and
the event loop then blocks on its next frame, so a check the loop runs would
never run again. The terminal is therefore watched by a thread of its own.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable

#: How often the app checks that its terminal is still there.
CHECK_SECONDS = 1.0

#: How long a shutdown after a hang-up may take before the watchdog ends the process.
SHUTDOWN_GRACE_SECONDS = 2.0

#: The name Textual gives the thread that writes to the terminal.
OUTPUT_THREAD = "textual-output"

#: The exit status of a workbench whose terminal hung up (128 + SIGHUP).
HANGUP_STATUS = 129


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


def silence_terminal() -> None:
    """Point stdin, stdout and stderr at the null device, so that writes no longer fail."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    finally:
        os.close(null)


def exit_if_shutdown_hangs(seconds: float = SHUTDOWN_GRACE_SECONDS) -> None:
    """End the process with :data:`HANGUP_STATUS` unless it has exited within ``seconds``.

    When Textual's output thread is already gone the shutdown cannot finish, so
    the process ends at once.
    """
    if not any(thread.name == OUTPUT_THREAD for thread in threading.enumerate()):
        os._exit(HANGUP_STATUS)
    timer = threading.Timer(seconds, os._exit, args=(HANGUP_STATUS,))
    timer.daemon = True
    timer.start()


def watch(fd: int, on_gone: Callable[[], object], every: float = CHECK_SECONDS) -> threading.Event:
    """Check every ``every`` seconds, in a daemon thread, whether the terminal behind ``fd``
    has hung up; once it has, silence the standard streams, arm the shutdown watchdog and
    call ``on_gone`` (from that thread: it must hand the exit to the app's loop).

    Returns the event that stops the watch: set it when the app is gone, so that a
    process which goes on after the app is never ended by its watchdog."""
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(every):
            if terminal_gone(fd):
                silence_terminal()
                exit_if_shutdown_hangs()
                on_gone()
                return

    threading.Thread(target=run, name="memwork-hangup", daemon=True).start()
    return stop
