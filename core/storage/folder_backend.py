"""A store in a folder: one JSON file per table, ``store.json``, ``store.log``, a lock.

``store.json`` names the schema version, the commit counter and each table file's
version. A commit appends one record to ``store.log`` and fsyncs it once
(:mod:`core.storage.wal`); readers apply the log's records over the table files.
When the log passes a size (``MEMWORK_LOG_BYTES``, default 2 MiB), a number of
records (``MEMWORK_LOG_RECORDS``, default 64) or an age (``MEMWORK_LOG_SECONDS``,
default 300 s) it is *folded* into the table files: every
table it touched is rewritten beside its target, with the bytes of its unchanged
documents kept (:func:`core.storage.codec.table_bytes`), together with
``store.json`` and a fresh, empty log, in one journaled multi-file commit
(:mod:`core.storage.journal`). A commit too big for the log (a bulk record, an
import, a restore) is folded in with it directly. Everything is read and committed
under ``<store>/.lock`` (:mod:`core.storage.lock`), so no reader ever sees a fold
half done, and the records a fold consumed are still read from the old log by a
process that had not seen them yet; a fold asked for by the log's limits writes its
table files while the lock is free (:mod:`core.storage.fold_outside`).

Nothing reaches outside the folder: symbolic links inside it are refused on every
open, every table name passes :func:`~core.storage.manifest.table_file` before it
becomes a path, and files are opened with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ..base import names as names_
from ..base.errors import (
    NoStore,
    StoreError,
    StoreTooNew,
    StoreUnreadable,
    StoreWriteFailed,
)
from ..base.no_wait import WouldWait, may_wait
from . import derived_files, journal, log_damage, schema, wal
from .atomic import (
    DIR_MODE,
    absolute_folder,
    failed_write,
    fsync_dir,
    fsync_enabled,
    parents,
    write_temp,
)
from .backend import (
    NO_FOLD_NEEDED,
    Backend,
    Commit,
    Deferred,
    Doc,
    Docs,
    Refresh,
    replay,
    table_writes,
)
from .codec import (
    dumps,
    listed_ids,
    load_file,
    loads,
    read_store_file,
    table_bytes,
)
from .lock import InterProcessLock, LockTimeout, lock_timeout
from .manifest import MANIFEST_NAME, Manifest, table_file
from .table_sums import checksum, verify

if TYPE_CHECKING:
    from pathlib import Path

    from .fold_outside import FoldPlan
    from .snapshot_files import SnapshotFiles

LOCK_NAME = ".lock"
#: The most of other processes' log a call that must not wait reads in a catch-up
#: (~40 notes' commits, about a millisecond): past it, the call is run where it may.
QUICK_TAIL = 64 * 1024
#: Where a restore keeps the table files it found damaged (never deleted).
DAMAGED = "damaged"
LOG_BYTES_ENV = "MEMWORK_LOG_BYTES"
LOG_SECONDS_ENV = "MEMWORK_LOG_SECONDS"
LOG_RECORDS_ENV = "MEMWORK_LOG_RECORDS"
#: ``1``: every read takes the store's lock (no glance): for a store on a network
#: filesystem whose clients cache a file's size for a while, where one look at the log
#: could miss another machine's commit (taking the lock makes such a client look again).
LOCKED_READS_ENV = "MEMWORK_LOCKED_READS"
#: An episode's record holds the whole aggregate documents it changed (~50-100 KB in a
#: store of 100k episodes): 2 MiB keeps a fold's ~10-25 fsyncs to well under one per
#: commit, and costs a reader that opens a full log ~5 ms (docs/PERFORMANCE_JOURNAL.md).
DEFAULT_LOG_BYTES = 2 * 1024 * 1024
DEFAULT_LOG_SECONDS = 300.0
#: Every reader checks and decodes each record's index (~40-100 µs a record when a
#: process starts): small commits (an observation is ~1 KB) would let 2 MiB hold
#: ~1,500 of them, and a context call pay ~40 ms to read them. 64 keeps a reader's
#: worst case to a few ms; fewer (32) put a fold's ~10 fsyncs, and its tens of ms,
#: into p95 of the writers (bench/bench_commit.py, docs/PERFORMANCE.md).
DEFAULT_LOG_RECORDS = 64
#: A commit that puts more documents than this goes straight to the table files: it
#: would outgrow the log at once, and writing it twice costs more than a fold.
DIRECT_DOCUMENTS = 1000
_LOG_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _setting(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        from ..base.errors import InvalidInput

        raise InvalidInput(name, f"must be a number >= 0 (got {raw!r})")
    return value


class _Log:
    """``store.log`` as this process has it open."""

    __slots__ = ("fd", "ident", "size", "end", "started", "writable", "version", "damaged")

    def __init__(self, fd: int, ident: tuple[int, int], writable: bool) -> None:
        self.fd = fd
        #: (device, inode): a fold replaces the file, so a new identity means one ran.
        self.ident = ident
        #: The file's size when last read, and the end of its last whole record.
        self.size = 0
        self.end = 0
        #: When the oldest record in it was written (None: it holds none).
        self.started: float | None = None
        self.writable = writable
        #: Its format (an older one is rewritten by the next fold).
        self.version = wal.FORMAT_VERSION
        #: Whether a read found bytes no record could be proven from: the next write
        #: keeps the file in ``damaged/`` and folds what verified.
        self.damaged = False

    def unchanged(self, st: os.stat_result) -> bool:
        """Whether the file ``st`` describes is this log, with nobody's commit past what
        this process read and verified: the same identity (a fold replaces the file)
        and the same size, which is where its last whole record ends."""
        return st.st_size == self.size == self.end and (st.st_dev, st.st_ino) == self.ident

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        # A store dropped without close() (an in-process CLI call) must not keep the file
        # open: an unmount or a Windows rename would find it busy.
        self.close()


def _write_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view = view[written:]
        offset += written


def _dumped(name: str, version: int, docs: Docs) -> Callable[[], bytes]:
    return lambda: dumps({"documents": docs, "table": name, "version": version})


def _staged_path(handle: object) -> str:
    if not isinstance(handle, str):
        raise TypeError(f"not a staged table of a folder store: {handle!r}")
    return handle


def _plan(plan: object) -> FoldPlan:
    from .fold_outside import FoldPlan

    if not isinstance(plan, FoldPlan):
        raise TypeError(f"not a fold plan of a folder store: {plan!r}")
    return plan


def _light(commit: Commit) -> Commit:
    """What the log keeps of a commit: its writes, without the whole tables they made."""
    return Commit(
        {name: write.light() for name, write in commit.writes.items()},
        commit.drops,
        schema_version=commit.schema_version,
        txid=commit.txid,
        generation=commit.generation,
    )


class FolderBackend(Backend):
    """The store in folder ``path`` (see the module docstring)."""

    scheme = "file"
    tells_changes = True  # from the log's records, until they are folded

    def __init__(self, path: str | os.PathLike[str]) -> None:
        #: The store folder, absolute, as text: the backend works with os.path, not
        #: pathlib (which costs every CLI call ~3 ms to import); :attr:`path` is a Path.
        self.dir = absolute_folder(os.fspath(path))
        self._log_file = os.path.join(self.dir, wal.LOG_NAME)  # asked at every glance
        self._path: Path | None = None
        self._lock_timeout = lock_timeout()
        self._lock: InterProcessLock | None = None
        #: store.json as last read, the log's records after it, and the head they make.
        self._base = Manifest(schema_version=schema.SCHEMA_VERSION)
        self._records: list[Commit] = []
        self._head = self._base
        self._log: _Log | None = None
        self._polled: tuple[tuple[int, int, int], int] | None = None
        self._snapshots: SnapshotFiles | None = None
        #: The checksum of each table this process staged, by its temp file.
        self._staged_sums: dict[str, str] = {}
        #: ``store.json`` could not be read and a repair opened the store on one rebuilt
        #: from the table files: the next fold keeps the damaged file in damaged/.
        self._manifest_damaged = False
        #: The log this hold appended to and has not yet made durable: its fsync runs
        #: when the lock is let go (:meth:`release`), so writers share the disk's flush.
        self._unsynced: _Log | None = None
        #: While a thread defers its commits' fsyncs (:meth:`defer_flushes`): that
        #: thread, and a descriptor of each log its commits appended to, by the log's
        #: identity (a descriptor of its own: a fold may close the log's meanwhile).
        self._deferring: tuple[int, dict[tuple[int, int], int]] | None = None
        #: Logs this process let go of while it held the lock (a fold replaced them),
        #: closed once the lock is let go (:meth:`release`).
        self._retired: list[_Log] = []
        #: The claim :meth:`fold_wanted` took (the log's ident and the claim's path).
        self._claimed: tuple[tuple[int, int], str] | None = None
        self.log_limit = int(_setting(LOG_BYTES_ENV, DEFAULT_LOG_BYTES))
        self.log_seconds = _setting(LOG_SECONDS_ENV, DEFAULT_LOG_SECONDS)
        self.log_records = int(_setting(LOG_RECORDS_ENV, DEFAULT_LOG_RECORDS))
        self._glances = os.environ.get(LOCKED_READS_ENV, "") != "1"
        #: Folders this open made (the store's own, then missing parents), and whether it
        #: wrote a new store into them: what :meth:`discard_created` may take back.
        self._made: list[str] = []
        self.created = False

    # -- what callers see -------------------------------------------------------------------
    @property
    def path(self) -> Path:
        """The store folder as a ``Path`` (made on first use)."""
        if self._path is None:
            from pathlib import Path

            self._path = Path(self.dir)
        return self._path

    def _file(self, name: str) -> str:
        """A file (or folder) inside the store folder."""
        return os.path.join(self.dir, name)

    @property
    def snapshots(self) -> SnapshotFiles:
        """The checkpoints' snapshot files (loaded on first use: ``memwork context`` and
        other reads never touch them)."""
        if self._snapshots is None:
            from .snapshot_files import SnapshotFiles

            self._snapshots = SnapshotFiles(self.path)
        return self._snapshots

    @property
    def location(self) -> str:
        return self.dir

    @property
    def label(self) -> str:
        return os.path.basename(self.dir)

    @property
    def folder(self) -> Path:
        return self.path

    @property
    def read_only(self) -> str | None:
        return self._lock.read_only if self._lock is not None else None

    @property
    def head(self) -> Manifest:
        return self._head

    def table_path(self, name: str) -> Path:
        """The file that holds table ``name``."""
        return self.path / table_file(name)

    # -- opening ----------------------------------------------------------------------------
    def open(self, create: bool) -> Manifest:
        self._prepare_folder(create)
        if self._lock is not None:
            self._lock.close()
        self._lock = InterProcessLock(self._file(LOCK_NAME), self._lock_timeout)
        self.acquire()
        try:
            return self._open(create)
        finally:
            self.release(False)

    def _prepare_folder(self, create: bool) -> None:
        # The store folder itself may be a symbolic link (a user's choice of
        # where it lives); links *inside* it are refused (see _scan).
        try:
            mode: int | None = os.stat(self.dir).st_mode
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise StoreUnreadable(f"cannot use {self.dir} as a store: {exc.strerror}") from None
        if mode is None:
            if not create:
                raise NoStore(self.dir)
            try:
                missing = [p for p in parents(self.dir) if not os.path.lexists(p)]
                os.makedirs(os.path.dirname(self.dir), exist_ok=True)
                os.mkdir(self.dir, DIR_MODE)
                self._made = [self.dir, *missing]
            except FileExistsError:
                pass  # another process made it first
            except OSError as exc:
                raise StoreUnreadable(
                    f"cannot create a store at {self.dir}: {exc.strerror}"
                ) from None
            return
        if stat.S_ISREG(mode):
            raise StoreUnreadable(
                f"{self.dir} is a file; a memwork store is a folder "
                "(use `memwork import` to bring a JSON file in)"
            )
        if not stat.S_ISDIR(mode):
            raise StoreUnreadable(
                f"{self.dir} is not a folder (a device or another special file); "
                "a memwork store is a folder"
            )
        if not os.path.lexists(self._file(MANIFEST_NAME)):
            if not create:
                raise NoStore(self.dir)
            if self._foreign_files():
                # Checked before the lock file is created: a folder that is not ours
                # must not even gain a .lock.
                raise StoreUnreadable(
                    f"{self.dir} is not empty and has no {MANIFEST_NAME}; refusing to write into it"
                )

    def _foreign_files(self) -> list[str]:
        return [
            e.name
            for e in os.scandir(self.dir)
            if e.name not in (LOCK_NAME, journal.JOURNAL_NAME) and not journal.is_temp_name(e.name)
        ]

    def _scan(self) -> list[str]:
        """Refuse symbolic links in the store folder; return the temp files found.

        A link inside a store (a table file, store.json, the journal, snapshots/)
        could send a read or a write anywhere on disk, so the store is refused
        until it is replaced by the real thing. One scandir, done on every open.
        """
        temps = []
        for entry in os.scandir(self.dir):
            if entry.is_symlink():
                raise StoreUnreadable(
                    f"{entry.path} is a symbolic link; memwork does not follow links inside "
                    "a store (replace it with the file or folder itself); nothing was changed"
                )
            if journal.is_temp_name(entry.name):
                temps.append(entry.name)
        return temps

    def _open(self, create: bool) -> Manifest:
        manifest_path = self._file(MANIFEST_NAME)
        temps = self._scan()
        journal.recover(self.dir)
        writable = self.read_only is None
        if not os.path.lexists(manifest_path):
            if not create:
                raise NoStore(self.dir)
            if self._foreign_files():
                raise StoreUnreadable(
                    f"{self.dir} is not empty and has no {MANIFEST_NAME}; refusing to write into it"
                )
            if not writable:
                raise StoreWriteFailed(f"cannot create a store at {self.dir}: {self.read_only}")
            journal.remove_strays(self.dir, temps)
            manifest = Manifest(schema_version=schema.SCHEMA_VERSION)
            files = {MANIFEST_NAME: manifest.to_bytes(), wal.LOG_NAME: wal.header(0)}
            journal.commit(self.dir, files, [], "init")
            self.created = True
        elif writable:
            journal.remove_strays(self.dir, temps)
        try:
            manifest = Manifest.read(manifest_path)
        except StoreUnreadable as exc:
            if not (self.rescue and writable) or os.path.islink(manifest_path):
                raise
            manifest = self._rebuilt_manifest(exc)
        if manifest.schema_version > schema.SCHEMA_VERSION:
            raise StoreTooNew(
                f"{manifest_path} has schema version {manifest.schema_version}, newer than "
                f"this memwork understands ({schema.SCHEMA_VERSION}); upgrade memwork. "
                "Nothing was changed."
            )
        self._load(manifest)
        return self._head

    def _rebuilt_manifest(self, problem: StoreUnreadable) -> Manifest:
        """A manifest rebuilt from the table files, said on stderr (a repair only)."""
        import sys

        from . import manifest_rescue

        try:
            with open(self.log_path, "rb") as log:
                base: int | None = wal.read_header(self.log_path, log.read(wal.HEADER_SIZE))
        except (OSError, StoreUnreadable):
            base = None
        manifest = manifest_rescue.rebuild(self.dir, base)
        self._manifest_damaged = True
        print(
            f"memwork: {problem}. This restore goes on with a store.json rebuilt from the "
            f"{len(manifest.tables)} table files in the folder and the log, and keeps the "
            "damaged one in damaged/",
            file=sys.stderr,
            flush=True,
        )
        return manifest

    # -- the log -----------------------------------------------------------------------------
    @property
    def log_path(self) -> str:
        """``store.log``."""
        return self._log_file

    def _load(
        self, manifest: Manifest | None = None, known: dict[int, Commit] | None = None
    ) -> None:
        """Read ``store.json`` and the whole log afresh (on open, and after a fold);
        ``known``: the commits read from the log before, by generation, which a new log
        starts with when a fold took them along (see :func:`core.storage.wal.read_records`)."""
        base = manifest or Manifest.read(self._file(MANIFEST_NAME))
        self._close_log(later=True)
        self._base, self._records, self._head = base, [], base
        path = self.log_path
        writable = self.read_only is None
        try:
            fd = os.open(path, (os.O_RDWR if writable else os.O_RDONLY) | _LOG_FLAGS)
        except FileNotFoundError:
            return  # a store from before the log: its first commit starts one
        except OSError as exc:
            if os.path.islink(path):
                raise StoreUnreadable(
                    f"{path} is a symbolic link; memwork does not follow links inside a store "
                    "(replace it with the file itself); nothing was changed"
                ) from None
            raise StoreUnreadable(f"cannot open {path}: {exc.strerror}") from None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise StoreUnreadable(f"{path} is not a regular file; it was left untouched")
        log = _Log(fd, (st.st_dev, st.st_ino), writable)
        try:
            data = os.pread(fd, st.st_size, 0)
            # Read in place: a slice would copy the whole log (2 MiB before a fold).
            tail = wal.read_log(path, data, base.generation, known)
            log.version = tail.version
        except BaseException:
            log.close()
            raise
        self._log = log
        self._take(tail, len(data))

    def _take(self, tail: wal.Tail, size: int) -> None:
        """Adopt records read from the open log."""
        assert self._log is not None
        self._log.size, self._log.end = size, tail.end
        if tail.damage:
            self._log.damaged = True
            log_damage.say(self.log_path, self._log.ident, tail.damage)
        if tail.records:
            if self._log.started is None:
                self._log.started = tail.times[0]
            self._records.extend(tail.records)
            # From the head already known: the records before these are applied in it.
            self._head = wal.head_after(self._head, tail.records)

    def _close_log(self, later: bool = False) -> None:
        """Let go of the open log. ``later``: close it once the lock is let go. After a
        fold, this process may hold the replaced file's last descriptor, and closing it
        frees the file's blocks (~1.4 ms for a full log), which no writer waiting for
        the lock should wait for too."""
        if self._log is not None:
            if self._unsynced is self._log:
                self._unsynced = None
                self._sync(self._log, quiet=False)
            if later:
                self._retired.append(self._log)
            else:
                self._log.close()
            self._log = None

    def _read_tail(self, log: _Log, size: int) -> wal.Tail:
        data = os.pread(log.fd, size - log.end, log.end)
        return wal.read_records(
            self.log_path, data, log.end, self._head.generation, version=log.version
        )

    def close(self) -> None:
        self._close_log()
        while self._retired:
            self._retired.pop().close()
        if self._lock is not None:
            self._lock.close()

    def discard_created(self) -> bool:
        # Taken back only while it is exactly what open() wrote: no table, no commit in
        # the log, no other file. Anything more is somebody's data and stays.
        if not self.created or self._lock is None:
            return False
        self.created = False
        ours = {MANIFEST_NAME, wal.LOG_NAME, LOCK_NAME}
        self.acquire()
        try:
            try:
                pristine = (
                    not Manifest.read(self._file(MANIFEST_NAME)).tables
                    and os.stat(self.log_path).st_size == wal.HEADER_SIZE
                    and {e.name for e in os.scandir(self.dir)} <= ours
                )
            except (OSError, StoreError):
                pristine = False
            if not pristine:
                return False
            self._close_log()
            for name in (wal.LOG_NAME, MANIFEST_NAME):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._file(name))
        finally:
            self.release(False)
        self._lock.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._file(LOCK_NAME))
        for folder in self._made:
            try:
                os.rmdir(folder)
            except OSError:
                break  # not empty (or not ours to remove): it and its parents stay
        return True

    def backup(self, version: int) -> str:
        return str(schema.backup_folder(self.path, version))

    # -- locking ----------------------------------------------------------------------------
    def acquire(self, wait: bool = True, meanwhile: Callable[[], None] | None = None) -> None:
        assert self._lock is not None, "open() first"
        try:
            self._lock.acquire(None if wait else 0, meanwhile=meanwhile)
        except LockTimeout:
            if not wait:
                raise WouldWait from None
            raise StoreError(
                f"the store at {self.dir} is locked by another process "
                f"(waited {self._lock_timeout:.0f} s for {self._file(LOCK_NAME)})"
            ) from None

    def release(self, failed: bool) -> None:
        """Let the lock go, then fsync what this hold appended to the log: the commit is
        acknowledged only after that, but the next writer need not wait for this disk
        flush to append its own, and writers that commit at the same moment share one
        (group commit). A reader may see a record before its fsync has returned; a
        power cut in that moment can take it back, as it takes back any unacknowledged
        commit (the log's checksums show such a torn tail)."""
        unsynced, self._unsynced = self._unsynced, None
        deferring = self._deferring
        if (
            unsynced is not None
            and deferring is not None
            and deferring[0] == threading.get_ident()
            and not failed
        ):
            logs = deferring[1]
            if unsynced.ident not in logs:
                logs[unsynced.ident] = os.dup(unsynced.fd)  # before a fold may close it
            unsynced = None
        if self._lock is not None:
            self._lock.release()
        while self._retired:
            self._retired.pop().close()
        if unsynced is not None:
            self._sync(unsynced, quiet=failed)

    def times_found_busy(self) -> int:
        return self._lock.found_busy if self._lock is not None else 0

    def defer_flushes(self) -> None:
        self._deferring = (threading.get_ident(), {})

    def deferred(self) -> Deferred:
        deferring, self._deferring = self._deferring, None
        return Deferred(deferring[1] if deferring is not None else {}, f"the store at {self.dir}")

    def _sync(self, log: _Log, quiet: bool) -> None:
        try:
            os.fsync(log.fd)
        except OSError as exc:
            if not quiet:  # the hold failed already: its own error is the one to report
                raise failed_write(exc, f"the store at {self.dir}") from None

    # -- reading ----------------------------------------------------------------------------
    def peek(self) -> Refresh | None:
        """Take in the records other processes appended to the log this process holds
        open, without the lock: those that verify, up to the first that does not (see
        :func:`core.storage.wal.read_settled`). A writer waiting for the lock reads them
        while it waits, so its hold has only the last few left to read: with eight
        writers, catching up on seven commits was half of every hold. Everything else
        (a fold, damage, an interrupted commit) waits for :meth:`refresh`."""
        log = self._log
        if log is None or log.damaged or log.fd < 0:
            return None
        try:
            size = os.fstat(log.fd).st_size
            if size <= log.size or size <= log.end:
                return None
            data = os.pread(log.fd, size - log.end, log.end)
        except OSError:
            return None
        tail = wal.read_settled(self.log_path, data, log.end, self._head.generation, log.version)
        if not tail.records:
            return None
        # Only what verified counts as read (the size taken is its end): the bytes after
        # it are read again under the lock, which tells a record still being appended
        # from damage. A settled read holds no damage, so nothing is reported here.
        self._take(tail, tail.end)
        return Refresh(self._head, tail.records)

    def current(self, *, locked: bool = False) -> bool:
        """One look at the log: the same file (a fold replaces it by a rename, and every
        change to a table file goes through a fold) and no byte past what this process
        read and verified. Anything else (a log never opened, damage, unread bytes) says
        no: :meth:`refresh` under the lock sorts it out. Under the lock, a pending
        journal (a fold or commit a crash interrupted) says no as well."""
        log = self._log
        if log is None or log.damaged or log.fd < 0 or self._manifest_damaged:
            return False
        if not (self._glances or locked):
            return False
        if locked and os.access(self._file(journal.JOURNAL_NAME), os.F_OK, follow_symlinks=False):
            return False
        try:
            return log.unchanged(os.stat(self._log_file, follow_symlinks=False))
        except OSError:
            return False

    def refresh(self) -> Refresh | None:
        journal.recover(self.dir)  # an interrupted fold or commit is completed first
        log = self._log
        try:
            st: os.stat_result | None = os.stat(self.log_path, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if log is not None and st is not None and (st.st_dev, st.st_ino) == log.ident:
            if log.unchanged(st):
                return None  # nobody committed: one stat
            # Past ``end`` lay bytes that did not verify: a writer may have cut them and
            # appended a record just as long, so the same size proves nothing there.
            if st.st_size < log.end:
                # memwork only ever appends to a log, or replaces it by a rename.
                raise StoreUnreadable(
                    f"{self.log_path} was cut short while this process had it open "
                    f"({log.end:,} bytes read, {st.st_size:,} now): something other than "
                    "memwork changed it in place, and the commits past that point are no "
                    "longer in it; run `memwork doctor` (a checkpoint restores the store)"
                )
            if st.st_size - log.size > QUICK_TAIL and not may_wait():
                raise WouldWait  # many records to read: more than a quick call's work
            tail = self._read_tail(log, st.st_size)
            self._take(tail, st.st_size)
            return Refresh(self._head, tail.records) if tail.records else None
        if log is None and st is None:
            manifest = Manifest.read(self._file(MANIFEST_NAME))
            if (manifest.generation, manifest.tables) == (self._head.generation, self._head.tables):
                return None
            self._base = self._head = manifest
            return Refresh(manifest, None)
        if not may_wait():
            raise WouldWait  # a fold to follow: the manifest read, and tables again
        # Another process folded the log (or started one): the records it folded are
        # still in the old log this process holds open, so nothing goes unlisted.
        before = self._head
        missed = self._read_tail(log, os.fstat(log.fd).st_size).records if log else []
        # With eight writers a fold's new log starts with a hundred records or more,
        # every one of them read from the old log already: not decoded twice.
        self._load(known={c.generation: c for c in (*self._records, *missed)})
        if self._head.generation == before.generation:
            return None
        # A fold prepared off the lock starts the new log with the records appended while
        # it was prepared, which this process may have read from the old log already.
        last = missed[-1].generation if missed else before.generation
        commits: list[Commit] | None = missed + [c for c in self._records if c.generation > last]
        gone = self._head.generation - before.generation
        if len(commits or ()) != gone or (missed and missed[0].generation != before.generation + 1):
            commits = None  # folded with a commit that never was in the log: versions tell
        return Refresh(self._head, commits)

    def changed_since(self, name: str, version: int) -> dict[str, Doc | None] | None:
        """From the log, read back from its last record: each document decoded from the
        last write that put it. None when the log starts after ``version`` (folded
        since) or a commit after it replaced or dropped the table."""
        if version < self._base.generation or version > self._head.generation:
            return None
        found: dict[str, Doc | None] = {}
        for commit in reversed(self._records):
            if commit.generation <= version:
                break
            if name in commit.drops:
                return None
            write = commit.writes.get(name)
            if write is None:
                continue
            if write.replace:
                return None
            for doc_id in write.delete:  # a write's deletes come after its puts
                found.setdefault(doc_id, None)
            wanted = [doc_id for doc_id in write.put_ids if doc_id not in found]
            if wanted:
                put = write.put
                for doc_id in wanted:
                    found[doc_id] = put[doc_id]
        return found

    def committed_generation(self) -> int:
        """The last commit's generation, from the log's record headers (no lock)."""
        try:
            fd = os.open(self.log_path, os.O_RDONLY | _LOG_FLAGS)
        except FileNotFoundError:
            return Manifest.read(self._file(MANIFEST_NAME)).generation
        except OSError:
            return -1
        try:
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino, st.st_size)
            if self._polled is not None and self._polled[0] == key:
                return self._polled[1]
            data = os.pread(fd, st.st_size, 0)
        finally:
            os.close(fd)
        try:
            generation = wal.last_generation(self.log_path, data)
        except StoreUnreadable:
            return -1
        self._polled = (key, generation)
        return generation

    def size_hint(self, names: list[str]) -> int:
        """The table files' sizes, and the log's whole (what it holds of these tables is
        not told apart: a log is at most a couple of MiB)."""
        sizes = self.table_sizes(names)
        return sum(sizes) + (self._log.size if self._log is not None else 0)

    def table_sizes(self, names: list[str]) -> list[int]:
        """Each table file's size (0: none yet, its documents all in the log)."""
        sizes = []
        for name in names:
            try:
                sizes.append(os.stat(self._file(table_file(name)), follow_symlinks=False).st_size)
            except OSError:
                sizes.append(0)
        return sizes

    def read_table(self, name: str) -> Docs:
        if name not in self._head.tables:
            raise KeyError(name)
        writes = table_writes(self._records, name)
        if not writes:
            return self.read_file(name)[1]
        if name not in self._base.tables:
            # Made by the log: no file yet (its first write may be lost to damage).
            return replay(writes, dict)
        raw: list[bytes] = []  # the file's bytes, read once if at all

        def file_bytes() -> bytes:
            if not raw:
                raw.append(read_store_file(self._file(table_file(name))))
            return raw[0]

        def listed(most: int) -> list[str] | None:
            return listed_ids(name, self._base.tables.get(name), file_bytes(), most)

        def parsed() -> Docs:
            # Checked when its documents are read: a peek at its ids (``listed``) that
            # spares the parse spares the check too.
            self._check(name, file_bytes())
            return self.parse_file(name, file_bytes())

        return replay(writes, parsed, listed)

    def set_aside(self, name: str, stamp: str) -> str | None:
        """Link table ``name``'s file into ``damaged/<stamp>/``: the commit that replaces
        or drops the table then leaves its bytes there, and only there."""
        source = self._file(table_file(name))
        if not os.path.lexists(source):
            return None  # missing: nothing to keep
        return self._keep_aside(source, stamp, table_file(name))

    def _keep_log(self) -> str:
        """Link the damaged log into ``damaged/<time>-log-<id>/``: the fold that follows
        replaces ``store.log`` with the records that verified, and the bytes none could
        be proven from stay there, for a person (or a later memwork) to read."""
        return self._keep_aside(self.log_path, self._stamp("log"), wal.LOG_NAME)

    @staticmethod
    def _stamp(what: str) -> str:
        """A new folder name under ``damaged/``: when, what, and a random part."""
        from ..base import ids

        return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{what}-" + ids.new_uuid()[:8]

    def _keep_aside(self, source: str, stamp: str, name: str) -> str:
        names_.check_id(stamp, "damaged folder")
        parent = self._file(DAMAGED)
        folder = os.path.join(parent, stamp)
        try:
            for part in (parent, folder):
                try:
                    os.mkdir(part, DIR_MODE)
                except FileExistsError:
                    if os.path.islink(part) or not os.path.isdir(part):
                        raise StoreUnreadable(
                            f"{part} is not a folder; memwork keeps damaged files only in a "
                            "real folder inside the store (move it away); nothing was changed"
                        ) from None
            target = os.path.join(folder, name)
            if os.path.isdir(source) and not os.path.islink(source):
                # A folder where the file should be (a hand's mistake): it cannot be
                # linked or copied as a file, so it moves aside whole, whatever it holds.
                os.rename(source, target)
                fsync_dir(os.path.dirname(source))
                fsync_dir(folder)
                fsync_dir(parent)
                return f"{DAMAGED}/{stamp}/{name}"
            try:
                os.link(source, target)  # the same bytes, not a copy: instant, no space
            except OSError:
                import shutil  # here: only a repair moves files aside

                shutil.copyfile(source, target, follow_symlinks=False)
            fsync_dir(folder)
            fsync_dir(parent)
        except OSError as exc:
            raise failed_write(exc, f"{folder}") from None
        return f"{DAMAGED}/{stamp}/{name}"

    def read_file(self, name: str) -> tuple[bytes, Docs]:
        """Table ``name``'s file as ``store.json`` lists it: its bytes and documents."""
        raw = self._table_bytes(name)
        return raw, self.parse_file(name, raw)

    def _table_bytes(self, name: str) -> bytes:
        """Table ``name``'s file's bytes, checked against the checksum ``store.json``
        keeps for it."""
        raw = read_store_file(self._file(table_file(name)))
        self._check(name, raw)
        return raw

    def _check(self, name: str, raw: bytes) -> None:
        """Refuse table ``name``'s file when its bytes do not match its checksum."""
        expected = self._base.checksums.get(name)
        if expected is not None and checksum(raw) != expected:
            self.parse_file(name, raw)  # a file that does not even parse says that first
            verify(self._file(table_file(name)), raw, expected)

    def parse_file(self, name: str, raw: bytes) -> Docs:
        """The documents of table ``name``'s file, given its bytes (checked against
        ``store.json``'s version of it)."""
        path = self._file(table_file(name))
        try:
            data = loads(raw)
        except ValueError as exc:
            raise StoreUnreadable(
                f"{path} is not valid JSON ({exc}); it was left untouched — "
                "restore it from a backup or move it away"
            ) from None
        if (
            not isinstance(data, dict)
            or data.get("table") != name
            or not isinstance(data.get("documents"), dict)
        ):
            raise StoreUnreadable(f"{path} is not a memwork table file; it was left untouched")
        expected = self._base.tables.get(name)
        if data.get("version") != expected:
            raise StoreUnreadable(
                f"{path} holds version {data.get('version')} but store.json expects {expected}; "
                "run `memwork doctor`"
            )
        docs: Docs = data["documents"]
        return docs

    # -- committing -------------------------------------------------------------------------
    def commit(self, commit: Commit) -> Manifest:
        """Append the commit to the log and fsync it once (or fold it in with the log when
        it is too big for it); the log is folded once it passes its size or age. Files
        derived from the tables that would keep words the commit removes go with it."""
        stale = [
            name
            for name in self._derived_folders()
            if derived_files.loses_words(name, commit, self._head.tables)
        ]
        head = self._commit(commit)
        for name in stale:
            self._remove_derived(name)
            derived_files.removed(name, self)
        return head

    def _derived_folders(self) -> list[str]:
        """The folders of derived files this store has (none for a store never searched)."""
        try:
            return os.listdir(os.path.join(self.dir, derived_files.FOLDER))
        except OSError:
            return []

    def _remove_derived(self, name: str) -> None:
        """Remove the files of ``cache/<name>/`` after a commit that removed words from the
        store: left as they were, they would keep text the store no longer holds (an
        observation forgotten, a secret redacted, tables a restore replaced) until their
        owner next rewrote them. Their owner rebuilds them from the store."""
        folder = os.path.join(self.dir, derived_files.FOLDER, name)
        if os.path.islink(folder):
            return
        try:
            files = os.listdir(folder)
        except OSError:
            return  # not a folder
        for file in files:
            path = os.path.join(folder, file)
            if os.path.isfile(path) and not os.path.islink(path):
                try:
                    os.unlink(path)
                except OSError:
                    pass  # a read-only folder: the file stays as it was

    def _commit(self, commit: Commit) -> Manifest:
        if self.read_only:
            raise StoreWriteFailed(
                f"the store at {self.dir} is read-only for this user ({self.read_only}); "
                "nothing was written"
            )
        self._refuse_unlisted(
            [n for n in commit.writes if n not in self._head.tables and n not in self._base.tables]
        )
        commit.generation = self._head.generation + 1
        log = self._log
        documents = sum(len(w.put_ids) for w in commit.writes.values())
        # A schema change goes to store.json at once: what reads the folder without
        # the log (an older memwork, doctor) must see the version. Staged tables are
        # table files already, waiting for their rename.
        if (
            log is None
            or not log.writable
            or log.damaged
            or self._manifest_damaged
            or log.version != wal.FORMAT_VERSION
            or documents > DIRECT_DOCUMENTS
            or commit.schema_version is not None
            or any(w.staged is not None for w in commit.writes.values())
        ):
            self.fold(commit)
            return self._head
        now = time.time()
        record = wal.encode(commit, now)  # a value that is not JSON stops it here
        if log.end + len(record) > self.log_limit:
            self.fold(commit)
            return self._head
        self._append(log, record)
        self._records.append(_light(commit))
        self._head = wal.head_after(self._head, self._records[-1:])
        if log.started is None:
            log.started = now
        if (
            log.end > self.log_limit
            or len(self._records) >= self.log_records
            or now - log.started >= self.log_seconds
        ):
            # Not in this commit: the store folds once the lock is let go, in the
            # background or after the call's answer (Store.fold_mode). Nor twice: a
            # fold another process is preparing takes this record with it.
            from . import fold_outside

            self.fold_due = not fold_outside.claimed(self.dir, log.ident)
        return self._head

    def _append(self, log: _Log, record: bytes) -> None:
        try:
            if log.size != log.end:
                os.ftruncate(log.fd, log.end)  # a commit a crash cut short: never acknowledged
                log.size = log.end
            _write_all(log.fd, record, log.end)
        except OSError as exc:
            try:  # a full disk: take the partial record back, so nothing half lands
                os.ftruncate(log.fd, log.end)
            except OSError:
                log.size = -1  # the next commit truncates it
            raise failed_write(exc, f"the store at {self.dir}") from None
        log.end += len(record)
        log.size = log.end
        if fsync_enabled():
            self._unsynced = log  # made durable when the lock is let go (release)

    def fold_log(self) -> None:
        if self.read_only:
            raise StoreWriteFailed(
                f"the store at {self.dir} is read-only for this user ({self.read_only}); "
                "nothing was written"
            )
        self.fold()

    def fold_wanted(self) -> bool:
        self.fold_unwanted()
        log = self._log
        if log is None:
            return True
        try:
            st = os.stat(self.log_path, follow_symlinks=False)
        except OSError:
            return True  # the fold under the lock says what is wrong
        if (st.st_dev, st.st_ino) != log.ident:
            return False  # folded by another process: its records are in the tables
        # Claimed before the lock is waited for: of eight writers whose commits asked
        # for this fold, one prepares it and the others never take the lock for it.
        claim = self._new_claim(log.ident)
        if claim is None:
            return False  # another process prepares this very fold
        if claim:
            self._claimed = (log.ident, claim)
        return True  # claimed, or the claim could not be made: the lock decides

    def _new_claim(self, ident: tuple[int, int]) -> str | None | Literal[False]:
        """A claim on the fold of the log ``ident`` (its path); None while another
        process holds one, False when no claim file could be made (a full disk)."""
        from . import fold_outside

        try:
            return fold_outside.claim(self.dir, ident)
        except OSError:
            return False

    def fold_unwanted(self) -> None:
        if self._claimed is not None:
            from . import fold_outside

            fold_outside.let_go(self._claimed[1])
            self._claimed = None

    def fold_begin(self) -> FoldPlan | str | None:
        log = self._log
        taken = self._claimed
        if taken is None or log is None or taken[0] != log.ident:
            self.fold_unwanted()  # a claim on a log folded since
            taken = None
        if (
            self.read_only
            or log is None
            or not log.writable
            or log.damaged
            or self._manifest_damaged
            or log.version != wal.FORMAT_VERSION
            or log.size != log.end
            or not self._records
        ):
            self.fold_unwanted()
            return None  # damage, an old format, a torn tail: the fold under the lock
        # Imported here: a read (``memwork context``) never folds, so never loads it.
        from . import fold_outside

        claim: str | None | Literal[False]
        if taken is not None:
            claim, self._claimed = taken[1], None  # taken by fold_wanted
        else:
            claim = self._new_claim(log.ident)
            if claim is False:
                return None
        if claim is None:
            return NO_FOLD_NEEDED  # another process prepares this very fold
        plan = fold_outside.FoldPlan(self._base, list(self._records), log.ident, log.end)
        plan.claim = claim
        return plan

    def fold_prepare(self, plan: object) -> None:
        from . import fold_outside

        fold_outside.prepare(self.dir, _plan(plan))

    def fold_finish(self, plan: object) -> bool:
        from . import fold_outside

        plan = _plan(plan)
        log = self._log
        if log is None or log.ident != plan.ident or self._base is not plan.base:
            plan.discard()
            return True  # another process folded this log meanwhile
        if (
            log.damaged
            or log.size != log.end
            or log.end < plan.end
            or not all(os.path.isfile(p) for p in plan.staged.values())
        ):
            plan.discard()  # damage since, or its temp files swept away by an open
            return False
        try:
            tail = os.pread(log.fd, log.end - plan.end, plan.end)
        except OSError:
            plan.discard()
            return False
        manifest = plan.manifest()
        files = {MANIFEST_NAME: manifest.to_bytes(), wal.LOG_NAME: wal.header(manifest.generation)}
        files[wal.LOG_NAME] += tail  # the records appended since the plan, as they are
        try:
            journal.commit(
                self.dir, files, plan.deletes(), fold_outside.TAG, plan.staged, staged_synced=True
            )
        finally:
            plan.staged.clear()  # the journal owns them now (or removed them)
            plan.discard()
        if self._unsynced is log:
            self._unsynced = None  # the journal made the new log durable: it holds it
        self.fold_due = False
        self._load(manifest, known={c.generation: c for c in self._records})
        return True

    def fold(self, extra: Commit | None = None, *, txid: str = "fold") -> None:
        """Write the log's records (and ``extra``, a commit that skips the log) into the
        table files, with ``store.json`` and a fresh log, in one journaled commit."""
        records = [*self._records, *([extra] if extra is not None else [])]
        log = self._log
        if self._manifest_damaged:
            self._keep_aside(self._file(MANIFEST_NAME), self._stamp("manifest"), MANIFEST_NAME)
            self._manifest_damaged = False
        elif not records and log is not None and log.version == wal.FORMAT_VERSION:
            if not (log.writable and log.damaged):
                return
        if log is not None and log.writable and log.damaged:
            self._keep_log()  # before anything replaces it: its unread bytes stay on disk
        target = wal.head_after(self._base, records)
        names: dict[str, None] = {}
        for commit in records:
            names.update(dict.fromkeys(commit.writes))
            names.update(dict.fromkeys(commit.drops))
        tag = extra.txid if extra is not None else txid
        # Each table file is written beside its target as soon as it is encoded, so a
        # big fold holds one table's bytes at a time; the journal renames them all in.
        staged: dict[str, str] = {}
        written: list[str] = []
        # Tables the fold leaves alone keep their checksums; each one it writes gets its own.
        sums = {
            n: s for n, s in self._base.checksums.items() if n in target.tables and n not in names
        }
        try:
            for name in names:
                if name not in target.tables:
                    continue
                last = extra.writes.get(name) if extra is not None else None
                if last is not None and last.staged is not None:
                    path = _staged_path(last.staged)
                    staged[table_file(name)] = path
                    known = self._staged_sums.pop(path, None)
                    sums[name] = known or checksum(read_store_file(path))
                    continue
                data = self._folded(name, records, target.tables[name])
                path = write_temp(self._file(table_file(name)), data, tag, sync=False)
                written.append(path)
                staged[table_file(name)] = path
                sums[name] = checksum(data)
        except BaseException as exc:
            for path in written:  # nothing names them yet: they go at once
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
            if isinstance(exc, OSError):
                raise failed_write(exc, f"the store at {self.dir}") from None
            raise
        target.checksums = sums
        files = {MANIFEST_NAME: target.to_bytes(), wal.LOG_NAME: wal.header(target.generation)}
        deletes = [table_file(n) for n in self._base.tables if n not in target.tables]
        # From here the journal owns the temp files: it removes them if it fails before
        # it is written, and renames them in (now or on the next open) once it is.
        journal.commit(self.dir, files, deletes, tag, staged)
        if self._unsynced is log:
            self._unsynced = None  # the journal made the table files durable: they hold it
        self.fold_due = False
        self._load(target)

    def _folded(self, name: str, records: list[Commit], version: int) -> bytes:
        """Table ``name``'s new file: its file at ``store.json``'s version with the
        records' writes applied (only those after the last that replaced it)."""
        writes = table_writes(records, name)
        for i in range(len(writes) - 1, -1, -1):
            if writes[i].replace:
                writes = writes[i:]
                break
        first = writes[0]
        if first.replace or name not in self._base.tables:
            return table_bytes(name, replay(writes, dict), version)
        before = self._base.tables[name]
        if len(writes) == 1 and first.base is not None:
            # Only this process's commit touches it, and it read the very documents the
            # file holds: keep their bytes without parsing the file again.
            return table_bytes(
                name,
                first.docs,
                version,
                before=self._committed_bytes(name),
                before_docs=first.base,
                before_version=before,
                touched=first.put_ids,
            )
        raw, file_docs = self.read_file(name)
        touched = {i for write in writes for i in write.put_ids}
        return table_bytes(
            name,
            replay(writes, lambda: file_docs),
            version,
            before=raw,
            before_docs=file_docs,
            before_version=before,
            touched=touched,
        )

    # -- staging ------------------------------------------------------------------------------
    def stage(self, name: str, docs: Docs) -> object | None:
        """Write table ``name`` whole beside its file, as this transaction's commit (the
        next generation) will have it; the commit's journal renames it in."""
        if self.read_only:
            return None
        data = table_bytes(name, docs, self._head.generation + 1)
        try:
            path = write_temp(self._file(table_file(name)), data, "stage", sync=False)
        except OSError as exc:
            raise failed_write(exc, f"the store at {self.dir}") from None
        self._staged_sums[path] = checksum(data)
        return path

    def read_staged(self, handle: object) -> Docs:
        path = _staged_path(handle)
        data = load_file(path)
        docs: Docs = data["documents"]
        return docs

    def discard(self, handle: object) -> None:
        self._staged_sums.pop(_staged_path(handle), None)
        try:
            os.unlink(_staged_path(handle))
        except FileNotFoundError:
            pass

    def _committed_bytes(self, name: str) -> bytes | None:
        """The table's committed file (None when it cannot be read: it is then encoded whole)."""
        path = self._file(table_file(name))
        try:
            raw = read_store_file(path)
        except StoreUnreadable:
            return None
        try:
            self._check(name, raw)
        except StoreUnreadable:
            # Damaged since this process read it: what replaces it comes from that read,
            # and the damaged bytes are kept, not overwritten.
            self._keep_aside(path, self._stamp("table"), table_file(name))
            return None
        return raw

    def _refuse_unlisted(self, new_tables: list[str]) -> None:
        """Never overwrite a table file that store.json does not name.

        Such a file means the manifest lost its entry (damage, a hand edit): its
        records are still on disk, invisible, and writing the "new" table would
        destroy them.
        """
        for name in new_tables:
            path = self._file(table_file(name))
            try:
                os.lstat(path)
            except FileNotFoundError:
                continue
            try:
                version = load_file(path).get("version", "N")
            except (StoreUnreadable, AttributeError):
                version = "N"
            raise StoreUnreadable(
                f"{path} exists but store.json does not list table {name!r}, so memwork will "
                f"not overwrite it; nothing was written. To keep its records, add "
                f'"{name}": {version} to "tables" in {self._file(MANIFEST_NAME)}; to discard '
                f"them, move {os.path.basename(path)} out of the store"
            )

    # -- snapshots (store checkpoints) ------------------------------------------------------
    def snapshot_create(
        self, key: str, names: list[str], about: dict[str, Any] | None = None
    ) -> None:
        """Copy each table's file into the pack (a reflink where the filesystem offers
        one); a table the log changed since is written from its documents instead, one
        at a time. Nothing is folded: a table that cannot be read is simply not named."""
        tables = self._head.tables
        logged = {n for c in self._records for n in (*c.writes, *c.drops)}
        self.snapshots.create(
            key,
            [
                (n, tables[n], self._encoded(n) if n in logged else self._file(table_file(n)))
                for n in names
                if n in tables
            ],
            None if about is None else {**about, "schema_version": self._head.schema_version},
            # A copied file carries the checksum its fold recorded: a copy of a file
            # damaged since then is caught when the checkpoint is read, not restored.
            sums=self._base.checksums,
        )

    def snapshot_about(self, key: str) -> dict[str, Any] | None:
        return self.snapshots.about(key)

    def damage_found(self) -> bool:
        return self._manifest_damaged or (self._log is not None and self._log.damaged)

    def _encoded(self, name: str) -> Callable[[], bytes]:
        version = self._head.tables[name]
        return lambda: table_bytes(name, self.read_table(name), version)

    def snapshot_import(self, key: str, tables: dict[str, tuple[int, Docs]]) -> None:
        self.snapshots.create(
            key,
            [
                (name, version, _dumped(name, version, docs))
                for name, (version, docs) in tables.items()
            ],
        )

    def snapshot_read(self, key: str) -> dict[str, tuple[int, Docs]]:
        return self.snapshots.read(key)

    def snapshot_check(self, key: str) -> None:
        self.snapshots.folder_of(key)

    def snapshot_keys(self) -> list[str]:
        return self.snapshots.keys()

    def snapshot_delete(self, key: str) -> None:
        self.snapshots.delete(key)

    def snapshot_sweep(self, keep: set[str]) -> int:
        return self.snapshots.sweep(keep)
