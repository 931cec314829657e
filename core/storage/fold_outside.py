"""A fold whose heavy part runs while the store's lock is free.

A fold writes the log's records into the table files. Done whole under the lock it
held every writer up for its encoding, its reads of the table files and its fsyncs
(tens of milliseconds with eight writers: about a third of each commit's share of
the lock). Here it takes three steps:

1. under the lock, a :class:`FoldPlan` notes the manifest the log follows, the
   records it holds and where the last of them ends;
2. without the lock, each table those records touched is written beside its file,
   as a temp file, and fsynced (:func:`prepare`); writers go on appending meanwhile;
3. under the lock again, if the log is still the one the plan read, the fold
   commits through the journal as any fold does: ``store.json`` at the plan's
   head, the temp files renamed in, and a new log that starts with the bytes of the
   records appended since step 1, copied as they are (their checksums cover their
   commit numbers, which follow the plan's head).

Anything else (another process folded meanwhile, a table file that changed or
cannot be read, a temp file a newly opened process swept away) drops the plan and
its temp files: the caller then folds under the lock, the old way, which also
handles damage. Until step 3 commits, nothing names the temp files, so a crash
leaves only strays the next open removes.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from ..base.errors import StoreError, StoreUnreadable
from .atomic import TMP_MARK, sync_files, write_temp
from .backend import Commit, replay, table_writes
from .codec import loads, read_store_file, table_bytes
from .manifest import MANIFEST_NAME, Manifest, table_file
from .table_sums import checksum

if TYPE_CHECKING:
    from .backend import Docs

TAG = "fold"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: A plan's claim is taken over once it is this old (its process died preparing it).
CLAIM_SECONDS = 60.0


def _claim_path(folder: str, ident: object) -> str:
    return os.path.join(folder, f"{MANIFEST_NAME}{TMP_MARK}{TAG}-plan-{_key(ident)}")


def claimed(folder: str, ident: object) -> bool:
    """Whether another process holds a live claim on the fold of the log ``ident``
    names (one stat). A commit past the log's limits then asks for no fold of its own:
    with eight writers, each would otherwise wake its fold to take the lock, find the
    claim and give up, a dozen times for every fold."""
    try:
        mtime = os.stat(_claim_path(folder, ident), follow_symlinks=False).st_mtime
    except OSError:
        return False
    return time.time() - mtime < CLAIM_SECONDS


def claim(folder: str, ident: object) -> str | None:
    """Claim the fold of the log ``ident`` names, with the lock held; the claim's path,
    or None while another process prepares that fold. Every commit past the log's
    limits asks for a fold, so eight writers would otherwise all prepare one at once,
    and all but one throw theirs away. The claim is a temp file (the next open of the
    store removes one a crash left behind)."""
    path = _claim_path(folder, ident)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    except FileExistsError:
        if claimed(folder, ident):  # live; one let go in between, or a dead one, is taken
            return None
        try:
            os.unlink(path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        except OSError:
            return None
    os.close(fd)
    return path


def being_prepared(name: str, mtime: float) -> bool:
    """Whether a file in the store folder is a fold's, written in the last minute: one
    a process is preparing now without the lock (``doctor`` does not call it stray)."""
    return f"{TMP_MARK}{TAG}-" in name and time.time() - mtime < CLAIM_SECONDS


def _key(ident: object) -> str:
    return "-".join(str(part) for part in ident) if isinstance(ident, tuple) else str(ident)


def let_go(path: str) -> None:
    """Remove a claim (its fold committed, or was dropped)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class FoldPlan:
    """What step 1 saw, and what step 2 wrote for step 3."""

    __slots__ = ("base", "records", "ident", "end", "target", "staged", "sums", "claim")

    def __init__(self, base: Manifest, records: list[Commit], ident: object, end: int) -> None:
        #: The manifest the log follows, and the records it held then.
        self.base = base
        self.records = records
        #: The log's identity (a fold by anyone replaces the file) and the end of the
        #: last of those records: what was appended after it goes into the new log.
        self.ident = ident
        self.end = end
        #: The head once the records are folded.
        self.target = _head(base, records)
        #: Table file → its temp file, and each written table's checksum.
        self.staged: dict[str, str] = {}
        self.sums: dict[str, str] = {}
        #: This process's claim on the fold (:func:`claim`).
        self.claim: str | None = None

    def discard(self) -> None:
        """Remove the temp files and the claim (the plan is dropped, or committed)."""
        if self.claim is not None:
            let_go(self.claim)
            self.claim = None
        for path in self.staged.values():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self.staged.clear()

    def manifest(self) -> Manifest:
        """``store.json`` once the fold commits: the target head, with the checksums of
        the tables it wrote and those of the tables it left alone."""
        written = {n for c in self.records for n in (*c.writes, *c.drops)}
        sums = {
            n: s
            for n, s in self.base.checksums.items()
            if n in self.target.tables and n not in written
        }
        sums.update(self.sums)
        self.target.checksums = sums
        return self.target

    def deletes(self) -> list[str]:
        """The table files of tables the records dropped."""
        return [table_file(n) for n in self.base.tables if n not in self.target.tables]


def _head(base: Manifest, records: list[Commit]) -> Manifest:
    from .wal import head_after

    return head_after(base, records)


class Changed(StoreError):
    """A table file is not the one the plan's manifest lists (another fold replaced it,
    or it is damaged): the plan is dropped."""


def prepare(folder: str, plan: FoldPlan) -> None:
    """Step 2: write and fsync the plan's tables beside their files (no lock held).

    Reads only what ``plan.base`` lists; raises :class:`Changed` when a table file is
    not that one any more, OSError when a file cannot be written (the plan's temp
    files are removed either way)."""
    try:
        names: dict[str, None] = {}
        for commit in plan.records:
            names.update(dict.fromkeys(commit.writes))
        for name in names:
            version = plan.target.tables.get(name)
            if version is None:
                continue  # dropped by a later record
            data = _table(folder, plan, name, version)
            path = write_temp(os.path.join(folder, table_file(name)), data, TAG, sync=False)
            plan.staged[table_file(name)] = path
            plan.sums[name] = checksum(data)
        sync_files(list(plan.staged.values()))
    except BaseException:
        plan.discard()
        raise


def _table(folder: str, plan: FoldPlan, name: str, version: int) -> bytes:
    """Table ``name``'s new file: its file at the plan's manifest with the records'
    writes applied (only those after the last that replaced it)."""
    writes = table_writes(plan.records, name)
    for i in range(len(writes) - 1, -1, -1):
        if writes[i].replace:
            writes = writes[i:]
            break
    before = plan.base.tables.get(name)
    if writes[0].replace or before is None:
        return table_bytes(name, replay(writes, dict), version)
    raw, docs = _read(folder, plan.base, name)
    touched = {i for write in writes for i in write.put_ids}
    return table_bytes(
        name,
        replay(writes, lambda: docs),
        version,
        before=raw,
        before_docs=docs,
        before_version=before,
        touched=touched,
    )


def _read(folder: str, base: Manifest, name: str) -> tuple[bytes, Docs]:
    """Table ``name``'s file as ``base`` lists it (Changed when it is not that file)."""
    try:
        raw = read_store_file(os.path.join(folder, table_file(name)))
    except (OSError, StoreUnreadable) as exc:
        raise Changed(name) from exc
    expected = base.checksums.get(name)
    if expected is not None and checksum(raw) != expected:
        raise Changed(name)
    try:
        data = loads(raw)
    except ValueError:
        raise Changed(name) from None
    if (
        not isinstance(data, dict)
        or data.get("table") != name
        or data.get("version") != base.tables.get(name)
        or not isinstance(data.get("documents"), dict)
    ):
        raise Changed(name)
    docs: Docs = data["documents"]
    return raw, docs
