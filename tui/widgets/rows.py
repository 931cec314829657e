"""What a :class:`~tui.widgets.virtual_table.VirtualTable` shows: rows of cells, and the
sources that hand them over one at a time (so a list of 100,000 records never becomes
100,000 rows at once)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rich.text import Text


@dataclass(frozen=True, slots=True)
class Choices:
    """A cell that can be written several ways, widest first: the table shows the first
    that fits its column (a confidence bar with its number, or the number alone in a
    narrow terminal), and the last one cut to fit when none does."""

    options: tuple[str | Text, ...]


CellType = str | Text | Choices
"""The type of a cell: a plain string, a Rich `Text` (for per-cell styling), or
`Choices` of either."""


@dataclass(frozen=True, slots=True)
class Row:
    """A row of a `VirtualTable`: one cell per column and an optional key."""

    cells: Sequence[CellType]
    """Cell values, in column order. Missing cells render blank, extra cells are ignored."""
    key: str | None = None
    """Stable identifier of the row (used to keep the selection across data refreshes)."""


@runtime_checkable
class RowSource(Protocol):
    """Supplies rows to a `VirtualTable` on demand.

    Only `__len__` and `row` are required. A source may also define
    `index_of(key: str) -> int | None`; `VirtualTable.set_source` uses it, when
    present, to find a row by key without scanning the source.
    """

    def __len__(self) -> int:
        """Number of rows."""
        ...

    def row(self, index: int) -> Row:
        """Get the row at `index` (0 <= index < len(self))."""
        ...


class ListRowSource:
    """A `RowSource` over an in-memory sequence of `Row` objects."""

    def __init__(self, rows: Sequence[Row] = ()) -> None:
        """Create a source.

        Args:
            rows: The rows. The sequence is not copied; do not mutate it after handing
                it over (create a new source and call `VirtualTable.set_source`).
        """
        self._rows = rows
        self._index: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._rows)

    def row(self, index: int) -> Row:
        """Get the row at `index`."""
        return self._rows[index]

    def index_of(self, key: str) -> int | None:
        """Index of the first row with the given key, or `None` if there is none."""
        if self._index is None:
            index: dict[str, int] = {}
            for position, row in enumerate(self._rows):
                if row.key is not None:
                    index.setdefault(row.key, position)
            self._index = index
        return self._index.get(key)
