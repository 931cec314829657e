"""Copying store files into a snapshot pack: independent copies, as cheap as the disk allows.

A checkpoint must not share its files with the live store (hard links did: an
in-place edit of a table file changed every checkpoint holding it). So a
snapshot copies every table file into one *pack* file, each at an offset
aligned to 4 KiB, with an index beside it. One file rather than one per
table because creating and fsyncing files is what a copy costs on a
journaling filesystem: at 1,000 episodes (133 table files) one copy per
table took 85-490 ms with fsync on a busy machine, the same bytes in one
pack 12-60 ms (`bench/bench_checkpoint.py` measures it against hard links).

Each table is copied the cheapest way the filesystem offers:

1. a reflink of the range (``FICLONERANGE``): copy-on-write on btrfs, XFS,
   bcachefs — no data copied, blocks shared until either side changes (the
   aligned offsets are what make this possible);
2. ``os.copy_file_range``: the kernel copies (and may itself reflink);
3. a plain ``pread``/``pwrite`` loop.

Sources are opened with ``O_NOFOLLOW`` and must be regular files.
"""

from __future__ import annotations

import os
import stat
import struct
from pathlib import Path

from ..base.errors import StoreUnreadable

FICLONERANGE = 0x4020940D  # _IOW(0x94, 13, struct file_clone_range), Linux
ALIGN = 4096
CHUNK = 8 << 20
_SRC = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def aligned(offset: int) -> int:
    """The next offset at a 4 KiB boundary (where a reflink can start)."""
    return -(-offset // ALIGN) * ALIGN


def _reflink(src: int, dst: int, offset: int) -> bool:
    try:
        import fcntl

        # struct file_clone_range {s64 src_fd; u64 src_offset, src_length, dest_offset}:
        # a length of 0 clones to the end of the source.
        fcntl.ioctl(dst, FICLONERANGE, struct.pack("qQQQ", src, 0, 0, offset))
        return True
    except (ImportError, OSError):
        return False


def _kernel_copy(src: int, dst: int, size: int, offset: int) -> bool:
    copy = getattr(os, "copy_file_range", None)
    if copy is None:
        return False
    done = 0
    try:
        while done < size:
            n = copy(src, dst, min(CHUNK, size - done), done, offset + done)
            if n == 0:
                break
            done += n
    except OSError:
        if done:
            raise  # failed half-way: a real error (e.g. a full disk), not "unsupported"
        return False
    return done == size


def _plain_copy(src: int, dst: int, size: int, offset: int) -> None:
    done = 0
    while done < size:
        chunk = os.pread(src, min(CHUNK, size - done), done)
        if not chunk:
            raise StoreUnreadable("a table file shrank while it was being copied")
        view = memoryview(chunk)
        while view:
            written = os.pwrite(dst, view, offset + done)
            view = view[written:]
            done += written


def copy_into(source: str | Path, dst: int, offset: int) -> tuple[int, str]:
    """Copy the file ``source`` into ``dst`` at ``offset``; returns (bytes, how)."""
    try:
        src = os.open(source, _SRC)
    except OSError as exc:
        raise StoreUnreadable(f"cannot read {source}: {exc.strerror}") from None
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):
            raise StoreUnreadable(f"{source} is not a regular file; it was left untouched")
        size = st.st_size
        if size and offset % ALIGN == 0 and _reflink(src, dst, offset):
            return size, "reflink"
        if _kernel_copy(src, dst, size, offset):
            return size, "kernel"
        _plain_copy(src, dst, size, offset)
        return size, "plain"
    finally:
        os.close(src)
