"""The graph of links around a record, as a tree to read top-down (the workbench's Graph).

A record's links go both ways: what it links to (``derived from`` an episode,
``about`` a task) and what links to it (the rules derived from an episode). From
a root record the tree lists its outgoing links, then its incoming ones, then the
same for each record they reach, to a depth. A record already shown higher up
is listed again where it is met (so every link shows) but not opened a second
time: a cycle (``after`` links between actions, two lessons about one slot) ends
there instead of repeating.

All links are read once (every link table): a curation view, not an agent's
per-step question. The operator's view: isolation walls do not apply, as they do
not in the rest of the workbench.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.errors import InvalidInput, NotFound
from ..domain.link_ops import GONE, locate, title_of
from ..ledger import links
from ..storage.store import Store

#: How deep the tree goes below its root by default.
DEPTH = 3
#: Rows at most (a record linked to thousands of episodes stops here).
LIMIT = 400


@dataclass(frozen=True, slots=True)
class GraphRow:
    """One record in the tree, and the link that led to it."""

    depth: int
    """0 for the root, 1 for what its links reach, ..."""
    direction: str
    """``root``; ``out`` (the parent links to it) or ``in`` (it links to the parent)."""
    via: str
    """The link's kind (``derived_from``, ``about``, ...); ``""`` for the root."""
    kind: str
    """The record's kind (``lesson``, ``episode``, ``task``, ...)."""
    id: str
    title: str
    exists: bool
    """False when the link names a record that is gone."""
    repeat: bool
    """Shown higher up already: listed here, not opened again."""
    links: int
    """How many links touch this record (both ways)."""


@dataclass(frozen=True, slots=True)
class LinkedRecord:
    """A record that has links, for the list to pick a root from."""

    kind: str
    id: str
    title: str
    links: int


def _end(store: Store, ref: str) -> tuple[str, str, str, bool]:
    """(kind, id, title, exists) of a link's end."""
    if links.is_reference(ref):
        return links.kind_of(ref), ref, ref, True
    found = locate(store, ref)
    if found is None:
        return links.kind_of(ref), ref, GONE, False
    return found.kind, found.id, title_of(found), True


class _Links:
    """Every link of the store, by both ends."""

    def __init__(self, store: Store) -> None:
        self.out: dict[str, list[links.Link]] = {}
        self.into: dict[str, list[links.Link]] = {}
        for link in sorted(links.every_link(store), key=links.order):
            self.out.setdefault(link["from"], []).append(link)
            self.into.setdefault(link["to"], []).append(link)

    def count(self, ref: str) -> int:
        return len(self.out.get(ref, ())) + len(self.into.get(ref, ()))


def linked_records(store: Store) -> list[LinkedRecord]:
    """Every record (or reference) that a link touches, most linked first."""
    with store.reading():
        every = _Links(store)
        ends = set(every.out) | set(every.into)
        found = []
        for ref in ends:
            kind, record_id, title, _exists = _end(store, ref)
            found.append(LinkedRecord(kind, record_id, title, every.count(ref)))
    found.sort(key=lambda r: (-r.links, r.kind, r.title))
    return found


def link_tree(store: Store, root: str, *, depth: int = DEPTH, limit: int = LIMIT) -> list[GraphRow]:
    """The tree of links around ``root`` (an id, or a ``task:``/``project:``… reference),
    depth first: each record's outgoing links, then its incoming ones."""
    key = root.strip() if isinstance(root, str) else ""
    if not key:
        raise InvalidInput("root", "must name a record")
    if depth < 0:
        raise InvalidInput("depth", f"must be 0 or more (got {depth})")
    with store.reading():
        every = _Links(store)
        kind, record_id, title, exists = _end(store, key)
        if not exists and not every.count(record_id):
            raise NotFound("record", key)
        rows = [
            GraphRow(0, "root", "", kind, record_id, title, exists, False, every.count(record_id))
        ]
        shown = {record_id}

        def walk(ref: str, level: int, came_by: str | None) -> None:
            steps = [("out", x, x["to"]) for x in every.out.get(ref, ())]
            steps += [("in", x, x["from"]) for x in every.into.get(ref, ())]
            for direction, link, other in steps:
                if link["id"] == came_by:
                    continue  # the link this record was reached by
                if len(rows) >= limit:
                    return
                end_kind, end_id, end_title, end_exists = _end(store, other)
                repeat = end_id in shown
                rows.append(
                    GraphRow(
                        level,
                        direction,
                        str(link["kind"]),
                        end_kind,
                        end_id,
                        end_title,
                        end_exists,
                        repeat,
                        every.count(other),
                    )
                )
                shown.add(end_id)
                if not repeat and level < depth:
                    walk(other, level + 1, link["id"])

        if depth > 0:
            walk(record_id, 1, None)
    return rows
