"""Inactive rules: an archive kept in arrival order, and an index of its texts.

A scope keeps its active rules in ``rules.<scope>`` (what the context reads, 10
or 20 rules). A rule that leaves the active window moves to the scope's
archive, a series of numbered chunks ``rules.archive.<NNNNNN>.<scope>`` of
:data:`CHUNK` rules, filled in the order rules arrive: recording writes the
newest chunk and leaves the older ones alone, so a batch costs the same however
many rules history has archived. (Hash buckets, the earlier layout, put every
batch's archived rules in all sixteen buckets of a scope, each growing with
history.)

Every proposed rule asks whether an inactive copy exists, to bring that one
back rather than add a second. A full chunk is *sealed*: one document of the
index lists a short digest of each text it holds, and a table
``rule_index.<GGGG>.<scope>`` groups the documents of :data:`GROUP` chunks. A
lookup reads a scope's index tables once per process (about 2.5 MB for the
250,000 archived global rules of a million-episode store), the newest chunk
whole, and otherwise only a sealed chunk a digest points to; digests can
collide, so a hit is checked against the chunk's rules. An index table is
written when a chunk is sealed or loses a rule, not on every batch.

The index is derived data: kept in step by every write here, snapshotted with
the chunks by store checkpoints, and never exported (an import rebuilds it as
it places the archived rules it brings).
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from ..base.hashing import sha1
from ..storage.store import Store
from ..storage.tables import rule_scope_slug

#: Rules in a full archive chunk (about 430 KB of JSON for consolidated global rules).
CHUNK = 1000
#: Chunks whose digests share one index table.
GROUP = 16
#: Hex characters of a text's digest (40 bits: a false hit costs one chunk read).
WIDTH = 10
ARCHIVE = "rules.archive"
INDEX = "rule_index"

Rule = dict[str, Any]


def chunk_table(scope: str, number: int) -> str:
    """The table of archive chunk ``number`` (from 1) of ``scope``."""
    return f"{ARCHIVE}.{number:06d}.{rule_scope_slug(scope)}"


def index_table(scope: str, group: int) -> str:
    """The index table of chunks ``(group - 1) * GROUP + 1 … group * GROUP`` of ``scope``."""
    return f"{INDEX}.{group:04d}.{rule_scope_slug(scope)}"


def chunk_number(table: str) -> int:
    """``rules.archive.000012.global`` → 12."""
    return int(table.split(".", 3)[2])


def digest(text: str) -> str:
    """The index's short digest of a rule text."""
    return sha1(text.encode("utf-8")).hexdigest()[:WIDTH]


def _key(number: int) -> str:
    return f"{number:06d}"


def _group(number: int) -> int:
    return (number - 1) // GROUP + 1


def _aligned(digests: str, wanted: str) -> int:
    """Where ``wanted`` starts in a run of digests (a multiple of WIDTH), or -1."""
    at = digests.find(wanted)
    while at != -1 and at % WIDTH:
        at = digests.find(wanted, at + 1)
    return at


# -- what a process knows of a scope's index ------------------------------------------------
class _ScopeIndex:
    """Digest → sealed chunk numbers for one scope, for the index mappings it was read from.

    It is read again when the store hands out another mapping for one of its
    tables (another process committed, or a transaction rolled back) or a new
    index table appeared, and kept up to date by this module's own writes.
    """

    __slots__ = ("scope", "tables", "where", "sealed")

    def __init__(self, store: Store, scope: str) -> None:
        self.scope = scope
        #: (index table, the mapping read), group 1 first.
        self.tables: list[tuple[str, dict[str, Rule]]] = []
        #: digest → chunk number, or a tuple of them when several chunks hold it.
        self.where: dict[str, int | tuple[int, ...]] = {}
        #: The newest sealed chunk (0: none); the one after it takes new rules.
        self.sealed = 0
        while store.has_table(name := index_table(scope, len(self.tables) + 1)):
            docs = store.docs(name)
            self.tables.append((name, docs))
            for key, doc in docs.items():
                number = int(key)
                self.sealed = max(self.sealed, number)
                run = doc["digests"]
                for at in range(0, len(run), WIDTH):
                    self.add(run[at : at + WIDTH], number)

    @property
    def newest(self) -> int:
        """The chunk that takes new rules (it may not exist yet)."""
        return self.sealed + 1

    def current(self, store: Store) -> bool:
        """Whether the index tables are still the mappings this was read from."""
        for name, docs in self.tables:
            if store.docs(name) is not docs:
                return False
        return not store.has_table(index_table(self.scope, len(self.tables) + 1))

    def chunks(self, key: str) -> tuple[int, ...]:
        """The sealed chunks whose index lists ``key``."""
        found = self.where.get(key)
        if found is None:
            return ()
        return found if isinstance(found, tuple) else (found,)

    def add(self, key: str, number: int) -> None:
        found = self.chunks(key)
        if number not in found:
            self.where[key] = (*found, number) if found else number

    def discard(self, key: str, number: int) -> None:
        rest = tuple(n for n in self.chunks(key) if n != number)
        if not rest:
            self.where.pop(key, None)
        else:
            self.where[key] = rest if len(rest) > 1 else rest[0]

    def adopt(self, store: Store, number: int) -> None:
        """Follow this module's own write to the index table of chunk ``number``."""
        group = _group(number)
        name = index_table(self.scope, group)
        if group <= len(self.tables):
            self.tables[group - 1] = (name, store.docs(name))
        else:  # a new group: chunks are sealed in order, so it is the next one
            self.tables.append((name, store.docs(name)))
        self.sealed = max(self.sealed, number)


#: Per open store, then per scope: two stores in one process (an agent's and a
#: copy, a benchmark's sizes) each keep theirs instead of rebuilding each other's.
_SCOPES: WeakKeyDictionary[Store, dict[str, _ScopeIndex]] = WeakKeyDictionary()


def _index(store: Store, scope: str) -> _ScopeIndex:
    known = _SCOPES.get(store)
    if known is None:
        known = _SCOPES[store] = {}
    index = known.get(scope)
    if index is None or not index.current(store):
        index = known[scope] = _ScopeIndex(store, scope)
    return index


# -- what a process knows of one chunk: its rules by text -----------------------------------
class _ChunkTexts:
    """A chunk's rule ids by text, for the mapping it was built from."""

    __slots__ = ("docs", "size", "ids")

    def __init__(self, docs: dict[str, Rule]) -> None:
        self.docs = docs
        self.size = len(docs)
        self.ids: dict[str, list[str]] = {}
        for rule_id, rule in docs.items():
            self.ids.setdefault(rule["text"], []).append(rule_id)


_CHUNKS: WeakKeyDictionary[Store, dict[str, _ChunkTexts]] = WeakKeyDictionary()


def _texts(store: Store, table: str) -> _ChunkTexts:
    docs = store.docs(table)
    known = _CHUNKS.get(store)
    if known is None:
        known = _CHUNKS[store] = {}
    texts = known.get(table)
    if texts is None or texts.docs is not docs or texts.size != len(docs):
        texts = known[table] = _ChunkTexts(docs)
    return texts


def _chunk_put(store: Store, table: str, rule: Rule) -> None:
    texts = _texts(store, table)
    store.put(table, rule["id"], rule)
    texts.ids.setdefault(rule["text"], []).append(rule["id"])
    # The first write of a transaction copies the mapping: the index follows it.
    texts.docs = store.docs(table)
    texts.size = len(texts.docs)


def _chunk_delete(store: Store, table: str, rule: Rule) -> None:
    texts = _texts(store, table)
    store.delete(table, [rule["id"]])
    same = texts.ids.get(rule["text"], [])
    if rule["id"] in same:
        same.remove(rule["id"])
    texts.docs = store.docs(table)
    texts.size = len(texts.docs)


def _digests(store: Store, scope: str, number: int) -> str:
    doc = store.docs(index_table(scope, _group(number))).get(_key(number))
    return doc["digests"] if doc is not None else ""


def _set_digests(store: Store, index: _ScopeIndex, number: int, run: str) -> None:
    key = _key(number)
    store.put(index_table(index.scope, _group(number)), key, {"digests": run, "id": key})
    index.adopt(store, number)


def _seal(store: Store, index: _ScopeIndex, number: int) -> None:
    """Chunk ``number`` is full: list its texts in the index; new rules go to the next."""
    table = chunk_table(index.scope, number)
    keys = [digest(rule["text"]) for rule in store.docs(table).values()]
    _set_digests(store, index, number, "".join(keys))
    for key in keys:
        index.add(key, number)


# -- the archive's operations -------------------------------------------------------------
def copies(store: Store, scope: str, text: str) -> list[tuple[str, Rule]]:
    """Archived rules of ``scope`` with exactly ``text``, each with the chunk that holds it."""
    index = _index(store, scope)
    found = []
    for number in (*index.chunks(digest(text)), index.newest):
        table = chunk_table(scope, number)
        texts = _texts(store, table)
        for rule_id in texts.ids.get(text, ()):
            rule = texts.docs.get(rule_id)
            if rule is not None and rule["text"] == text and rule["scope"] == scope:
                found.append((table, rule))
    return found


def put(store: Store, rule: Rule) -> str:
    """Archive an inactive rule in its scope's newest chunk; return the chunk's table."""
    index = _index(store, rule["scope"])
    table = chunk_table(index.scope, index.newest)
    if len(store.docs(table)) >= CHUNK:  # filled when chunks were smaller
        _seal(store, index, index.newest)
        table = chunk_table(index.scope, index.newest)
    _chunk_put(store, table, rule)
    if len(store.docs(table)) >= CHUNK:
        _seal(store, index, index.newest)
    return table


def remove(store: Store, table: str, rule_id: str) -> Rule | None:
    """Take a rule out of the archive chunk ``table``; return it (None when absent)."""
    rule = store.docs(table).get(rule_id)
    if rule is None:
        return None
    index = _index(store, rule["scope"])
    number = chunk_number(table)
    _chunk_delete(store, table, rule)
    if number > index.sealed:
        return rule  # the newest chunk: read whole, not indexed
    key = digest(rule["text"])
    run = _digests(store, index.scope, number)
    at = _aligned(run, key)
    if at != -1:
        run = run[:at] + run[at + WIDTH :]
        _set_digests(store, index, number, run)
    if _aligned(run, key) == -1:
        index.discard(key, number)
    return rule


def add_many(store: Store, rules: list[Rule]) -> None:
    """Archive many inactive rules in the given order (imports, conversions), chunk by chunk."""
    by_scope: dict[str, list[Rule]] = {}
    for rule in rules:
        by_scope.setdefault(rule["scope"], []).append(rule)
    for scope, pending in by_scope.items():
        index = _index(store, scope)
        while pending:
            table = chunk_table(scope, index.newest)
            room = CHUNK - len(store.docs(table))
            part, pending = pending[: max(room, 0)], pending[max(room, 0) :]
            store.put_many(table, {r["id"]: r for r in part})
            if len(store.docs(table)) >= CHUNK:
                _seal(store, index, index.newest)


def tables(store: Store, scope: str) -> list[str]:
    """Every archive table of ``scope`` (lists the store's tables: not for a hot path)."""
    scoped = rule_scope_slug(scope)
    return [n for n in store.table_names(ARCHIVE) if n.split(".", 3)[3] == scoped]


# -- the layout before chunks ---------------------------------------------------------------
def is_legacy(table: str) -> bool:
    """Whether ``table`` is a hash bucket of the earlier layout (``rules.archive.<h>.<scope>``)."""
    parts = table.split(".", 3)
    return len(parts) == 4 and parts[:2] == ["rules", "archive"] and len(parts[2]) == 1


def convert_legacy(store: Store) -> int:
    """Move every rule of hash-bucket archives into chunks, oldest first (call inside a
    transaction); return how many moved. A store with no such bucket is left as it is."""
    old = [name for name in store.table_names(ARCHIVE) if is_legacy(name)]
    moved = [rule for name in old for rule in store.docs(name).values()]
    for name in old:
        store.drop(name)
    moved.sort(key=lambda r: (r["seq"], r["id"]))
    add_many(store, moved)
    return len(moved)
