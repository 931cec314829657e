"""Saving a context to a file the user names (the workbench's "save to file")."""

from __future__ import annotations

from pathlib import Path

from core.errors import InvalidInput
from core.storage.atomic import atomic_write


def save_text(path_text: str, text: str) -> Path:
    """Write ``text`` to a file (atomically); errors name the ``path`` field."""
    raw = path_text.strip()
    if not raw:
        raise InvalidInput("path", "enter a file path")
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    if path.is_dir():
        raise InvalidInput("path", f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise InvalidInput("path", f"folder {path.parent} does not exist")
    try:
        atomic_write(path, text.encode("utf-8"), "context")
    except OSError as exc:
        raise InvalidInput("path", f"cannot write {path}: {exc.strerror or exc}") from None
    return path
