"""TinyDB's document API over a store's tables: :meth:`Store.table` hands these out.

Kept apart from :mod:`core.storage.store` so that a process that only reads
(``memwork context``, on every agent step) never imports TinyDB: its import builds
typing forward references, whose first compile costs a fresh interpreter ~1.5 ms.
"""

from __future__ import annotations

from typing import Any

from tinydb import TinyDB
from tinydb.table import Document, Table


class StrTable(Table):
    """A TinyDB table keyed by the records' own string ids.

    Integer ids cached per process collide when two processes insert; a
    record's stable id cannot.
    """

    # TinyDB declares document_id_class as type[int]; this table's ids are strings.
    document_id_class = str  # type: ignore[assignment]


class StoreDB(TinyDB):
    """TinyDB over a store's table cache (its storage), every table a :class:`StrTable`."""

    table_class = StrTable
    default_table_name = "_unused"

    def forget(self, name: str) -> None:
        """Drop TinyDB's handle on table ``name`` (the table itself was dropped)."""
        self._tables.pop(name, None)


def document(doc: dict[str, Any], doc_id: str) -> Document:
    """``doc`` as a TinyDB document with the record's own id."""
    # TinyDB types doc_id as int; a StrTable's ids are the records' own strings.
    return Document(doc, doc_id=doc_id)  # type: ignore[arg-type]
