"""``memwork --db DB ARGS`` run in this process, answered as ``subprocess.run`` answers.

For tests that run the CLI many times where the process boundary is not what they test:
an interpreter start-up costs far more than the call. Each call opens the store from its
files, as a new process does, so it meets whatever a test did to them on disk.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run(db: Path | str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Exit code, stdout and stderr of ``memwork --db DB ARGS`` with ``env`` set."""
    from memwork.core.doors.cli.main import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8")
    # As a process's own: stdout strict, stderr writing what it cannot encode escaped.
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace")
    argv = ["--db", str(db), *args]
    with _environ(env), contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's refusals
            code = exc.code if isinstance(exc.code, int) else 1
        stdout.flush()
        stderr.flush()
    return subprocess.CompletedProcess(argv, code, out.getvalue().decode(), err.getvalue().decode())
