"""``memwork doctor``: check data, schema and locks. It reports; it repairs nothing.

It reads the folder directly instead of opening a :class:`Store`, because
opening replays an interrupted commit — a repair the user should hear about
first. A commit interrupted after its journal was written is not a problem:
the next open completes it, so the checks below look at the store as that
open will leave it (the journal's temp files in place of their targets).
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .errors import StoreUnreadable
from .storage import journal, schema
from .storage.codec import load_file
from .storage.folder_storage import SNAPSHOTS, table_file
from .storage.journal import JOURNAL_NAME
from .storage.lock import InterProcessLock
from .storage.manifest import MANIFEST_NAME, Manifest
from .storage.store import LOCK_NAME, Store
from .tables import logical_name


@dataclass
class Check:
    """One finding."""

    name: str
    status: str  # ok | warn | problem
    detail: str


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
                found.extend(
                    f"{SNAPSHOTS}/{entry.name}/{e.name}"
                    for e in os.scandir(entry.path)
                    if e.is_symlink()
                )
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


def _snapshots(folder: Path, manifest: Manifest, pending: dict[str, str]) -> Check | None:
    base = folder / SNAPSHOTS
    if not base.is_dir() or base.is_symlink():
        return None
    keys = {e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False)}
    if not keys:
        return None
    recorded: set[str] = set()
    if "checkpoints" in manifest.tables:
        name = table_file("checkpoints")
        try:
            data = load_file(folder / (pending.get(name) or name))
            recorded = set((data.get("documents") or {}).keys())
        except (StoreUnreadable, AttributeError):
            return None  # reported with the tables
    orphans = sorted(keys - recorded)
    if not orphans:
        return None
    size = sum(
        e.stat(follow_symlinks=False).st_size
        for key in orphans
        for e in os.scandir(base / key)
        if e.is_file(follow_symlinks=False)
    )
    return Check(
        "snapshots",
        "warn",
        f"{len(orphans)} snapshot folders no checkpoint names ({size / 1e6:.1f} MB, left by "
        "interrupted checkpoint commands); the next checkpoint create, restore or delete "
        "removes them",
    )


def diagnose(folder: Path) -> list[Check]:
    """Every check, in the order a user would want to read them."""
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
                f"version {manifest.schema_version}: migrated (with a backup) on next open",
            )
        )
    else:
        checks.append(Check("schema", "ok", f"version {manifest.schema_version}"))
    checks.append(_lock_check(folder))
    permissions = _permissions(folder)
    if permissions:
        checks.append(permissions)
    bad = 0
    documents = 0
    for name, version in sorted(manifest.tables.items()):
        file = table_file(name)
        path = folder / (pending.get(file) or file)
        try:
            data = load_file(path)
        except StoreUnreadable as exc:
            checks.append(Check(f"table {name}", "problem", str(exc)))
            bad += 1
            continue
        if not isinstance(data, dict) or data.get("version") != version:
            found = data.get("version") if isinstance(data, dict) else None
            checks.append(
                Check(f"table {name}", "problem", f"{file} version {found}, expected {version}")
            )
            bad += 1
            continue
        documents += len(data.get("documents") or {})
        wrong = _invalid_record(name, data.get("documents") or {})
        if wrong:
            checks.append(Check(f"table {name}", "problem", wrong))
            bad += 1
    checks.append(
        Check(
            "tables",
            "ok" if not bad else "problem",
            f"{len(manifest.tables)} table files, {documents} documents, {bad} unreadable",
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
    orphans = _snapshots(folder, manifest, pending)
    if orphans:
        checks.append(orphans)
    curation = _curation(folder, manifest, pending)
    if curation:
        checks.append(curation)
    logical = sorted({logical_name(n) for n in manifest.tables})
    checks.append(Check("contents", "ok", ", ".join(logical) or "empty store"))
    return checks


def _curation(folder: Path, manifest: Manifest, pending: dict[str, str]) -> Check | None:
    """Review on with no curator registered: the first key to decide would become it."""
    if "meta" not in manifest.tables:
        return None
    file = table_file("meta")
    try:
        data = load_file(folder / (pending.get(file) or file))
    except StoreUnreadable:
        return None
    docs = data.get("documents") if isinstance(data, dict) else None
    if not isinstance(docs, dict):
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

    from .interop.importer import _model_for
    from .models.base import _describe

    if not isinstance(documents, dict):
        return f"{table_file(name)}: its documents are not an object"
    logical = logical_name(name)
    for key, doc in documents.items():
        if not isinstance(doc, dict):
            return f"{table_file(name)}: record {str(key)[:40]!r} is not an object"
        model = _model_for(logical, doc)
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
    known = {table_file(n) for n in manifest.tables} | {MANIFEST_NAME, JOURNAL_NAME, LOCK_NAME}
    known |= set(pending) | set(pending.values())
    unlisted, strays = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.name in known or not entry.is_file(follow_symlinks=False):
            continue
        if journal.is_table_file(entry.name) and not journal.is_temp_name(entry.name):
            try:
                data = load_file(Path(entry.path))
            except StoreUnreadable:
                data = None
            if isinstance(data, dict) and data.get("table") == entry.name[: -len(".json")]:
                unlisted.append(entry.name)
                continue
        strays.append(entry.name)
    return unlisted, strays


def report(folder: Path) -> dict[str, Any]:
    """Checks as JSON, with an overall verdict."""
    checks = diagnose(folder)
    return {
        "checks": [asdict(c) for c in checks],
        "ok": not any(c.status == "problem" for c in checks),
        "store": str(folder),
    }


def report_op(store: Store) -> dict[str, Any]:
    """The ``doctor`` operation at the agents' doors: the open store's checks, with
    an overall verdict (``ok``); a Redis store is checked as ``memwork doctor`` checks it."""
    if store.backend == "redis":
        from .doctor_redis import report as redis_report

        return redis_report(store.url)  # type: ignore[attr-defined]  # a RedisStore's URL
    if store.backend != "folder":
        return {"checks": [], "ok": True, "store": store.label}
    return report(store.path)
