"""Durable file replacement: temp file in the same folder, flush, fsync, rename.

Temp files are created exclusively (``O_EXCL``, ``O_NOFOLLOW``) under a name
with a random part, so a file or symbolic link planted at a predictable temp
name is never followed or overwritten; a write that fails removes its temp
file at once. Store files are created private (``0600``; folders ``0700``):
the mode is given to ``open`` itself, so no umask makes them readable by
others, and a rename keeps the mode of the file it moves.

``MEMWORK_FSYNC=0`` skips the fsyncs (benchmarks report both figures; tests
that do not kill processes use it for speed). Rename stays atomic either way.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from ..base.errors import InvalidInput, StoreError, StoreWriteFailed

if TYPE_CHECKING:
    from ..base.filepaths import StrPath

TMP_MARK = ".tmp-"
FILE_MODE = 0o600
DIR_MODE = 0o700
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_CREATE |= getattr(os, "O_CLOEXEC", 0)

#: Write failures that are the user's to fix (space, quota, permissions): exit code 2.
USER_ERRNOS = frozenset(
    getattr(errno, name)
    for name in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EACCES", "EPERM")
    if hasattr(errno, name)
)


def fsync_enabled() -> bool:
    """Whether writes are flushed to the disk before they are acknowledged."""
    return os.environ.get("MEMWORK_FSYNC", "1") != "0"


def random_tag() -> str:
    """A short random suffix that makes a temp name unguessable."""
    return os.urandom(6).hex()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unlink_quietly(path: StrPath) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_new(path: StrPath, data: bytes, mode: int = FILE_MODE, *, sync: bool = True) -> None:
    """Create ``path`` (which must not exist) holding ``data``, fsynced unless ``sync`` is
    False (the caller then calls :func:`sync_files`); removed on failure."""
    fd = os.open(path, _CREATE, mode)
    try:
        _write_all(fd, data)
        if sync and fsync_enabled():
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink_quietly(path)
        raise
    os.close(fd)


def sync_files(paths: list[str]) -> None:
    """fsync files written with ``sync=False``.

    Written first and flushed together, many files cost about one journal commit
    of the file system instead of one each: the first fsync commits what all of
    them changed, and the rest find nothing left to do.
    """
    if not fsync_enabled():
        return
    for path in paths:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_temp(path: StrPath, data: bytes, tag: str, *, sync: bool = True) -> str:
    """Write ``data`` to a new temp file beside ``path`` (fsynced unless ``sync`` is False);
    return the temp path.

    The name is ``<name>.tmp-<tag>-<random>``: the journal names it, and stray
    ones (a commit killed before its journal) are recognised by the mark.
    """
    tmp = f"{os.fspath(path)}{TMP_MARK}{tag}-{random_tag()}"
    write_new(tmp, data, sync=sync)
    return tmp


def folder_of(path: StrPath) -> str:
    """The folder ``path`` is in (``.`` for a bare file name)."""
    return os.path.dirname(os.fspath(path)) or "."


def absolute_folder(path: str) -> str:
    """``path`` with ``~`` expanded, made absolute, as ``Path(path).expanduser().absolute()``
    writes it (``.`` parts and repeated separators dropped, ``..`` kept), without pathlib."""
    path = os.path.expanduser(path)
    if os.name != "posix":  # pragma: no cover - Windows paths have drives and two separators
        from pathlib import Path

        return str(Path(path).absolute())
    if not path.startswith("/"):
        path = os.path.join(os.getcwd(), path)
    # POSIX keeps exactly two leading slashes ("//host/share"); more become one.
    lead = "//" if path.startswith("//") and not path.startswith("///") else "/"
    return lead + "/".join(part for part in path.split("/") if part and part != ".")


def parents(path: str) -> list[str]:
    """The folders ``path`` is inside, nearest first (as ``Path.parents``, for an
    absolute path)."""
    out = []
    parent = os.path.dirname(path)
    while parent != path:
        out.append(parent)
        path, parent = parent, os.path.dirname(parent)
    return out


def fsync_dir(folder: StrPath) -> None:
    """Make renames inside ``folder`` durable."""
    if not fsync_enabled():
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: StrPath, data: bytes, tag: str) -> None:
    """Replace ``path`` with ``data`` so readers see the old or the new bytes, never a mix."""
    tmp = write_temp(path, data, tag)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    fsync_dir(folder_of(path))


def failed_write(exc: OSError, what: object) -> StoreError:
    """The one-line error for a write the system refused (exit 2 when it is the user's to fix)."""
    kind = StoreWriteFailed if exc.errno in USER_ERRNOS else StoreError
    return kind(f"cannot write {what}: {exc.strerror or exc}; nothing was written")


def check_user_file(path: StrPath, field: str = "FILE") -> os.stat_result | None:
    """What is at ``path`` now (None: nothing), when it may be replaced by a new file.

    Only a regular file is ever replaced: a folder, a device or a symbolic link
    is refused (exit code 2), because renaming over it would destroy it or
    write somewhere the user did not name.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not os.path.isdir(folder_of(path)):
            raise InvalidInput(field, f"cannot write {path}: its folder does not exist") from None
        return None
    except OSError as exc:
        raise InvalidInput(field, f"cannot write {path}: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "a symbolic link"
            if stat.S_ISLNK(st.st_mode)
            else "a device or another special file"
        )
        raise InvalidInput(field, f"{path} is {kind}, not a regular file; name a file to write")
    return st


def write_user_file(path: StrPath, data: bytes, field: str = "FILE") -> None:
    """Replace a file the user named (an export, a saved context) atomically.

    The target is checked by :func:`check_user_file`; the temp file beside it
    is created exclusively under a random name. A new file is created ``0600``
    (a store's content is private); an existing one keeps its mode.
    """
    st = check_user_file(path, field)
    mode = stat.S_IMODE(st.st_mode) if st is not None else FILE_MODE
    folder = folder_of(path)
    name = os.path.basename(os.fspath(path))
    tmp = os.path.join(folder, f".{name}{TMP_MARK}{random_tag()}")
    try:
        write_new(tmp, data, mode)
        try:
            os.replace(tmp, path)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        fsync_dir(folder)
    except OSError as exc:
        raise InvalidInput(field, f"cannot write {path}: {exc.strerror or exc}") from None
