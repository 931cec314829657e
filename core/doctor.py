"""``memwork doctor``: check data, schema and locks. It reports; it repairs nothing.

It reads the folder directly instead of opening a :class:`Store`, because
opening replays an interrupted commit — a repair the user should hear about
first.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.errors import StoreUnreadable
from core.storage import schema
from core.storage.codec import load_file
from core.storage.folder_storage import table_file
from core.storage.journal import JOURNAL_NAME
from core.storage.lock import InterProcessLock
from core.storage.manifest import MANIFEST_NAME, Manifest
from core.storage.store import LOCK_NAME
from core.tables import logical_name


@dataclass
class Check:
    """One finding."""

    name: str
    status: str  # ok | warn | problem
    detail: str


def _lock_check(folder: Path) -> Check:
    if InterProcessLock(folder / LOCK_NAME, 0).is_held_elsewhere():
        return Check("lock", "warn", "held by another process right now (a writer is busy)")
    return Check("lock", "ok", "free")


def diagnose(folder: Path) -> list[Check]:
    """Every check, in the order a user would want to read them."""
    checks: list[Check] = []
    if not folder.exists():
        return [Check("store", "problem", f"{folder} does not exist")]
    if folder.is_file():
        return [Check("store", "problem", f"{folder} is a file, not a store folder")]
    checks.append(Check("store", "ok", str(folder)))
    try:
        manifest = Manifest.read(folder / MANIFEST_NAME)
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
    if (folder / JOURNAL_NAME).exists():
        checks.append(
            Check("journal", "warn", "an interrupted commit is pending; the next open completes it")
        )
    checks.append(_lock_check(folder))
    bad = 0
    documents = 0
    for name, version in sorted(manifest.tables.items()):
        path = folder / table_file(name)
        try:
            data = load_file(path)
        except StoreUnreadable as exc:
            checks.append(Check(f"table {name}", "problem", str(exc)))
            bad += 1
            continue
        if not isinstance(data, dict) or data.get("version") != version:
            found = data.get("version") if isinstance(data, dict) else None
            checks.append(
                Check(
                    f"table {name}", "problem", f"{path.name} version {found}, expected {version}"
                )
            )
            bad += 1
            continue
        documents += len(data.get("documents") or {})
    checks.append(
        Check(
            "tables",
            "ok" if not bad else "problem",
            f"{len(manifest.tables)} table files, {documents} documents, {bad} unreadable",
        )
    )
    known = {table_file(n) for n in manifest.tables} | {MANIFEST_NAME, JOURNAL_NAME, LOCK_NAME}
    strays = [e.name for e in os.scandir(folder) if e.is_file() and e.name not in known]
    if strays:
        checks.append(
            Check(
                "files",
                "warn",
                f"{len(strays)} files the store does not use: {', '.join(sorted(strays)[:5])}",
            )
        )
    logical = sorted({logical_name(n) for n in manifest.tables})
    checks.append(Check("contents", "ok", ", ".join(logical) or "empty store"))
    return checks


def report(folder: Path) -> dict[str, Any]:
    """Checks as JSON, with an overall verdict."""
    checks = diagnose(folder)
    return {
        "checks": [asdict(c) for c in checks],
        "ok": not any(c.status == "problem" for c in checks),
        "store": str(folder),
    }
