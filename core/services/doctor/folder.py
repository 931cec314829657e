"""``memwork doctor`` on a folder store: check data, schema and locks. It reports; it
repairs nothing.

It reads the folder directly instead of opening a :class:`Store`, because
opening replays an interrupted commit — a repair the user should hear about
first. A commit interrupted after its journal was written is not a problem:
the next open completes it, so the checks below look at the store as that
open will leave it (the journal's temp files in place of their targets).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any

from ...base.errors import InvalidInput, StoreUnreadable
from ...storage import fold_outside, journal, schema, wal
from ...storage.backend import Commit, Docs, replay, table_writes
from ...storage.codec import load_file, read_store_file
from ...storage.folder_backend import LOCK_NAME
from ...storage.journal import JOURNAL_NAME
from ...storage.lock import InterProcessLock, LockTimeout
from ...storage.manifest import MANIFEST_NAME, Manifest, table_file
from ...storage.snapshot_files import SNAPSHOTS, SnapshotFiles
from ...storage.table_sums import verify
from ...storage.tables import logical_name
from .findings import Check, verdict


def _lock_check(folder: Path) -> Check:
    try:
        lock = InterProcessLock(folder / LOCK_NAME, 0)
        busy = lock.is_held_elsewhere()
    except StoreUnreadable as exc:
        return Check("lock", "problem", str(exc))
    if busy:
        return Check("lock", "warn", "held by another process right now (a writer is busy)")
    if lock.read_only:
        return Check("lock", "ok", f"free (read-only for this user: {lock.read_only})")
    return Check("lock", "ok", "free")


def _links(folder: Path) -> list[str]:
    found = [e.name for e in os.scandir(folder) if e.is_symlink()]
    snapshots = folder / SNAPSHOTS
    if snapshots.is_dir() and not snapshots.is_symlink():
        for entry in os.scandir(snapshots):
            if entry.is_symlink():
                found.append(f"{SNAPSHOTS}/{entry.name}")
            elif entry.is_dir(follow_symlinks=False):
                try:
                    inside = list(os.scandir(entry.path))
                except FileNotFoundError:
                    continue  # a checkpoint deleted since the listing
                found.extend(f"{SNAPSHOTS}/{entry.name}/{e.name}" for e in inside if e.is_symlink())
    return found


def _journal(folder: Path, checks: list[Check]) -> dict[str, str]:
    """Check a pending journal; returns target → the temp file that will replace it
    (a file the journal deletes maps to "")."""
    try:
        plan = journal.read_plan(folder)
    except StoreUnreadable as exc:
        checks.append(
            Check("journal", "problem", f"{exc} (every command refuses the store until then)")
        )
        return {}
    if plan is None:
        return {}
    renames, deletes = plan
    checks.append(
        Check(
            "journal",
            "warn",
            "an interrupted commit will be completed by the next open (nothing is lost; "
            "the checks below read the store as that open will leave it)",
        )
    )
    pending = {name: "" for name in deletes}
    pending.update({final: tmp for tmp, final in renames if os.path.lexists(folder / tmp)})
    return pending


def _permissions(folder: Path) -> Check | None:
    mode = stat.S_IMODE(os.stat(folder).st_mode)
    if mode & 0o077:
        return Check(
            "permissions",
            "warn",
            f"the store folder is {mode:04o}: other users may read it "
            f"(`chmod 700 {folder}` makes it private, as new stores are)",
        )
    return None


def _log(
    folder: Path, manifest: Manifest, pending: dict[str, str], checks: list[Check]
) -> list[Commit]:
    """Check ``store.log``; returns its records (the commits since the last fold)."""
    path = folder / (pending.get(wal.LOG_NAME) or wal.LOG_NAME)
    if not os.path.lexists(path):
        checks.append(Check("log", "ok", "none yet (the next commit starts it)"))
        return []
    try:
        data = read_store_file(path)
        tail = wal.read_log(folder / wal.LOG_NAME, data, manifest.generation)
    except StoreUnreadable as exc:
        checks.append(Check("log", "problem", str(exc)))
        return []
    size = f"{len(data) / 1024:.0f} KiB"
    version = tail.version
    older = (
        f"; format {version}, rewritten by the next write" if version != wal.FORMAT_VERSION else ""
    )
    checks.append(
        Check("log", "ok", f"{len(tail.records)} commits since the last fold ({size}){older}")
    )
    for damage in tail.damage:
        checks.append(
            Check(
                "log",
                "problem" if damage.serious else "warn",
                f"{damage.describe()}; the next write keeps the log in damaged/ and goes on "
                "with every record that verifies",
            )
        )
    return tail.records


def _head_docs(
    folder: Path, manifest: Manifest, records: list[Commit], name: str, pending: dict[str, str]
) -> Docs | None:
    """Table ``name`` as the store holds it now (its file, then the log); None when it
    cannot be read (reported with the tables)."""

    def before() -> Docs | None:
        if name not in manifest.tables:
            return None
        file = table_file(name)
        data = load_file(folder / (pending.get(file) or file))
        return dict(data.get("documents") or {})

    try:
        return replay(table_writes(records, name), before)
    except (StoreUnreadable, AttributeError):
        return None


def _over(docs: Any, records: list[Commit], name: str) -> Any:
    """A table file's documents with the log's later writes to it applied."""
    writes = table_writes(records, name)
    if not writes or not isinstance(docs, dict):
        return docs
    try:
        return replay(writes, lambda: docs)
    except (StoreUnreadable, AttributeError):
        return docs  # the log's own damage is reported with the log


CHECKPOINTS = "checkpoints"


def _superseded(records: list[Commit]) -> set[str]:
    """Tables a record of the log replaces whole or drops: their files are read no more."""
    return {
        name
        for commit in records
        for name in (*commit.drops, *(n for n, w in commit.writes.items() if w.replace))
    }


def _repair(
    folder: Path,
    manifest: Manifest,
    records: list[Commit],
    pending: dict[str, str],
    damaged: dict[str, Check],
) -> Check:
    """Name, for each damaged table, the newest checkpoint holding a readable copy of it
    (added to the table's check), and the command that restores it."""
    ordered = _checkpoints_newest_first(folder, manifest, records, pending)
    # No snapshot holds the checkpoints table: any restore rebuilds it from the
    # snapshots on disk, so the newest checkpoint is the one to name.
    rebuilt = {CHECKPOINTS} & damaged.keys()
    newest: dict[str, dict[str, Any]] = {n: ordered[0] for n in rebuilt if ordered}
    for checkpoint in ordered:
        for name in damaged.keys() - newest.keys() - rebuilt:
            if _holds_all(folder, checkpoint, {name}):
                newest[name] = checkpoint
    for name, check in damaged.items():
        found = newest.get(name)
        if found is None:
            check.detail += "; no checkpoint holds a readable copy of it"
        elif name in rebuilt:
            check.detail += (
                f"; restoring any checkpoint rebuilds it from the snapshots on disk, the "
                f"newest being {found['id']}{_when(found)}: "
                f"`memwork checkpoint restore {found['id']}`"
            )
        else:
            check.detail += (
                f"; the newest checkpoint with a readable copy is {found['id']}"
                f"{_when(found)}: `memwork checkpoint restore {found['id']}`"
            )
    wanted = set(damaged) - rebuilt
    covering = next((c for c in ordered if _holds_all(folder, c, wanted)), None)
    if covering is None:
        return Check(
            "repair",
            "problem",
            f"{len(damaged)} damaged tables, and no checkpoint holds a readable copy of every "
            "one; restoring a checkpoint still moves each damaged file aside into damaged/ "
            "(the store then goes on without the tables it holds no copy of)",
        )
    return Check(
        "repair",
        "problem",
        f"run `memwork checkpoint restore {covering['id']}`{_when(covering)}: it restores "
        f"every table to that checkpoint and moves the {len(damaged)} damaged files aside "
        "into damaged/ (nothing is deleted; an automatic checkpoint undoes it)",
    )


def _holds_all(folder: Path, checkpoint: dict[str, Any], names: set[str]) -> bool:
    """Whether the checkpoint's snapshot holds a readable copy of every table named."""
    try:
        return set(SnapshotFiles(folder).read(checkpoint["id"], names)) == names
    except (StoreUnreadable, InvalidInput):
        return False


def _when(checkpoint: dict[str, Any]) -> str:
    created = checkpoint.get("created_at")
    description = checkpoint.get("description")
    about = f", {description!r}" if description else ""
    return f" (taken {created}{about})" if created else ""


def _checkpoints_newest_first(
    folder: Path, manifest: Manifest, records: list[Commit], pending: dict[str, str]
) -> list[dict[str, Any]]:
    """The store's checkpoints, newest first; when the checkpoints table itself cannot be
    read, the snapshots on disk, newest first by their files' times."""
    docs = _head_docs(folder, manifest, records, "checkpoints", pending)
    if docs is not None:
        return sorted(docs.values(), key=lambda d: (d.get("created_at", ""), d["id"]), reverse=True)
    return _on_disk(folder)


def _on_disk(folder: Path) -> list[dict[str, Any]]:
    """The snapshots on disk as checkpoints, newest first: each with the record it keeps
    of itself, or its id alone (a snapshot taken before they described themselves, dated
    by its folder's time)."""
    snaps = SnapshotFiles(folder)
    found = []
    for key in snaps.keys():
        try:
            where = snaps.folder_of(key)
        except (StoreUnreadable, InvalidInput):
            continue
        if where is not None:
            about = snaps.about(key) or {"id": key}
            try:
                written = os.stat(where).st_mtime
            except FileNotFoundError:
                continue  # a checkpoint deleted since the listing
            found.append((str(about.get("created_at", "")), written, about))
    return [about for _, _, about in sorted(found, key=lambda f: f[:2], reverse=True)]


def _restorable(checkpoints: list[dict[str, Any]], why: str) -> Check | None:
    """The checkpoints a restore can bring the store back to, newest first, with the
    command (None when there are none)."""
    if not checkpoints:
        return None
    newest, *older = checkpoints
    more = (
        f"; older ones: {', '.join(c['id'] for c in older[:5])}"
        + (f" and {len(older) - 5} more" if len(older) > 5 else "")
        if older
        else ""
    )
    return Check(
        "repair",
        "problem",
        f"{why}; the newest checkpoint is {newest['id']}{_when(newest)}: "
        f"`memwork checkpoint restore {newest['id']}`{more}",
    )


def _snapshots(
    folder: Path,
    manifest: Manifest,
    records: list[Commit],
    pending: dict[str, str],
    log_damaged: bool = False,
) -> Check | None:
    base = folder / SNAPSHOTS
    if not base.is_dir() or base.is_symlink():
        return None
    keys = {e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False)}
    if not keys:
        return None
    checkpoints = _head_docs(folder, manifest, records, "checkpoints", pending)
    if checkpoints is None and "checkpoints" in manifest.tables:
        return None  # reported with the tables
    recorded = set(checkpoints or ())
    orphans = sorted(keys - recorded)
    if not orphans:
        return None
    snaps = SnapshotFiles(folder)
    described = [key for key in orphans if snaps.about(key) is not None]
    if log_damaged and described:
        # Their records may be among the commits the damaged log lost: they are
        # checkpoints, not leftovers, and the next checkpoint command records them again.
        return Check(
            "snapshots",
            "warn",
            f"{len(described)} checkpoints no record names, perhaps lost with the damaged "
            f"log ({', '.join(described[:5])}); each still restores, and the next checkpoint "
            "command gives them their records back",
        )
    size = sum(_files_size(base / key) for key in orphans)
    return Check(
        "snapshots",
        "warn",
        f"{len(orphans)} snapshot folders no checkpoint names ({size / 1e6:.1f} MB, left by "
        "interrupted checkpoint commands); the next checkpoint create, restore or delete "
        "removes them",
    )


def _files_size(folder: Path) -> int:
    """The bytes of the files directly in ``folder``. The checks run while writers
    work: a checkpoint's temporary file, or the whole folder, may go between the
    listing and the look at a file, and is then not counted."""
    size = 0
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return 0
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False):
                size += entry.stat(follow_symlinks=False).st_size
        except FileNotFoundError:
            continue
    return size


#: Times the checks run again without the lock when they found something while a
#: commit or fold changed the store under them, before they run with it.
_TRIES = 3
#: Seconds doctor waits for the lock for its last run (a writer holds it for
#: milliseconds; a process that holds it longer is named by the lock check).
_LOCK_WAIT = 5.0


def diagnose(folder: Path) -> list[Check]:
    """Every check, in the order a user would want to read them.

    The checks read the folder without the store's lock, so a store in use is not held
    up. A writer that commits, folds or takes a checkpoint while they read can make the
    store look damaged for that moment: a table replaced after store.json was read, a
    commit's journal, a fold's temporary file, a snapshot whose checkpoint is not yet
    committed. So what the checks find is confirmed before it is reported: run again
    while commits or folds changed the store under them, then, for a problem, once with
    the lock held (writers wait for as long as that run takes: ~1.5 s for 100,000 long
    notes). Warnings alone found while nothing changed and no writer held the lock are
    reported as they are. What doctor reports is what the store holds, never a
    writer's work in progress."""
    checks: list[Check] = []
    for attempt in range(_TRIES):
        before = _moment(folder)
        try:
            checks = _checks(folder)
        except FileNotFoundError:
            # A file the checks listed went before they read it: a writer at work (a
            # checkpoint's temporary file renamed, a snapshot deleted). Look again.
            time.sleep(0.01 * (attempt + 1))
            continue
        if _sound(checks):
            return checks
        if _moment(folder) == before:
            # Free when the checks began is not enough: a writer that took the lock after
            # that check may be between writing a checkpoint's snapshot and committing it.
            if _settled_warnings(checks) and not _held_now(folder):
                return checks
            break  # the run under the lock says the rest
        time.sleep(0.01 * (attempt + 1))  # a fold under way: give it time to end
    # The lock as the unlocked runs found it (asked now if none ran to the end): once
    # doctor holds it, it cannot ask whether another process does.
    held = next((c for c in checks if c.name == "lock"), None) or _lock_check(folder)
    lock = InterProcessLock(folder / LOCK_NAME, _LOCK_WAIT)
    try:
        lock.acquire()
    except (LockTimeout, OSError, StoreUnreadable):
        lock.close()
        return checks or [held]  # the lock check names whoever holds it, or why it cannot
    try:
        return _checks(folder, held)
    finally:
        lock.release()
        lock.close()


def _held_now(folder: Path) -> bool:
    """Whether another process holds the store's lock at this moment."""
    try:
        return InterProcessLock(folder / LOCK_NAME, 0).is_held_elsewhere()
    except (OSError, StoreUnreadable):
        return True  # cannot tell: the run under the lock decides


def _settled_warnings(checks: list[Check]) -> bool:
    """Whether the checks found only warnings, with the lock free when they looked."""
    return all(c.status != "problem" for c in checks) and all(
        c.status == "ok" for c in checks if c.name == "lock"
    )


def _sound(checks: list[Check]) -> bool:
    """Whether the checks found nothing (a busy lock is no finding about the data)."""
    return all(c.status == "ok" or c.name == "lock" for c in checks)


def _moment(folder: Path) -> tuple[tuple[int, int, int] | None, ...]:
    """What every commit or fold changes: store.json, the journal and the log, each as
    (inode, size, modification time), None when absent."""
    found: list[tuple[int, int, int] | None] = []
    for name in (MANIFEST_NAME, JOURNAL_NAME, wal.LOG_NAME):
        try:
            st = os.stat(folder / name, follow_symlinks=False)
        except OSError:
            found.append(None)
            continue
        found.append((st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(found)


def _checks(folder: Path, lock: Check | None = None) -> list[Check]:
    """One run of the checks; ``lock``: the lock check to report, when this run holds
    the lock itself (it cannot ask whether another process holds it)."""
    checks: list[Check] = []
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        return [Check("store", "problem", f"no memwork store at {folder}")]
    except OSError as exc:
        return [Check("store", "problem", f"cannot use {folder}: {exc.strerror}")]
    if not stat.S_ISDIR(mode):
        return [Check("store", "problem", f"{folder} is not a folder")]
    checks.append(Check("store", "ok", str(folder)))
    links = _links(folder)
    if links:
        checks.append(
            Check(
                "links",
                "problem",
                f"symbolic links inside the store ({', '.join(sorted(links)[:5])}); memwork "
                "refuses to open it until each is replaced by the file or folder itself",
            )
        )
        return checks
    pending = _journal(folder, checks)
    try:
        manifest = Manifest.read(folder / (pending.get(MANIFEST_NAME) or MANIFEST_NAME))
    except StoreUnreadable as exc:
        checks.append(Check("manifest", "problem", str(exc)))
        repair = _restorable(
            _on_disk(folder),
            "a checkpoint restore rebuilds store.json from the table files, restores every "
            "table the checkpoint holds and keeps the damaged file in damaged/",
        )
        if repair:
            checks.append(repair)
        return checks
    if manifest.schema_version > schema.SCHEMA_VERSION:
        checks.append(
            Check(
                "schema",
                "problem",
                f"version {manifest.schema_version} is newer than this memwork "
                f"({schema.SCHEMA_VERSION}); upgrade memwork",
            )
        )
    elif manifest.schema_version < schema.SCHEMA_VERSION:
        checks.append(
            Check(
                "schema",
                "warn",
                f"version {manifest.schema_version}: migrated "
                f"{'(with a backup) ' if schema.needs_backup(manifest.schema_version) else ''}"
                "on next open",
            )
        )
    else:
        checks.append(Check("schema", "ok", f"version {manifest.schema_version}"))
    checks.append(lock or _lock_check(folder))
    lost = len(checks)
    records = _log(folder, manifest, pending, checks)
    lost_commits = any(c.name == "log" and c.status == "problem" for c in checks[lost:])
    # A torn tail too may have held a commit (a damaged last record looks like a crash's).
    log_damaged = any(c.name == "log" and c.status != "ok" for c in checks[lost:])
    permissions = _permissions(folder)
    if permissions:
        checks.append(permissions)
    bad = 0
    documents = 0
    damaged: dict[str, Check] = {}
    superseded = _superseded(records)
    for name, version in sorted(manifest.tables.items()):
        if name in superseded:
            continue  # the log replaces or drops it: its file is not read any more
        file = table_file(name)
        path = folder / (pending.get(file) or file)
        try:
            data = load_file(path)
            verify(path, read_store_file(path), manifest.checksums.get(name))
        except StoreUnreadable as exc:
            damaged[name] = Check(f"table {name}", "problem", str(exc))
            checks.append(damaged[name])
            bad += 1
            continue
        if not isinstance(data, dict) or data.get("version") != version:
            found = data.get("version") if isinstance(data, dict) else None
            damaged[name] = Check(
                f"table {name}", "problem", f"{file} version {found}, expected {version}"
            )
            checks.append(damaged[name])
            bad += 1
            continue
        documents += len(data.get("documents") or {})
        # Checked as commands will read it: the log's later writes over the file's.
        wrong = _invalid_record(name, _over(data.get("documents") or {}, records, name))
        if wrong:
            checks.append(Check(f"table {name}", "problem", wrong))
            bad += 1
    head = wal.head_after(manifest, records)
    for name in sorted(set(head.tables) & superseded):
        # Written whole by the log since the last fold: its records are the log's.
        written = _head_docs(folder, manifest, records, name, pending)
        wrong = _invalid_record(name, written) if written is not None else None
        if wrong:
            checks.append(Check(f"table {name}", "problem", wrong))
            bad += 1
    if damaged:
        checks.append(_repair(folder, manifest, records, pending, damaged))
    elif lost_commits:
        repair = _restorable(
            _checkpoints_newest_first(folder, manifest, records, pending),
            "commits lost with the damaged log cannot be read back; to return to a state "
            "the store held whole, restore a checkpoint",
        )
        if repair:
            checks.append(repair)
    checks.append(
        Check(
            "tables",
            "ok" if not bad else "problem",
            f"{len(manifest.tables)} table files, {documents} documents as of the last fold, "
            f"{bad} unreadable",
        )
    )
    unlisted, strays = _unlisted(folder, manifest, pending)
    if unlisted:
        checks.append(
            Check(
                "unlisted tables",
                "problem",
                f"{len(unlisted)} table files store.json does not list "
                f"({', '.join(unlisted[:5])}): their records are invisible and memwork will "
                'not write those tables; add each back to "tables" in store.json with the '
                "version the file holds, or move the file out of the store",
            )
        )
    if strays:
        checks.append(
            Check(
                "files",
                "warn",
                f"{len(strays)} files the store does not use: {', '.join(strays[:5])}",
            )
        )
    orphans = _snapshots(folder, manifest, records, pending, log_damaged)
    if orphans:
        checks.append(orphans)
    curation = _curation(_head_docs(folder, manifest, records, "meta", pending))
    if curation:
        checks.append(curation)
    logical = sorted({logical_name(n) for n in head.tables})
    checks.append(Check("contents", "ok", ", ".join(logical) or "empty store"))
    return checks


def _curation(docs: Docs | None) -> Check | None:
    """Review on with no curator registered (``docs``: the meta table as the store holds
    it, None when it has none or it cannot be read): the first key to decide would
    become the curator."""
    if not docs:
        return None
    config = docs.get("config") or {}
    if config.get("review") != "on" or docs.get("curator"):
        return None
    return Check(
        "review",
        "warn",
        "review is on but no curator key is registered: the first key to decide becomes "
        "the store's curator; register yours now with: memwork curator init",
    )


def _invalid_record(name: str, documents: Any) -> str | None:
    """The first record of a table that its model refuses (a lesson whose confidence is
    "high", say), as one line; None when every record reads as memwork writes it.

    Commands that read such a record would fail on it: doctor names it instead.
    """
    from pydantic import ValidationError

    from ...models.base import _describe
    from ...models.by_table import model_for

    if not isinstance(documents, dict):
        return f"{table_file(name)}: its documents are not an object"
    logical = logical_name(name)
    for key, doc in documents.items():
        if not isinstance(doc, dict):
            return f"{table_file(name)}: record {str(key)[:40]!r} is not an object"
        model = model_for(logical, doc)
        if model is None:
            return None  # a store-local table (checkpoints, imports): no model to check
        try:
            model.model_validate({k: v for k, v in doc.items() if k not in ("over_limit", "chars")})
        except ValidationError as exc:
            # A value of the wrong kind is what commands fail on; a field an older
            # memwork did not write (or one it no longer knows) is read with a default.
            wrong = [e for e in exc.errors() if e["type"] not in ("missing", "extra_forbidden")]
            if wrong:
                field, rule = _describe(wrong[0])
                return (
                    f"{table_file(name)}: record {str(key)[:40]!r}: {field}: {rule}; commands "
                    "that read it fail — correct or remove it by hand, or restore the table "
                    "from a checkpoint"
                )
    return None


def _unlisted(
    folder: Path, manifest: Manifest, pending: dict[str, str]
) -> tuple[list[str], list[str]]:
    """Table files store.json does not name, and other files the store does not use."""
    known = {table_file(n) for n in manifest.tables}
    known |= {MANIFEST_NAME, JOURNAL_NAME, LOCK_NAME, wal.LOG_NAME}
    known |= set(pending) | set(pending.values())
    unlisted, strays = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name in known or not entry.is_file(follow_symlinks=False):
            continue
        try:
            written = entry.stat(follow_symlinks=False).st_mtime
        except FileNotFoundError:
            continue  # gone since the folder was listed: a fold's file, renamed or removed
        if fold_outside.being_prepared(entry.name, written):
            continue  # a fold another process prepares while the lock is free
        if journal.is_table_file(entry.name) and not journal.is_temp_name(entry.name):
            try:
                data = load_file(Path(entry.path))
            except FileNotFoundError:
                continue  # gone since the folder was listed, as above
            except StoreUnreadable:
                data = None
            if isinstance(data, dict) and data.get("table") == entry.name[: -len(".json")]:
                unlisted.append(entry.name)
                continue
        strays.append(entry.name)
    return unlisted, strays


def report(folder: Path) -> dict[str, Any]:
    """The folder's checks as JSON, with an overall verdict."""
    return verdict(diagnose(folder), str(folder))
