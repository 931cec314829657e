"""A benchmark's own copy of a prepared store, made in a moment.

Table files are hard links: a store replaces a table file by a rename, it never edits
one, so a copy's writes leave the source's files as they were. The log is the
exception: commits append to it in place, so it is copied (linked, a write into the
copy would land in the source and in every other copy).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def _link_or_copy(source: str, target: str) -> None:
    if os.path.basename(source) == "store.log":
        shutil.copy2(source, target)
    else:
        os.link(source, target)


def linked_copy(src: Path, dst: Path) -> Path:
    """``src`` copied to ``dst`` (replacing it): table files linked, the log copied."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, copy_function=_link_or_copy, ignore=shutil.ignore_patterns(".lock"))
    return dst
