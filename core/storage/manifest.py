"""The head of a store (``store.json`` in a folder): the schema version, the commit
counter (generation) and every table's version.

Readers compare versions (never mtimes, which are coarse and can repeat) to learn
which cached tables another process changed. Every backend describes its head with
a :class:`Manifest`; a folder keeps it in ``store.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import names
from ..base.errors import StoreUnreadable
from .codec import dumps_small, load_file
from .table_sums import is_checksum

if TYPE_CHECKING:
    from ..base.filepaths import StrPath

MANIFEST_NAME = "store.json"
FORMAT = "memwork-store"
#: Table names that would collide with the store's own files.
RESERVED_TABLES = frozenset({"store", "journal", "snapshot"})


#: Names already found to be table names: every open checks each name of store.json and
#: of every log record, the same few hundred again and again.
_TABLE_NAMES: set[str] = set()


def is_table_name(name: object) -> bool:
    """Whether ``name`` may name a table: a safe file name that is not the store's own."""
    if name in _TABLE_NAMES:
        return True
    if not (names.is_safe_file_name(name) and name not in RESERVED_TABLES):
        return False
    if len(_TABLE_NAMES) < 100_000:  # a long-lived process meeting endless names
        _TABLE_NAMES.add(name)
    return True


def table_file(name: str) -> str:
    """The file that holds table ``name`` in a folder store.

    Every table name passes here before it becomes a path, so this is the last
    guard against a name that would lead outside the store folder.
    """
    if not is_table_name(name):
        from ..base.errors import InvalidInput

        raise InvalidInput("table", f"{names.FILE_NAME_RULE} (got {name[:40]!r})")
    return f"{name}.json"


#: Table names already found safe: a name's verdict never changes, and a long-lived
#: reader (an MCP or HTTP server, the workbench) reads ``store.json`` before every
#: call; checking its ~400 names again each time was half of a context at 100k
#: episodes. Bounded, so a store with very many sessions cannot grow it without end.
_SAFE: set[str] = set()
_SAFE_MAX = 100_000


def _safe(name: str) -> bool:
    if name in _SAFE:
        return True
    if not is_table_name(name):
        return False
    if len(_SAFE) >= _SAFE_MAX:
        _SAFE.clear()
    _SAFE.add(name)
    return True


class Manifest:
    """What ``store.json`` holds."""

    __slots__ = ("schema_version", "generation", "tables", "checksums")

    def __init__(
        self,
        schema_version: int,
        generation: int = 0,
        tables: dict[str, int] | None = None,
        checksums: dict[str, str] | None = None,
    ) -> None:
        self.schema_version = schema_version
        self.generation = generation
        self.tables: dict[str, int] = tables if tables is not None else {}
        #: The checksum of each table file as its fold wrote it (a folder store's own;
        #: a file an older memwork wrote has none until its next fold).
        self.checksums: dict[str, str] = checksums if checksums is not None else {}

    def __repr__(self) -> str:
        return (
            f"Manifest(schema_version={self.schema_version}, generation={self.generation}, "
            f"tables={self.tables})"
        )

    def to_bytes(self) -> bytes:
        """Encode for disk."""
        data: dict[str, object] = {
            "format": FORMAT,
            "generation": self.generation,
            "schema_version": self.schema_version,
            "tables": self.tables,
        }
        if self.checksums:
            data["checksums"] = self.checksums
        return dumps_small(data)

    @classmethod
    def read(cls, path: StrPath) -> Manifest:
        """Parse ``store.json``; anything unexpected is refused, never repaired."""
        return cls.parse(load_file(path), path)

    @classmethod
    def parse(cls, data: object, path: StrPath) -> Manifest:
        """A manifest from the parsed JSON of ``path``; anything unexpected is refused."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise StoreUnreadable(f"{path} is not a memwork store manifest; it was left untouched")
        version = data.get("schema_version")
        tables = data.get("tables")
        generation = data.get("generation", 0)
        checksums = data.get("checksums", {})
        if (
            not isinstance(version, int)
            or not isinstance(tables, dict)
            or not isinstance(generation, int)
            or not all(isinstance(v, int) for v in tables.values())
            or not isinstance(checksums, dict)
            or not all(is_checksum(v) for v in checksums.values())
        ):
            raise StoreUnreadable(f"{path} has a damaged header; it was left untouched")
        for name in tables:
            # Table names become file names: one from a tampered store.json must not
            # lead a read or a write outside the folder.
            if not _safe(name):
                raise StoreUnreadable(
                    f"{path} names a table {name[:40]!r} that is not a plain file name; "
                    "it was left untouched"
                )
        return cls(
            schema_version=version,
            generation=generation,
            tables=dict(tables),
            # One of a table it no longer lists (a lost entry) checks nothing.
            checksums={n: v for n, v in checksums.items() if n in tables},
        )
