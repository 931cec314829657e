"""A folder store's ``store.json`` rebuilt from the table files on disk.

Only a repair uses it (``checkpoint restore``, which replaces every table it can): a
table file names its table and its version itself, so what the manifest listed can be
read back from the files, all but the checksums, which the repair's fold writes anew.
A table file that cannot be read is listed with a version no file holds, so the repair
finds it damaged and moves it aside like any other.
"""

from __future__ import annotations

import os

from ..base.errors import StoreUnreadable
from . import journal, schema
from .codec import load_file
from .manifest import Manifest, is_table_name

#: The version listed for a table file that cannot be read: no file holds it.
UNREADABLE = -1


def rebuild(folder: str, log_base: int | None) -> Manifest:
    """The manifest the table files in ``folder`` describe; ``log_base``: the commit
    ``store.log``'s header names (None when it cannot be read), which the commit counter
    must not fall behind."""
    tables: dict[str, int] = {}
    for entry in os.scandir(folder):
        name = entry.name
        if not entry.is_file(follow_symlinks=False) or journal.is_temp_name(name):
            continue
        if not journal.is_table_file(name) or not is_table_name(name[: -len(".json")]):
            continue
        table = name[: -len(".json")]
        try:
            data = load_file(entry.path)
        except StoreUnreadable:
            data = None
        version = data.get("version") if isinstance(data, dict) else None
        ok = isinstance(data, dict) and data.get("table") == table and type(version) is int
        tables[table] = version if ok and isinstance(version, int) else UNREADABLE
    generation = max([0, log_base or 0, *tables.values()])
    return Manifest(schema_version=schema.SCHEMA_VERSION, generation=generation, tables=tables)
