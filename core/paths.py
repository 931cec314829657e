"""Where the store lives: ``--db``, else ``MEMWORK_DB``, else the user data dir."""

from __future__ import annotations

import os
from pathlib import Path

ENV_DB = "MEMWORK_DB"


def default_store_path() -> Path:
    """``<user data dir>/memwork`` (platformdirs), imported only when needed."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("memwork", appauthor=False))


def resolve_store_path(db: str | None) -> Path:
    """The store folder a command works on."""
    if db:
        return Path(db).expanduser()
    env = os.environ.get(ENV_DB)
    if env:
        return Path(env).expanduser()
    return default_store_path()


def demo_source() -> Path:
    """The committed demo store (``data/demo`` in the source tree)."""
    return Path(__file__).resolve().parent.parent / "data" / "demo"
