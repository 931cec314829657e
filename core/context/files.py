"""Saving a context to a file the user names (the workbench's "save to file")."""

from __future__ import annotations

from pathlib import Path

from core.errors import InvalidInput
from core.storage.atomic import write_user_file


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
    # Like `memwork export FILE`: an exclusive temp file, and only a regular file replaced.
    write_user_file(path, text.encode("utf-8"), field="path")
    return path
