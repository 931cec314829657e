"""Reading the audit log: filters, pages for a list view, and the record an entry names.

The log itself is written by :mod:`core.ledger.audit` (one entry per mutation, in the
mutation's transaction) and kept in numbered shards of ``PAGE_SIZE`` entries.
This module is what readers share: ``memwork history`` and the workbench's
History pane filter it the same way and find an entry's record the same way.

Filtering has two forms. :func:`query` takes structured filters (a table, a
record id, an actor, a limit) and reads only as many shards as it needs,
newest first. :func:`parse_filter` and :func:`matches` implement the
History pane's filter line: every word must occur somewhere in the entry
(actor, action, table, record id or summary), and ``field:value`` narrows a
word to one field (``actor:``, ``action:``, ``table:``, ``record:``/``id:``,
``summary:``). Matching ignores case.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..base.errors import InvalidInput, MemworkError
from ..ledger import audit
from ..models.kinds import of_table
from ..storage import shards
from ..storage.store import Store
from ..storage.tables import physical_tables

Entry = dict[str, Any]

#: Entries per shard (a page of the log).
PAGE_SIZE = shards.SIZES[audit.BASE]

#: Fields a ``field:value`` filter word can name (``record`` and ``id`` mean the record id).
FILTER_FIELDS = {
    "actor": "actor",
    "action": "action",
    "table": "table",
    "record": "record_id",
    "id": "record_id",
    "summary": "summary",
}

#: Shortest start or end of a record id that ``query(record=...)`` accepts.
MIN_RECORD_KEY = 4


# -- pages ---------------------------------------------------------------------------------
def page_count(store: Store) -> int:
    """How many pages (shards) the log has; page ``page_count`` is the newest."""
    return audit.newest_shard(store)


def page(store: Store, number: int) -> list[Entry]:
    """The entries of page ``number`` (1 = the oldest), newest first."""
    name = shards.shard_of(audit.BASE, (number - 1) * PAGE_SIZE + 1)
    return sorted(store.docs(name).values(), key=_seq, reverse=True)


def entry_at(store: Store, seq: int) -> Entry | None:
    """The entry with sequence number ``seq``, or None."""
    if seq < 1:
        return None
    for doc in store.docs(shards.shard_of(audit.BASE, seq)).values():
        if doc["seq"] == seq:
            return doc
    return None


def entries_after(store: Store, seq: int) -> list[Entry]:
    """Entries newer than ``seq``, newest first (reads only the shards that hold them)."""
    last = audit.last_seq(store)
    out: list[Entry] = []
    if last <= seq:
        return out
    first_page = seq // PAGE_SIZE + 1
    last_page = (last - 1) // PAGE_SIZE + 1
    for number in range(last_page, first_page - 1, -1):
        out.extend(e for e in page(store, number) if e["seq"] > seq)
    return out


def newest_first(store: Store) -> Iterator[Entry]:
    """Every entry, newest first, one page at a time (call inside ``store.reading()``)."""
    for number in range(page_count(store), 0, -1):
        yield from page(store, number)


def _seq(entry: Entry) -> int:
    return int(entry["seq"])


# -- filters -------------------------------------------------------------------------------
def haystack(entry: Entry) -> str:
    """What a free word of the filter line searches in, lower-cased once."""
    return (
        f"{entry['actor']}\n{entry['action']}\n{entry['table']}\n"
        f"{entry['record_id']}\n{entry['summary']}"
    ).lower()


def parse_filter(text: str) -> list[tuple[str | None, str]]:
    """``actor:tui wm key`` → ``[("actor", "tui"), (None, "wm"), (None, "key")]``."""
    words: list[tuple[str | None, str]] = []
    for word in text.lower().split():
        name, sep, value = word.partition(":")
        if sep and name in FILTER_FIELDS and value:
            words.append((FILTER_FIELDS[name], value))
        else:
            words.append((None, word))
    return words


def matches(
    entry: Entry, hay: str, words: list[tuple[str | None, str]], table: str | None = None
) -> bool:
    """Whether an entry is in ``table`` (when given) and matches every filter word.

    ``hay`` is :func:`haystack` of the entry (computed once by callers that filter
    the same entries many times).
    """
    if table is not None and entry["table"] != table:
        return False
    for field, value in words:
        if field is None:
            if value not in hay:
                return False
        elif value not in str(entry[field]).lower():
            return False
    return True


def actor_matches(actor: str, wanted: str) -> bool:
    """``cli`` matches ``cli`` and every ``cli:<agent>``; a full name matches itself."""
    return actor == wanted or actor.startswith(wanted + ":")


def record_matches(record_id: str, wanted: str) -> bool:
    """The whole id, or (from four characters) a start or an end of it, as ids are typed."""
    if record_id == wanted:
        return True
    return len(wanted) >= MIN_RECORD_KEY and (
        record_id.startswith(wanted) or record_id.endswith(wanted)
    )


def query_op(
    store: Store,
    *,
    table: str | None = None,
    record: str | None = None,
    actor: str | None = None,
    limit: int = 50,
) -> list[Entry]:
    """The ``history`` operation: :func:`query`, with ``limit`` at least 1."""
    if limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {limit})")
    return query(store, table=table, record=record, actor=actor, limit=limit)


def query(
    store: Store,
    *,
    table: str | None = None,
    record: str | None = None,
    actor: str | None = None,
    limit: int | None = None,
) -> list[Entry]:
    """Audit entries, newest first, that match every filter given.

    ``table`` is a logical table (``lessons``), ``record`` a record id (or a start
    or end of one, see :func:`record_matches`), ``actor`` an actor or an actor kind
    (see :func:`actor_matches`). Stops reading as soon as ``limit`` entries matched.
    While agents are isolated, an agent's door does not see other agents' entries.
    """
    out: list[Entry] = []
    if limit is not None and limit <= 0:
        return out
    with store.reading():
        from ..ledger.isolation import viewer

        view = viewer(store)
        owners = RecordOwners(store) if view is not None else None
        for entry in newest_first(store):
            if not sees_entry(view, entry, owners):
                continue  # another agent's doing, while agents are isolated
            if table is not None and entry["table"] != table:
                continue
            if record is not None and not record_matches(entry["record_id"], record):
                continue
            if actor is not None and not actor_matches(entry["actor"], actor):
                continue
            out.append(entry)
            if limit is not None and len(out) >= limit:
                break
    return out


def sees_entry(view: str | None, entry: Entry, owners: RecordOwners | None = None) -> bool:
    """Whether a caller that reads as ``view`` (:func:`core.ledger.isolation.viewer`) sees
    an audit entry: while agents are isolated, an agent sees its own doings and those of
    callers with no agent id, never another agent's (their summaries hold its words);
    with ``owners``, not those callers' doings on another agent's records either (a
    curator's "forgot session ses_…" names it)."""
    from ..ledger.isolation import agent_of, sees

    if view is None:
        return True
    agent = agent_of(str(entry["actor"]))
    if agent:
        return sees(view, agent)
    return owners is None or sees(view, owners.owner(entry))


class RecordOwners:
    """The agent that owns the record an audit entry names, found as entries ask (read
    once per kind, inside the caller's read)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._maps: dict[str, dict[str, str]] = {}

    def owner(self, entry: Entry) -> str:
        """The owning agent (``""``: global, gone, or a kind agents do not own)."""
        from ..ledger.isolation import owner_of_session

        table, record = str(entry["table"]), str(entry["record_id"])
        if table == "sessions":
            return owner_of_session(self.store, record)
        kind = table.split(".", 1)[0]
        if kind not in ("actions", "episodes", "observations"):
            return ""
        if kind not in self._maps:
            self._maps[kind] = self._read(kind)
        return self._maps[kind].get(record, "")

    def _read(self, kind: str) -> dict[str, str]:
        from ..ledger.isolation import owner_of_session

        store = self.store
        found: dict[str, str] = {}
        if kind == "episodes":
            for name in store.table_names("episodes"):
                for doc in store.docs(name).values():
                    if doc.get("agent_id"):
                        found[str(doc.get("id"))] = str(doc["agent_id"])
            return found
        if kind == "actions":
            if store.has_table("actions"):
                for doc in store.docs("actions").values():
                    owner = owner_of_session(store, doc.get("session_id"))
                    if owner:
                        found[str(doc.get("id"))] = owner
            return found
        for name in store.table_names("observations"):
            if "." not in name:
                continue
            owner = owner_of_session(store, name.split(".", 1)[1])
            if owner:
                found.update(dict.fromkeys(store.docs(name), owner))
        return found


def visible(store: Store, entries: list[Entry]) -> list[Entry]:
    """The ``entries`` this call may see (call inside a read), in their order."""
    from ..ledger.isolation import viewer

    view = viewer(store)
    if view is None:
        return entries
    owners = RecordOwners(store)
    return [e for e in entries if sees_entry(view, e, owners)]


# -- the record an entry names -------------------------------------------------------------
def locate(store: Store, table: str, record_id: str) -> tuple[str, str] | None:
    """``(kind, ref)`` of the record an audit entry names, or None when it is gone
    (or when no kind of record lives in ``table``). See :mod:`core.models.kinds` for refs."""
    kind = of_table(table)
    if kind is None:
        return None
    with store.reading():
        ref = _find(store, table, record_id)
    return (kind.name, ref) if ref is not None else None


def _find(store: Store, table: str, record_id: str) -> str | None:
    from ..domain import cards, episodes, lessons, rules, sessions
    from . import checkpoints

    resolvers = {
        "episodes": episodes.get_episode,
        "mistake_cards": cards.resolve,
        "lessons": lessons.resolve,
        "checkpoints": checkpoints.resolve,
        "sessions": sessions.resolve,
    }
    if table in resolvers:
        try:
            return str(resolvers[table](store, record_id)["id"])
        except MemworkError:
            return None
    if table == "rules":
        if not record_id.startswith("rule_"):
            return record_id  # a consolidation names a scope, not one rule
        found = any(r["id"] == record_id for r in rules.all_rules(store))
        return record_id if found else None
    if table in ("slots", "proposals", "actions", "profiles"):
        return record_id if store.has_table(table) and store.get(table, record_id) else None
    if table == "observations":
        for name in physical_tables(store.table_names("observations"), "observations"):
            doc = store.docs(name).get(record_id)
            if doc is not None:
                return f"{doc['session_id']}/{record_id}"
        return None
    if table == "working_memory":
        # A working-memory entry names its session, or (checkpoints) the checkpoint.
        if record_id in store.docs("sessions"):
            return record_id
        for name in physical_tables(store.table_names("working_memory"), "working_memory"):
            doc = store.docs(name).get(record_id)
            if doc is not None and doc.get("session_id") in store.docs("sessions"):
                return str(doc["session_id"])
        return None
    return None
