"""What every import format parses into: documents grouped by logical table.

A parser only reads and validates; it never touches the store. The importer
(:mod:`core.services.interop.importer`) checks clashes and writes a bundle in one
transaction, so a broken file writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Bundle:
    """Parsed records ready to store, plus what the import should remember."""

    format: str
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Kept as a note on the import (e.g. a Letta agent's name and system prompt).
    note: dict[str, Any] = field(default_factory=dict)
    #: Whole-store state that only makes sense in a store without history
    #: (aggregates, counters): written only when the store has no episodes.
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, table: str, doc: dict[str, Any]) -> None:
        """Queue one document."""
        self.tables.setdefault(table, []).append(doc)

    def counts(self) -> dict[str, int]:
        """Records per table (non-empty tables only)."""
        return {t: len(docs) for t, docs in self.tables.items() if docs}

    def total(self) -> int:
        """Records in the bundle."""
        return sum(len(docs) for docs in self.tables.values())
