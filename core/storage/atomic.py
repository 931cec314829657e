"""Durable file replacement: temp file in the same folder, flush, fsync, rename.

``MEMWORK_FSYNC=0`` skips the fsyncs (benchmarks report both figures; tests
that do not kill processes use it for speed). Rename stays atomic either way.
"""

from __future__ import annotations

import os
from pathlib import Path

TMP_MARK = ".tmp-"


def fsync_enabled() -> bool:
    """Whether writes are flushed to the disk before they are acknowledged."""
    return os.environ.get("MEMWORK_FSYNC", "1") != "0"


def write_temp(path: Path, data: bytes, tag: str) -> Path:
    """Write ``data`` to a temp file beside ``path`` and fsync it; return the temp path."""
    tmp = path.with_name(f"{path.name}{TMP_MARK}{tag}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if fsync_enabled():
            os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def fsync_dir(folder: Path) -> None:
    """Make renames inside ``folder`` durable."""
    if not fsync_enabled():
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, tag: str) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new bytes, never a mix."""
    tmp = write_temp(path, data, tag)
    os.replace(tmp, path)
    fsync_dir(path.parent)
