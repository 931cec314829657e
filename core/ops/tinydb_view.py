"""``Memory.tinydb()``: the live store as a read-only ``tinydb.TinyDB``, for TinyDB's Query.

    from tinydb import Query

    db = memory.tinydb()
    low = db.table("episodes").search(Query().score < 0.5)

What it holds:

- **Tables are logical.** ``db.tables()`` names the logical tables the store holds now
  (``episodes``, ``observations``, ``rules``, ``lessons``, ``sessions``, ... and the
  bookkeeping ones: ``meta``, ``audit``, ``task_stats``, ``distinct``, ``rule_index``),
  and ``db.table("episodes")`` holds *every* episode: all the stored tables of a logical
  table (episode shards ``episodes.000001``, ``episodes.000002``, ...; one
  ``observations.<session>`` and one ``working_memory.<session>`` per session; active
  rules ``rules.<scope>`` and archived ones ``rules.archive.<n>.<scope>``, so
  ``table("rules")`` has inactive rules too: ``Query().active == True`` picks the others),
  merged in the order of the stored tables' names. A stored table's own name
  (``table("observations.ses_...")``) gives that stored table alone; it is not listed by
  ``tables()``. A name the store does not hold is an empty table.
- **Document ids are the records' own ids** (``ep_...``, ``les_...``: a document's
  ``doc_id`` equals its ``"id"`` field), strings rather than TinyDB's integers. Where a
  logical table's stored tables reuse their keys (working memory keeps one ``state``
  document per session; the rule index one document per chunk group of each scope), and
  for any key more than one stored table holds, the id is ``"<stored table>/<key>"``
  (``working_memory.ses_.../state``).
- **Reads are fresh.** Every query (``search``, ``get``, ``all``, ``count``, ``len``,
  ``tables()``...) reads the store as it is when the query runs, as every ``Memory`` call
  does: under the store's lock, with what other processes committed since taken in and
  a folder store's write-ahead log applied over its table files. A logical table is merged
  again only when one of its stored tables changed.
- **Documents are copies.** Changing a returned document changes nothing in the store.
- **Writes are refused.** ``insert``, ``insert_multiple``, ``update``,
  ``update_multiple``, ``upsert``, ``remove``, ``truncate``, ``drop_table``,
  ``drop_tables`` and the storage's ``write`` raise
  :class:`~core.base.errors.ReadOnlyView` before touching anything: memwork writes
  through its own store (a lock, fsync, a write-ahead log, atomic renames, an audit
  entry per change, review), which TinyDB's JSON storage does not do.
- **Isolation holds.** While the store isolates agents (``isolation`` is ``agent``) the
  view reaches every agent's records, so, like ``export``, it is refused to a ``Memory``
  without the store's curator key.

TinyDB is imported here and nowhere on an agent's per-step path: :meth:`Memory.tinydb`
imports this module when it is called.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from tinydb import TinyDB
from tinydb.storages import Storage
from tinydb.table import Document, Table

from ..base.errors import ReadOnlyView
from ..ledger import isolation
from ..storage.backend import Docs
from ..storage.tables import logical_name

if TYPE_CHECKING:
    from ..ledger.curator import Curator
    from ..storage.store import Store

#: Logical tables whose stored tables use the same keys: their ids always name the table.
QUALIFIED = frozenset({"working_memory", "rule_index"})

Merged = dict[str, Mapping[str, Any]]


class ViewStorage(Storage):
    """TinyDB's storage for the view: reads the live store, refuses every write."""

    def __init__(self, store: Store, actor: str, curator: Curator | None) -> None:
        self.store = store
        self.actor = actor
        self.curator = curator
        # Per table name: what it was merged from (each stored table's name, stamp and
        # dict: committed dicts are replaced, never changed in place) and the merge,
        # reused while none of its stored tables changed.
        self._merged: dict[str, tuple[list[tuple[str, tuple[int, int], Docs]], Merged]] = {}

    def _check(self) -> None:
        """Refuse the view while agents are isolated, to an agent (call inside a read)."""
        with isolation.asking(self.actor, self.curator):
            isolation.check_operator(self.store, "tinydb")

    def names(self) -> set[str]:
        """The logical tables the store holds now."""
        with self.store.reading():
            self._check()
            return {logical_name(n) for n in self.store.table_names()}

    def docs(self, name: str) -> Merged:
        """Table ``name`` as the store holds it now: id → document (shared: read only)."""
        store = self.store
        with store.reading():
            self._check()
            every = store.table_names()
            stored = [n for n in every if logical_name(n) == name]
            if not stored and name in every:
                stored = [name]  # a stored table asked for by its own name
            source = [(n, store.table_stamp(n), store.docs(n)) for n in stored]
            held = self._merged.get(name)
            if held is not None and _same(held[0], source):
                return held[1]
            merged = _merge(name, [(n, docs) for n, _, docs in source])
        self._merged[name] = (source, merged)
        return merged

    def read(self) -> dict[str, dict[str, Any]]:
        """Every logical table, merged (TinyDB's own reads go through :meth:`docs`)."""
        with self.store.reading():
            return {name: dict(self.docs(name)) for name in self.names()}

    def write(self, data: dict[str, dict[str, Any]]) -> NoReturn:
        raise ReadOnlyView("write")

    def close(self) -> None:
        """Nothing to release: the view borrows its Memory's store (closed with it)."""


def _same(
    before: list[tuple[str, tuple[int, int], Docs]], now: list[tuple[str, tuple[int, int], Docs]]
) -> bool:
    """Whether two lists of (stored table, stamp, dict) name the very same tables' states."""
    return len(before) == len(now) and all(
        a[0] == b[0] and a[1] == b[1] and a[2] is b[2] for a, b in zip(before, now, strict=True)
    )


def _merge(name: str, parts: list[tuple[str, Docs]]) -> Merged:
    """The documents of ``parts`` (stored name, id → document) keyed as the view keys them."""
    merged: Merged = {}
    if name not in QUALIFIED:
        for _, docs in parts:
            merged.update(docs)
        if len(merged) == sum(len(docs) for _, docs in parts):
            return merged
        # Some key is held by more than one stored table: those name their table.
        seen: dict[str, int] = {}
        for _, docs in parts:
            for key in docs:
                seen[key] = seen.get(key, 0) + 1
        merged = {}
        for stored, docs in parts:
            for key, doc in docs.items():
                merged[key if seen[key] == 1 else f"{stored}/{key}"] = doc
        return merged
    for stored, docs in parts:
        for key, doc in docs.items():
            merged[f"{stored}/{key}"] = doc
    return merged


class ViewDocument(Document):
    """A document handed out by the view: a deep copy, so changing it changes nothing."""

    def __init__(self, value: Mapping[Any, Any], doc_id: int) -> None:
        super().__init__(copy.deepcopy(dict(value)), doc_id)


class ViewTable(Table):
    """A TinyDB table of the view: the store's documents now, keyed by their own ids;
    every write raises :class:`~core.base.errors.ReadOnlyView`."""

    # TinyDB declares these for integer ids; the view's ids are the records' strings.
    document_id_class = str  # type: ignore[assignment]
    document_class = ViewDocument

    def _read_table(self) -> dict[str, Mapping[Any, Any]]:
        storage = self._storage
        assert isinstance(storage, ViewStorage)  # the only storage a view's table gets
        return storage.docs(self.name)

    def _refuse(self, what: str) -> NoReturn:
        raise ReadOnlyView(f"{what} on table {self.name!r}")

    def insert(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("insert")

    def insert_multiple(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("insert_multiple")

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("update")

    def update_multiple(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("update_multiple")

    def upsert(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("upsert")

    def remove(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("remove")

    def truncate(self) -> NoReturn:
        self._refuse("truncate")

    def _update_table(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse("write")


class TinyDBView(TinyDB):
    """A read-only ``tinydb.TinyDB`` over a live memwork store (see the module's text).

    Made by :meth:`Memory.tinydb`; name a table (``db.table("episodes")``): the default
    table TinyDB's shortcuts (``db.search``, ``db.all``) use holds nothing."""

    table_class = ViewTable

    def __init__(self, store: Store, *, actor: str, curator: Curator | None = None) -> None:
        view = ViewStorage(store, actor, curator)
        super().__init__(storage=lambda: view)
        with store.reading():
            view._check()  # refused at once, rather than at the first query

    @property
    def view(self) -> ViewStorage:
        """The storage that reads the store."""
        storage = self.storage
        assert isinstance(storage, ViewStorage)
        return storage

    def table(self, name: str, **kwargs: Any) -> Table:
        """Logical table ``name`` (every document of it), or one stored table by its own
        name. TinyDB's query cache is off: the store changes under the view."""
        kwargs["cache_size"] = 0
        return super().table(name, **kwargs)

    def tables(self) -> set[str]:
        """The logical tables the store holds now (``episodes``, not its shards)."""
        return self.view.names()

    def drop_table(self, name: str) -> NoReturn:
        raise ReadOnlyView(f"drop_table {name!r}")

    def drop_tables(self) -> NoReturn:
        raise ReadOnlyView("drop_tables")
