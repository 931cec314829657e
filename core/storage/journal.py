"""Multi-file commits that survive a kill at any instant.

A commit writes every new file beside its target as a fsynced temp file,
then writes ``journal.json`` listing the renames (the commit point), then
renames. Recovery after a crash replays the journal; temp files that no
journal names belonged to an unacknowledged commit and are deleted. A commit
that fails before its journal (a full disk, a read-only folder) removes its
temp files at once.

A journal is only ever written by memwork, but it is a file on disk that
anyone who can write the folder can change, and replaying it renames and
deletes files. So before anything is replayed its shape and every name in it
are checked: each rename moves ``<target>.tmp-<tag>`` (a regular file, not a
link) onto ``<target>``, where the target is ``store.json``, ``store.log`` or a
table file;
each delete names a table file. Everything is a plain name inside the store
folder. A journal that breaks any rule is refused with one line, and nothing
is touched.
"""

from __future__ import annotations

import os
import re
import stat
from os.path import join

from ..base.errors import StoreUnreadable, StoreWriteFailed
from ..base.filepaths import StrPath
from .atomic import (
    TMP_MARK,
    atomic_write,
    failed_write,
    fsync_dir,
    sync_files,
    write_temp,
)
from .codec import dumps_small, loads, read_store_file
from .manifest import MANIFEST_NAME as MANIFEST_FILE
from .manifest import is_table_name

JOURNAL_NAME = "journal.json"
#: The write-ahead log (core/storage/wal.py): a fold replaces it with the table files.
LOG_FILE = "store.log"
_TAG = re.compile(r"[A-Za-z0-9_-]{1,100}")

Plan = tuple[list[tuple[str, str]], list[str]]


def commit(
    folder: StrPath,
    files: dict[str, bytes],
    deletes: list[str],
    txid: str,
    staged: dict[str, str] | None = None,
    *,
    staged_synced: bool = False,
) -> None:
    """Replace ``files`` (name → bytes) and delete ``deletes`` in ``folder`` atomically;
    ``staged`` names files already written beside their targets (final name → temp file,
    written with :func:`core.storage.atomic.write_temp`), renamed in with the rest
    (``staged_synced``: their writer fsynced them already)."""
    renames: list[list[str]] = [
        [os.path.basename(tmp), name] for name, tmp in (staged or {}).items()
    ]
    # Every temp file is on disk before the journal names it (from ``first`` on: those
    # before are staged files their writer fsynced, which must still be there).
    first = len(renames) if staged_synced else 0
    try:
        _present([join(folder, tmp) for tmp, _ in renames[:first]])
        for name, data in files.items():
            tmp = write_temp(join(folder, name), data, txid, sync=False)
            renames.append([os.path.basename(tmp), name])
        sync_files([join(folder, tmp) for tmp, _ in renames[first:]])
        atomic_write(
            join(folder, JOURNAL_NAME), dumps_small({"deletes": deletes, "renames": renames}), txid
        )
    except BaseException as exc:
        # Before the journal nothing is committed: the temps go now, not at the next open.
        for tmp_name, _ in renames:
            try:
                os.unlink(join(folder, tmp_name))
            except OSError:
                pass
        if isinstance(exc, OSError):
            raise failed_write(exc, f"the store at {folder}") from None
        raise
    _apply(folder, [(tmp, final) for tmp, final in renames], deletes)
    os.unlink(join(folder, JOURNAL_NAME))


def _present(paths: list[str]) -> None:
    """FileNotFoundError unless every file is there (a journal must not name a lost one)."""
    for path in paths:
        if not os.path.isfile(path):
            raise FileNotFoundError(2, "No such file or directory", path)


def _apply(folder: StrPath, renames: list[tuple[str, str]], deletes: list[str]) -> None:
    for tmp, final in renames:
        try:
            os.replace(join(folder, tmp), join(folder, final))
        except FileNotFoundError:
            pass  # already renamed by an earlier, interrupted replay
    for name in deletes:
        try:
            os.unlink(join(folder, name))
        except FileNotFoundError:
            pass
    fsync_dir(folder)


# -- checking a journal before it is replayed ----------------------------------------------
def is_table_file(name: object) -> bool:
    """Whether ``name`` can be a table file of a store (``<safe table name>.json``)."""
    if not isinstance(name, str) or not name.endswith(".json"):
        return False
    return is_table_name(name[: -len(".json")])


def _bad(path: str, reason: str) -> StoreUnreadable:
    return StoreUnreadable(
        f"{path} is not a valid memwork journal ({reason}); nothing was changed. "
        f"Move it out of the store to open the store as of its last complete commit"
    )


def _regular_or_missing(path: str) -> str | None:
    """None when ``path`` is a regular file or absent, else what it is."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    return "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"


def check_plan(folder: StrPath, plan: object) -> Plan:
    """The journal's renames and deletes, once every rule holds (else StoreUnreadable)."""
    path = join(folder, JOURNAL_NAME)
    if not isinstance(plan, dict) or set(plan) != {"deletes", "renames"}:
        raise _bad(path, 'expected an object with exactly "deletes" and "renames"')
    raw_renames, raw_deletes = plan["renames"], plan["deletes"]
    if not isinstance(raw_renames, list) or not isinstance(raw_deletes, list):
        raise _bad(path, '"deletes" and "renames" must be lists')
    renames: list[tuple[str, str]] = []
    targets: set[str] = set()
    for n, item in enumerate(raw_renames, start=1):
        if not (
            isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) for x in item)
        ):
            raise _bad(path, f"rename {n} must be a pair of file names")
        tmp, final = item
        if final not in (MANIFEST_FILE, LOG_FILE) and not is_table_file(final):
            raise _bad(
                path, f"rename {n} targets {final!r}, not store.json, store.log or a table file"
            )
        prefix = final + TMP_MARK
        if not tmp.startswith(prefix) or not _TAG.fullmatch(tmp[len(prefix) :]):
            raise _bad(path, f"rename {n} moves {tmp!r}, not a temp file of {final!r}")
        if final in targets:
            raise _bad(path, f"rename {n} targets {final!r} twice")
        targets.add(final)
        for name in (tmp, final):
            what = _regular_or_missing(join(folder, name))
            if what is not None:
                raise _bad(path, f"{name} is {what}")
        renames.append((tmp, final))
    deletes: list[str] = []
    for n, name in enumerate(raw_deletes, start=1):
        if not is_table_file(name):
            raise _bad(path, f"delete {n} names {name!r}, not a table file")
        what = _regular_or_missing(join(folder, name))
        if what is not None:
            raise _bad(path, f"{name} is {what}")
        deletes.append(name)
    return renames, deletes


def read_plan(folder: StrPath) -> Plan | None:
    """The pending journal's checked plan, or None when no commit is pending."""
    journal = join(folder, JOURNAL_NAME)
    # Asked on every read: a yes or no without raising costs a third less than an
    # lstat's FileNotFoundError. A journal that cannot be looked at (a folder this user
    # may not search) fails the read that follows, on the log.
    if not os.access(journal, os.F_OK, follow_symlinks=False):
        return None
    try:
        plan = loads(read_store_file(journal))
    except ValueError as exc:
        raise _bad(journal, f"not valid JSON: {exc}") from None
    return check_plan(folder, plan)


def recover(folder: StrPath) -> bool:
    """Finish a commit a crash interrupted; return whether there was one."""
    plan = read_plan(folder)
    if plan is None:
        return False
    renames, deletes = plan
    try:
        _apply(folder, renames, deletes)
        os.unlink(join(folder, JOURNAL_NAME))
    except OSError as exc:
        raise StoreWriteFailed(
            f"{join(folder, JOURNAL_NAME)} holds an interrupted commit that needs write access to "
            f"complete ({exc.strerror}); open the store once with write access"
        ) from None
    return True


def is_temp_name(name: str) -> bool:
    """Whether a file name is one of memwork's temp files."""
    return TMP_MARK in name


def remove_strays(folder: StrPath, candidates: list[str] | None = None) -> int:
    """Delete temp files of commits that never reached their journal.

    ``candidates`` are temp names already listed (from the scan done on open);
    without them the folder is scanned. Links and folders are never touched.
    """
    if candidates is None:
        candidates = [
            e.name
            for e in os.scandir(folder)
            if is_temp_name(e.name) and e.is_file(follow_symlinks=False)
        ]
    removed = 0
    for name in candidates:
        try:
            os.unlink(join(folder, name))
            removed += 1
        except FileNotFoundError:
            pass
    return removed
