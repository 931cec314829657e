"""Names that end up inside file names: one rule, checked on every way in.

Some identifiers become part of a path: a session id names the tables
``observations.<id>`` and ``working_memory.<id>`` (files in the store folder),
a checkpoint id names the folder ``snapshots/<id>/``. A hostile or careless
value (``..``, ``/etc``, a NUL) must never get that far, whichever door it
comes through: the CLI, an import, a replayed journal, the MCP server.

Two strengths of check:

* :func:`check_id` is the rule for a *new* identifier that will name a file:
  letters, digits and ``_ - . : @``, at most :data:`ID_MAX` characters,
  starting with a letter or digit (never a dot, never something that reads as
  a command-line flag), no ``..``. Ordinary agent ids (``run-42``,
  ``agent@host:7``, ``ses_01J…``) pass; anything else is refused with exit
  code 2 and a message naming the field and the rule.
* :func:`check_file_name` is the storage layer's last guard, applied to every
  table name before it becomes a path and to every name read back from the
  store's own files (``store.json``, ``journal.json``, ``snapshot.json``):
  it refuses only what is unsafe in a file name (separators, NUL and other
  control characters, a leading dot, over-long names), so a store written by
  an older memwork with unusual but harmless names still opens.

:func:`inside` is the belt to those braces: a resolved path must stay under
the folder it was built from.
"""

from __future__ import annotations

import os
import re

from .errors import InvalidInput

# Not `typing.TYPE_CHECKING`: the CLI imports this module on every call; TypeGuard
# is only an annotation.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeGuard

    from .filepaths import StrPath

#: Longest identifier that may name a file (a table file adds a prefix and ``.json``).
ID_MAX = 128
ID_RULE = (
    f"must be 1-{ID_MAX} letters, digits or _ - . : @, starting with a letter or digit, "
    "without '..'"
)
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-.:@]*")

#: Longest table name (file names stop at 255 bytes; ``.json`` and temp suffixes follow).
FILE_NAME_MAX = 200
FILE_NAME_RULE = (
    f"must be a plain file name: 1-{FILE_NAME_MAX} characters, no / or \\, "
    "no control characters, not starting with a dot"
)
# Control characters (C0, DEL, C1) and both separators.
_UNSAFE_IN_FILE_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f/\\]")


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_id(value: object, field: str, what: str = "") -> str:
    """``value`` if it may name a file, else :class:`InvalidInput` naming ``field``.

    ``what`` starts the rule when the field alone does not say what is wrong
    (``"a new session id"`` → "session: a new session id must be …").
    """
    if (
        not isinstance(value, str)
        or len(value) > ID_MAX
        or not _ID.fullmatch(value)
        or ".." in value
    ):
        lead = f"{what} " if what else ""
        raise InvalidInput(field, f"{lead}{ID_RULE} (got {_shown(value)})")
    return value


def is_safe_file_name(name: object) -> TypeGuard[str]:
    """Whether ``name`` is one plain, visible file name (no path, no control characters)."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= FILE_NAME_MAX
        and not name.startswith(".")
        and _UNSAFE_IN_FILE_NAME.search(name) is None
    )


def check_file_name(name: object, field: str = "table") -> str:
    """``name`` if :func:`is_safe_file_name`, else :class:`InvalidInput` naming ``field``."""
    if not is_safe_file_name(name):
        raise InvalidInput(field, f"{FILE_NAME_RULE} (got {_shown(name)})")
    return name


def inside(folder: StrPath, path: StrPath) -> bool:
    """Whether ``path`` resolves to somewhere under ``folder`` (symlinks followed)."""
    base = os.path.realpath(folder)
    target = os.path.realpath(path)
    return os.path.commonpath([base, target]) == base and target != base
