"""Saving a context to a file the user names (the workbench's "save to file")."""

from __future__ import annotations

from pathlib import Path

from ...base.errors import InvalidInput
from ...storage.atomic import write_user_file


def target_path(path_text: str) -> Path:
    """The file ``path_text`` names (``~`` expanded, relative to the working folder),
    checked: not empty, not a folder, in a folder that exists."""
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
    return path


def save_text(path_text: str, text: str) -> Path:
    """Write ``text`` to a file (atomically); errors name the ``path`` field."""
    path = target_path(path_text)
    # Like `memwork export FILE`: an exclusive temp file, and only a regular file replaced.
    write_user_file(path, text.encode("utf-8"), field="path")
    return path
