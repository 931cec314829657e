"""Multi-file commits that survive a kill at any instant.

A commit writes every new file beside its target as a fsynced temp file,
then writes ``journal.json`` listing the renames (the commit point), then
renames. Recovery after a crash replays the journal; temp files that no
journal names belonged to an unacknowledged commit and are deleted.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.storage.atomic import TMP_MARK, atomic_write, fsync_dir, write_temp
from core.storage.codec import dumps, load_file

JOURNAL_NAME = "journal.json"


def commit(folder: Path, files: dict[str, bytes], deletes: list[str], txid: str) -> None:
    """Replace ``files`` (name → bytes) and delete ``deletes`` in ``folder`` atomically."""
    renames = []
    for name, data in files.items():
        tmp = write_temp(folder / name, data, txid)
        renames.append([tmp.name, name])
    atomic_write(folder / JOURNAL_NAME, dumps({"deletes": deletes, "renames": renames}), txid)
    _apply(folder, renames, deletes)
    (folder / JOURNAL_NAME).unlink()


def _apply(folder: Path, renames: list[list[str]], deletes: list[str]) -> None:
    for tmp, final in renames:
        try:
            os.replace(folder / tmp, folder / final)
        except FileNotFoundError:
            pass  # already renamed by an earlier, interrupted replay
    for name in deletes:
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            pass
    fsync_dir(folder)


def recover(folder: Path) -> bool:
    """Finish a commit a crash interrupted; return whether there was one."""
    journal = folder / JOURNAL_NAME
    if not journal.exists():
        return False
    plan = load_file(journal)
    _apply(folder, plan.get("renames", []), plan.get("deletes", []))
    journal.unlink()
    return True


def remove_strays(folder: Path) -> int:
    """Delete temp files of commits that never reached their journal."""
    removed = 0
    for entry in os.scandir(folder):
        if TMP_MARK in entry.name and entry.is_file():
            os.unlink(entry.path)
            removed += 1
    return removed
