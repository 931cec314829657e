"""Schema versions and the migrations between them.

A store records the schema version that wrote it. Opening an older store
first copies the whole folder beside it (``<store>.backup-v<N>-<time>``) when a
migration ahead rewrites documents, then runs each migration in order inside one
transaction. A newer store is refused untouched: an old memwork must never
rewrite data it does not know.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA_VERSION = 4
#: The shape of records, which an export names: schema 3 changed how a folder store
#: commits, not a record (records 2); schema 4 made relations links (records 3), and an
#: older export's relation fields become links as it is imported.
RECORDS_VERSION = 3

#: A step: called with the open ``Store`` inside the migration's transaction. Typed as
#: Any so that this table stays below the store that runs it (store.py imports it).
Migration = Callable[[Any], None]


def _write_ahead_log(store: Any) -> None:
    """2 → 3: a folder store commits through a write-ahead log (``store.log``,
    core/storage/wal.py), which its first commit starts; no document changes. The
    version moves so that an older memwork, which would not read the log, refuses
    the store instead of missing its latest commits."""


#: ``MIGRATIONS[n]`` turns a version-``n`` store into version ``n + 1``. Steps that
#: rewrite records are domain work: they are registered from above
#: (core/domain/migrations.py) with :func:`register`.
MIGRATIONS: dict[int, Migration] = {2: _write_ahead_log}
#: Migrations that change no document: nothing to copy aside before them.
NO_BACKUP = frozenset({2})


def register(version: int, step: Migration) -> None:
    """Say how a version-``version`` store becomes version ``version + 1``."""
    MIGRATIONS[version] = step


def step(version: int) -> Migration:
    """The step from ``version``; a clear refusal when no module registered it."""
    try:
        return MIGRATIONS[version]
    except KeyError:
        from ..base.errors import StoreError

        raise StoreError(
            f"this store is at schema {version} and its upgrade to {version + 1} was not "
            "loaded (import memwork.core.domain.migrations); the store was left untouched"
        ) from None


def needs_backup(version: int) -> bool:
    """Whether migrating a version-``version`` store rewrites documents."""
    return any(step not in NO_BACKUP for step in range(version, SCHEMA_VERSION))


def backup_folder(folder: Path, version: int) -> Path:
    """Copy the store beside itself before a migration rewrites it."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = folder.with_name(f"{folder.name}.backup-v{version}-{stamp}")
    n = 1
    while os.path.lexists(target):
        n += 1
        target = folder.with_name(f"{folder.name}.backup-v{version}-{stamp}-{n}")
    import shutil  # here, not at the top: every command opens the store, few migrate it

    # A backup holds everything the store does: private like it (0700 / 0600),
    # whatever the umask or the old store's own modes.
    os.mkdir(target, 0o700)
    shutil.copytree(
        folder,
        target,
        ignore=shutil.ignore_patterns(".lock"),
        symlinks=True,
        copy_function=_private_copy,
        dirs_exist_ok=True,
    )
    # copytree ends by copying the source folder's mode onto the backup: undo that.
    os.chmod(target, 0o700)
    for root, dirs, _ in os.walk(target):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
    return target


def _private_copy(source: str, target: str) -> None:
    import shutil

    shutil.copyfile(source, target, follow_symlinks=False)
    os.chmod(target, 0o600)
