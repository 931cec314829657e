"""A search's ranking: the records its words find, and what fills it when they find
too few.

The words rank first (:meth:`RecallIndex.search`). Only when they find fewer records
than the caller asked for is the rest filled: by the records nearest the query's
meaning when an embedder is in force (:mod:`core.services.recall.semantic`), else by
the words of the best records found (:mod:`core.services.recall.feedback`, the
default). Either way a filled record scores below every word match and is marked
``filled``, and a search whose words find enough never runs a fill.

With an embedder in force, a passage in Latin letters has its words' best records put
in a new order by their meaning too (:func:`semantic.reorder`), before any fill.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import semantic
from .engine import RecallIndex
from .query import Filter, Scored

if TYPE_CHECKING:
    from ...storage.store import Store
    from .follow import Recall


def rank(
    store: Store,
    recall: Recall,
    index: RecallIndex,
    query: str,
    limit: int,
    where: Filter,
    fill: bool = True,
) -> list[Scored]:
    """The best ``limit`` records by the query's words; what they leave short is filled
    (unless ``fill`` is False) as the module docstring says."""
    name = semantic.chosen(store)  # a bad setting is refused on every search, not only short
    if name != "off" and index.is_passage(query) and semantic.reads_well(query):
        found = index.search(query, max(limit, semantic.REORDER_DEPTH), where, recall.small)
        if len(found) > 1:
            vectors = recall.vectors(semantic.embedder(name))
            found = semantic.reorder(vectors, query, found)[:limit]
            _kept(recall, vectors)
    else:
        found = index.search(query, limit, where, recall.small)
    if len(found) >= limit or not fill:
        return found
    if name == "off":
        from . import feedback

        return feedback.fill(index, query, found, limit, where, recall.small)
    vectors = recall.vectors(semantic.embedder(name))
    found = semantic.fill(vectors, index, query, found, limit, where)
    _kept(recall, vectors)
    return found


def _kept(recall: Recall, vectors: semantic.Vectors) -> None:
    if vectors.computed:
        recall.touched()  # new vectors: the index's save is due to keep them
