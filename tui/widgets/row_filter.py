"""The rows of a list that match what the user typed after ``/``.

A filter is words: a row is kept when every word is found (ignoring case) in the
text of its cells, in any order and any column. It wraps the table's source
rather than replacing it, so the pane that owns the list keeps handing the table
its rows as the store changes and the filter stays on until the user clears it.
"""

from __future__ import annotations

from rich.text import Text

from .rows import CellType, Row, RowSource


def cell_text(cell: CellType) -> str:
    """What a cell says, as plain text (every way a :class:`Choices` cell can say it)."""
    if isinstance(cell, str):
        return cell
    if isinstance(cell, Text):
        return cell.plain
    return " ".join(option if isinstance(option, str) else option.plain for option in cell.options)


def words_of(query: str) -> tuple[str, ...]:
    """The words a filter looks for, folded for a caseless match."""
    return tuple(query.casefold().split())


def matches(row: Row, words: tuple[str, ...]) -> bool:
    """Whether every word appears in the row's cells."""
    text = " ".join(cell_text(cell) for cell in row.cells).casefold()
    return all(word in text for word in words)


class FilteredRows:
    """A row source holding the rows of ``base`` that match ``query`` (in their order)."""

    def __init__(self, base: RowSource, query: str) -> None:
        self.base = base
        self.query = query
        words = words_of(query)
        self._kept = [i for i in range(len(base)) if matches(base.row(i), words)]
        self._index: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._kept)

    def row(self, index: int) -> Row:
        """The ``index``-th matching row."""
        return self.base.row(self._kept[index])

    def index_of(self, key: str) -> int | None:
        """Where the matching row with ``key`` is, or None (filtered out, or gone)."""
        if self._index is None:
            index: dict[str, int] = {}
            for position in range(len(self._kept)):
                key_here = self.row(position).key
                if key_here is not None:
                    index.setdefault(key_here, position)
            self._index = index
        return self._index.get(key)
