"""Building a big store's recall index in a child process, for a long-lived one.

A build at 100,000 long notes makes and drops millions of small objects (words,
postings, rows). Python's small-object allocator hands an arena back to the system
only once every object in it is gone, and the few the build leaves alive (memoised
stems, interned words, a table's documents) are spread over all of them: a process
that built its index kept ~120 MB more resident for the rest of its life than one
that read the same index from its file, whatever it did with the index afterwards.

So a long-lived process with no saved index to read (the cache off, a Redis store,
a folder store's first build) and a big store lets a child build it: the child opens
the same store, builds the index as this process would, and writes it in its saved
form (:mod:`core.services.recall.saved_file`) into an anonymous memory file this
process made and handed down. This process reads it in place, as it reads the index
file, and catches up with what was committed while the child worked. The objects of
the build die with the child. On a folder store with the cache on, the background
saver then writes the index file and maps it in the memory file's place.

Nothing here is essential: where a child cannot be started or fails (no anonymous
memory files on this system, a store the child cannot open, a build that fails), the
index is built in this process as before. ``MEMWORK_SEARCH_BUILD_APART`` decides
by hand: ``1`` always (for any store size), ``0`` never.
"""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from . import extract as records

if TYPE_CHECKING:
    from ...storage.store import Store
    from .engine import RecallIndex

ENV = "MEMWORK_SEARCH_BUILD_APART"
#: The indexed tables' size (bytes as stored) from which a child builds: ~25,000 notes
#: of ~1,000 characters. Below it the build leaves little behind, and starting a child
#: (~0.3 s) would cost more than it saves.
MIN_BYTES = 24 * 1024 * 1024


def worth_it(store: Store) -> bool:
    """Whether a child should build ``store``'s index (no saved index was found)."""
    setting = os.environ.get(ENV, "")
    if setting == "0" or not hasattr(os, "memfd_create") or _spec(store) is None:
        return False
    if setting == "1":
        return True
    with store.reading():  # a Redis store learns its tables under the lock
        names = [name for name in store.cache.head.tables if records.indexed(name)]
        size = store.backend.size_hint(names)
    return size is not None and size >= MIN_BYTES


def build(store: Store) -> RecallIndex | None:
    """``store``'s recall index, built by a child process and read in place from the
    memory file it wrote (None: the child could not build it; build it here)."""
    from . import saved_file

    spec = _spec(store)
    if spec is None or not hasattr(os, "memfd_create"):
        return None
    fd = os.memfd_create("memwork-recall-index", os.MFD_CLOEXEC)
    try:
        spec["fd"] = fd
        done = subprocess.run(
            [sys.executable, "-c", f"from {__name__} import child_main; child_main()"],
            input=json.dumps(spec).encode(),  # on stdin: a Redis password never in argv
            pass_fds=(fd,),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        size = os.fstat(fd).st_size
        if done.returncode != 0 or size == 0:
            return None
        data = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    except OSError:
        return None
    finally:
        os.close(fd)  # the mapping keeps the memory file while the index reads it
    return saved_file.read(data)


def _spec(store: Store) -> dict[str, Any] | None:
    """How a child opens ``store`` (None: it cannot, as for a store in memory)."""
    backend: Any = store.backend
    if store.folder is not None:
        return {"folder": str(store.path)}
    url = getattr(backend, "url", None)
    if url is not None and hasattr(url, "__slots__"):
        return {"redis": {name: getattr(url, name) for name in url.__slots__}}
    return None


def child_main() -> None:
    """The child: build the index of the store named on stdin and write its saved form
    to the memory file it names."""
    from ...storage.store import Store
    from . import saved_file
    from .follow import Recall

    spec = json.loads(sys.stdin.read())
    if "folder" in spec:
        store = Store(spec["folder"], create=False)
    else:
        from ...storage.redis_backend import RedisBackend
        from ...storage.url import StoreURL

        store = Store.over(RedisBackend(StoreURL(**spec["redis"])), create=False)
    try:
        store.one_call = True
        index = Recall().refresh(store)
        with os.fdopen(spec["fd"], "wb", closefd=False) as out:
            for piece in saved_file.pieces(index):
                out.write(piece)
    finally:
        store.close()
