"""``--format memwork``: memwork's own export, restored losslessly."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base.errors import InvalidInput
from ...storage import schema
from ...storage.tables import INTERNAL_TABLES, USER_TABLES
from .bundle import Bundle
from .export import FORMAT

KNOWN = set(USER_TABLES) | set(INTERNAL_TABLES)
#: Kept with the store they were made in (snapshot folders, import history): an export
#: never carries them, and a record of one without its files would be a dangling promise.
LOCAL = {"checkpoints", "imports"}


def looks_like(data: Any) -> bool:
    """Sniff: a memwork export document."""
    return isinstance(data, dict) and data.get("format") == FORMAT


def parse(data: Any, *, now: datetime) -> Bundle:
    """Validate the document's shape; every record keeps its id and fields.

    An export made before links (records version 2 or older) holds relations as fields of the
    records (a lesson's ``superseded_by``, a card's ``merged_from``, ``episode_ids``):
    they arrive as links, as the schema-3 migration turns them in a store.
    """
    if not looks_like(data):
        raise InvalidInput("format", f"not a memwork export (expected format {FORMAT!r})")
    version = data.get("schema_version")
    if not isinstance(version, int) or version > schema.RECORDS_VERSION:
        raise InvalidInput(
            "schema_version",
            f"export has schema {version!r}; this memwork reads up to {schema.RECORDS_VERSION}",
        )
    tables = data.get("tables")
    if not isinstance(tables, dict):
        raise InvalidInput("tables", "must be an object of table name → list of records")
    bundle = Bundle("memwork")
    for table, docs in tables.items():
        if table in LOCAL:
            raise InvalidInput(
                f"tables.{table}", "is store-local (never exported) and cannot be imported"
            )
        if table not in KNOWN:
            raise InvalidInput(f"tables.{table}", "is not a memwork table")
        if table == "checkpoints":
            # An export never holds checkpoints: their snapshot files stay in the
            # store that took them, and a record without its files is a dangling
            # pointer (whose id would even name a folder to delete).
            raise InvalidInput(
                "tables.checkpoints",
                "checkpoints cannot be imported (an export never holds them: their "
                "snapshot files stay in their own store); remove them from the file",
            )
        if not isinstance(docs, list):
            raise InvalidInput(f"tables.{table}", "must be a list of records")
        for number, doc in enumerate(docs, start=1):
            if not isinstance(doc, dict) or not isinstance(doc.get("id"), str):
                raise InvalidInput(f"tables.{table}[{number}].id", "every record needs a string id")
            target = bundle.history if table in INTERNAL_TABLES else bundle.tables
            target.setdefault(table, []).append(doc)
    if version < 3:
        _relations_as_links(bundle, now)
    return bundle


def _legacy(
    table: str, home: str, doc: dict[str, Any], number: int, now: datetime
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """:func:`core.ledger.links.legacy_links`, a wrong field named as the import names
    every field: ``tables.<table>[<n>].<field>``."""
    from ...ledger import links

    try:
        return links.legacy_links(table, home, doc, now)
    except InvalidInput as exc:
        raise InvalidInput(f"tables.{table}[{number + 1}].{exc.field}", exc.rule) from None


def _relations_as_links(bundle: Bundle, now: datetime) -> None:
    from ...ledger import links

    made: list[dict[str, Any]] = []
    for table, home in (("lessons", "lessons"), ("mistake_cards", "mistake_cards")):
        found: list[dict[str, Any]] = []
        docs = bundle.tables.get(table, [])
        for number, doc in enumerate(docs):
            docs[number], new = _legacy(table, home, doc, number, now)
            found.extend(new)
        made.extend(links.dedupe(found) if table == "lessons" else found)
    rules = bundle.tables.get("rules", [])
    for number, doc in enumerate(rules):
        # Where a rule lands is the importing store's to decide: placed when written.
        rules[number], new = _legacy("rules", "rules", doc, number, now)
        made.extend(new)
    if made:
        bundle.tables.setdefault("links", []).extend(made)
