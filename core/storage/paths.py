"""Where the store lives: ``--db``, else ``MEMWORK_DB``, else the user data dir."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..base.errors import InvalidInput

if TYPE_CHECKING:  # pathlib is imported when a caller wants a Path: it costs a CLI call ~3 ms
    from pathlib import Path

    from .url import Location

ENV_DB = "MEMWORK_DB"


def default_store_path() -> Path:
    """``<user data dir>/memwork`` (platformdirs), imported only when needed."""
    from pathlib import Path

    from platformdirs import user_data_dir

    return Path(user_data_dir("memwork", appauthor=False))


def resolve_store_path(db: str | None) -> Path | str:
    """The store a command works on: a folder, or the text of another location (a Redis
    URL, ``memory:``).

    An empty ``--db ""`` or ``MEMWORK_DB=""`` is an error, not "use the default":
    it is almost always a variable that was meant to be set, and the default
    store is the last place its memory should silently go. A URL is checked
    here and never becomes a path (``Path("redis://h")`` would be a folder
    named ``redis:``).
    """
    named = _named(db)
    if named is None:
        return default_store_path()
    return resolve_location(*named)


def store_location(db: str | None) -> Location:
    """The store :func:`resolve_store_path` names, parsed (:mod:`core.storage.url`), with a
    folder kept as text: what the CLI opens on every call, without importing pathlib."""
    named = _named(db)
    if named is None:
        from .url import FILE, Location

        return Location(FILE, folder=str(default_store_path()))
    return _location(*named)


def _named(db: str | None) -> tuple[str, str] | None:
    """The location text the user gave and where (``--db`` or ``MEMWORK_DB``); None when
    neither was given (the default store)."""
    if db is not None:
        # Surrounding whitespace is a paste's, never the store's: " redis://…" would
        # otherwise become a folder named after the URL, password and all.
        if not db.strip():
            raise InvalidInput("--db", "must name a store folder (got an empty path)")
        if "\x00" in db:  # no file name holds one (only a caller in Python can pass it)
            raise InvalidInput("--db", "must not hold a NUL character")
        return db.strip(), "--db"
    env = os.environ.get(ENV_DB)
    if env is not None:
        if not env.strip():
            raise InvalidInput(ENV_DB, "is set but empty; name a store folder or unset it")
        return env.strip(), ENV_DB
    return None


def store_origin(db: str | None) -> str:
    """Where :func:`resolve_store_path` took the store from: ``--db``, ``MEMWORK_DB`` or
    ``default`` (neither was given: the user data dir)."""
    if db is not None:
        return "--db"
    return ENV_DB if os.environ.get(ENV_DB) is not None else "default"


def agent_setting(location: Path | str) -> str:
    """The line that points an agent at this store: ``MEMWORK_DB=<location>``.

    A Redis URL is shown without its password (agents take it from
    ``MEMWORK_REDIS_PASSWORD``)."""
    from .url import REDIS, parse, parse_location

    parsed = parse_location(location, ENV_DB)
    if parsed.scheme == REDIS:
        return f"{ENV_DB}={parse(parsed.url).display}"
    return f"{ENV_DB}={parsed.folder if parsed.folder is not None else location}"


def resolve_location(text: str, field: str) -> Path | str:
    """A store named on the command line: a folder path, or a location text that names
    another backend (``memory:``, a Redis URL), checked here and kept as text."""
    location = _location(text, field)
    if location.folder_text is None:
        return text
    from pathlib import Path

    return Path(location.folder_text)


def _location(text: str, field: str) -> Location:
    """``text`` parsed, a folder's ``~`` expanded (a malformed URL is refused here)."""
    if not text.strip():
        raise InvalidInput(field, "must name a store folder or a Redis URL (got nothing)")
    from .url import FILE, Location, might_be_url, parse_location

    if might_be_url(text):
        location = parse_location(text, field)
        if location.folder_text is None:
            return location
        text = location.folder_text
    return Location(FILE, folder=os.path.expanduser(text))


def demo_source() -> Path:
    """The demo store: package data of an installed memwork (``memwork/demo``), or
    ``data/demo`` in a source checkout."""
    from pathlib import Path

    package = Path(__file__).resolve().parents[2]
    installed = package / "demo"
    return installed if installed.is_dir() else package / "data" / "demo"
