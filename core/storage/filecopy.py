"""Copying a store file into a snapshot: an independent copy, as cheap as the disk allows.

A checkpoint must not share its files with the live store (hard links did:
an in-place edit of a table file changed every checkpoint holding it). The
copy is tried three ways, cheapest first:

1. a reflink (``FICLONE``): copy-on-write on btrfs, XFS, bcachefs, ZFS 2.2 —
   instant and sharing blocks until either side changes;
2. ``os.copy_file_range``: the kernel copies (server-side on NFS, no trip
   through user space);
3. a plain read/write loop.

The source is opened with ``O_NOFOLLOW`` and must be a regular file; the
copy is created exclusively with mode ``0600`` and fsynced.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from core.errors import StoreUnreadable
from core.storage.atomic import FILE_MODE, fsync_enabled

FICLONE = 0x40049409  # _IOW(0x94, 9, int), Linux
_SRC = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DST = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_DST |= getattr(os, "O_CLOEXEC", 0)
CHUNK = 8 << 20


def _reflink(src: int, dst: int) -> bool:
    try:
        import fcntl

        fcntl.ioctl(dst, FICLONE, src)
        return True
    except (ImportError, OSError):
        return False


def _kernel_copy(src: int, dst: int, size: int) -> bool:
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    done = 0
    try:
        while done < size:
            n = copy(src, dst, min(CHUNK, size - done), done, done)
            if n == 0:
                break
            done += n
    except OSError:
        if done:
            raise  # failed half-way: a real error (e.g. a full disk), not "unsupported"
        return False
    return done == size


def _plain_copy(src: int, dst: int) -> None:
    os.lseek(src, 0, os.SEEK_SET)
    os.lseek(dst, 0, os.SEEK_SET)
    os.ftruncate(dst, 0)
    while chunk := os.read(src, CHUNK):
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view) :]


def copy_file(source: Path, target: Path) -> str:
    """Copy ``source`` to the new file ``target``; returns how: reflink, kernel or plain."""
    try:
        src = os.open(source, _SRC)
    except OSError as exc:
        raise StoreUnreadable(f"cannot read {source}: {exc.strerror}") from None
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            raise StoreUnreadable(f"{source} is not a regular file; it was left untouched")
        dst = os.open(target, _DST, FILE_MODE)
        try:
            if _reflink(src, dst):
                how = "reflink"
            elif _kernel_copy(src, dst, st.st_size):
                how = "kernel"
            else:
                _plain_copy(src, dst)
                how = "plain"
            if fsync_enabled():
                os.fsync(dst)
        except BaseException:
            os.close(dst)
            os.unlink(target)
            raise
        os.close(dst)
        return how
    finally:
        os.close(src)
