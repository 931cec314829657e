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
by hand: ``1`` always (for any store size, in two parts wherever there are two
tables), ``0`` never.

Where the system gives it two cores, the child builds in two processes: it forks, each
builds the tables of about half the store's bytes (reading them under the store's lock,
indexing them after it), and the two parts are joined into the index one build makes,
slot for slot (:mod:`core.services.recall.merge`).
"""

from __future__ import annotations

import json
import mmap
import os
import subprocess
import sys
from collections.abc import Callable
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
        if size is None or size < MIN_BYTES // 4:
            return False
        return size >= MIN_BYTES or _spaceless_text(store, names)


def _spaceless_text(store: Store, names: list[str]) -> bool:
    """Whether most records of a sample are written in a script without spaces
    (Chinese, Japanese, Korean, Thai). Such text gives about four times the terms per
    byte that English does, most of them distinct pairs of characters: an index built
    here from 50,000 Chinese notes (22 MB, under :data:`MIN_BYTES`) left a long-lived
    process at 440 MB. Up to 50 records of the largest of the first few indexed
    tables are looked at."""
    from .scripts import spaceless

    first = names[:8]
    sizes = store.backend.table_sizes(first) or [0] * len(first)
    docs: list[dict[str, object]] = []
    for _, name in sorted(zip(sizes, first, strict=True), reverse=True):
        docs.extend(list(store.docs(name).values())[: 50 - len(docs)])
        store.release(name)  # read for this look only
        if len(docs) >= 50:
            break
    written = sum(
        1 for doc in docs if any(isinstance(v, str) and spaceless(v) for v in doc.values())
    )
    return bool(docs) and 2 * written >= len(docs)


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
    from . import saved_file

    spec = json.loads(sys.stdin.read())
    index = _build_parts(spec)
    with os.fdopen(spec["fd"], "wb", closefd=False) as out:
        for piece in saved_file.pieces(index):
            out.write(piece)


def _open(spec: dict[str, Any]) -> Store:
    from ...storage.store import Store

    if "folder" in spec:
        return Store(spec["folder"], create=False)
    from ...storage.redis_backend import RedisBackend
    from ...storage.url import StoreURL

    return Store.over(RedisBackend(StoreURL(**spec["redis"])), create=False)


def _build(spec: dict[str, Any], only: Callable[[str], bool] | None) -> RecallIndex:
    """The index of the store ``spec`` names (of the tables ``only`` lets through)."""
    from .follow import Recall

    store = _open(spec)
    try:
        store.one_call = True
        return Recall(only=only).refresh(store)
    finally:
        store.close()


def _build_parts(spec: dict[str, Any]) -> RecallIndex:
    """The whole index, built in two processes where there are cores for both: this one
    builds the tables of the first half of the store's bytes, a fork of it the rest,
    and the two parts are joined (:mod:`core.services.recall.merge`): slot for slot
    what one build makes, in about half the time."""
    from . import merge, saved_file

    first = _first_part(spec) if _cores() > 1 and hasattr(os, "fork") else None
    if first is None:
        return _build(spec, None)
    fd = os.memfd_create("memwork-recall-part", os.MFD_CLOEXEC)
    pid = os.fork()  # this process runs no thread yet: the fork holds no lock of one
    if pid == 0:
        code = 1
        try:
            part = _build(spec, lambda name: name not in first)
            with os.fdopen(fd, "wb", closefd=False) as out:
                for piece in saved_file.pieces(part):
                    out.write(piece)
            code = 0
        finally:
            os._exit(code)
    index = _build(spec, lambda name: name in first)
    _, status = os.waitpid(pid, 0)
    size = os.fstat(fd).st_size
    second = None
    if os.waitstatus_to_exitcode(status) == 0 and size:
        second = saved_file.read(mmap.mmap(fd, size, access=mmap.ACCESS_READ))
    os.close(fd)
    if second is None:
        return _build(spec, None)  # the fork failed: the whole build here
    return merge.join(index, second)


def _first_part(spec: dict[str, Any]) -> set[str] | None:
    """The tables, in name order, that hold about the first half of the indexed bytes
    (None: too few tables, or sizes unknown)."""
    store = _open(spec)
    try:
        with store.reading():
            names = sorted(n for n in store.cache.head.tables if records.indexed(n))
            sizes = store.backend.table_sizes(names)
    finally:
        store.close()
    small = sum(sizes or ()) < MIN_BYTES // 4 and os.environ.get(ENV) != "1"
    if sizes is None or len(names) < 2 or small:
        return None
    half, total = sum(sizes) / 2, 0
    for at, size in enumerate(sizes):
        total += size
        if total >= half:
            return set(names[: min(at + 1, len(names) - 1)])  # the other part never empty
    return None


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
