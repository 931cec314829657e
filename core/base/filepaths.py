"""The type of a file or folder argument, as text or a path object.

Paths on the agents' per-step paths are handled as text (``os.path``): pathlib
brings urllib.parse and ipaddress with it, ~3 ms of every CLI call.
"""

from __future__ import annotations

import os  # noqa: F401 - named by the alias below

# Not `typing.TYPE_CHECKING`: every CLI call imports this module, and typing is not free.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

StrPath: TypeAlias = "str | os.PathLike[str]"
