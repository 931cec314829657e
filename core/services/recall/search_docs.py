"""What the global search covers: every kind of memory, as SearchDocs.

Runs off the UI thread in the workbench (reading every episode shard of a big store takes a
second); the result replaces the app's index in one assignment.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ...base.clock import parse_instant
from ...base.text import clip
from ...ledger import links
from ...models.kinds import KINDS
from ...storage import shards
from ...storage.store import Store
from ...storage.tables import physical_tables
from .search_index import SearchDoc, SearchIndex

#: How wide a hit's title may be (the search box is 100 columns).
TITLE_WIDTH = 90


def _doc(kind: str, doc: dict[str, Any], body: str) -> SearchDoc:
    entry = KINDS[kind]
    return SearchDoc(kind, entry.ref_of(doc), entry.title(doc, TITLE_WIDTH), body)


def episode_doc(doc: dict[str, Any]) -> SearchDoc:
    """The search document of one stored episode."""
    body = " ".join([doc.get("summary", ""), *doc.get("mistakes", []), *doc.get("successes", [])])
    body += " " + " ".join(e.get("message", "") for e in doc.get("errors", []))
    return _doc("episode", doc, body)


def _episode_docs(store: Store, name: str) -> Iterator[SearchDoc]:
    for doc in store.docs(name).values():
        yield episode_doc(doc)


def _small_tables(store: Store) -> Iterator[SearchDoc]:
    yield from _small_tables_but_sessions(store)
    yield from _sessions(store)
    titles = session_titles(store)
    for name in physical_tables(store.table_names(), "observations"):
        yield from observation_docs(store, name, titles)
    yield from _checkpoints(store)


def _small_tables_but_sessions(store: Store) -> Iterator[SearchDoc]:
    yield from _cards_and_lessons(store)
    for name in store.table_names("rules"):
        yield from rule_docs(store, name)
    yield from _slots(store)


def _cards_and_lessons(store: Store) -> Iterator[SearchDoc]:
    for doc in store.docs("mistake_cards").values():
        yield _doc(
            "card",
            doc,
            f"{doc['task_id']} {doc.get('bad_decision', '')} {doc.get('correct_decision', '')} "
            f"{doc.get('evidence', '')}",
        )
    for doc in links.with_lesson_relations(store, store.docs("lessons").values()):
        found = _doc("lesson", doc, f"{doc['scope']} {' '.join(doc.get('tags', []))}")
        # A lesson the agent no longer gets says so in a hit, before its (cut) text.
        state = (
            "superseded" if doc.get("superseded_by") else "forgotten" if doc.get("deleted") else ""
        )
        if state:
            found = SearchDoc(found.kind, found.ref, f"({state}) {found.title}", found.text)
        yield found


def _slots(store: Store) -> Iterator[SearchDoc]:
    for doc in store.docs("slots").values():
        yield _doc("slot", doc, f"{doc.get('description', '')} {doc.get('content', '')}")


def rule_docs(store: Store, name: str) -> Iterator[SearchDoc]:
    """The search documents of one rules table (active rules of a scope, or an archive)."""
    for doc in store.docs(name).values():
        yield _doc("rule", doc, doc["scope"])


def _sessions(store: Store) -> Iterator[SearchDoc]:
    for doc in store.docs("sessions").values():
        yield _doc(
            "session",
            doc,
            f"{doc.get('agent_id', '')} {doc.get('project', '')} {doc.get('summary', '')}",
        )


def _checkpoints(store: Store) -> Iterator[SearchDoc]:
    for doc in store.docs("checkpoints").values():
        yield _doc("checkpoint", doc, doc["created_at"])


def session_titles(store: Store) -> dict[str, str]:
    """Session id → the title observations are shown under."""
    return {doc["id"]: KINDS["session"].title(doc) for doc in store.docs("sessions").values()}


def observation_docs(store: Store, name: str, titles: dict[str, str]) -> Iterator[SearchDoc]:
    """The search documents of one observations table (``titles``: :func:`session_titles`)."""
    observation = KINDS["observation"]
    for doc in store.docs(name).values():
        # The same note often recurs across sessions; naming the session tells the hits apart.
        session_id: str = doc["session_id"]
        session = clip(titles.get(session_id, session_id), 28)
        yield SearchDoc(
            "observation",
            observation.ref_of(doc),
            f"{doc['kind']} · {session}: {clip(doc['content'], TITLE_WIDTH)}",
            " ".join([session, *doc.get("tags", [])]),
        )


def small_table_docs(store: Store, *, tables: bool = True) -> list[SearchDoc]:
    """Every record but episodes and working memory (call inside ``store.reading()``).

    ``tables=False`` leaves out rules and observations, which callers then read
    table by table (:func:`rule_docs`, :func:`observation_docs`).
    """
    if tables:
        return list(_small_tables(store))
    return [*_cards_and_lessons(store), *_slots(store), *_sessions(store), *_checkpoints(store)]


def working_memory_docs(store: Store, now: datetime) -> list[SearchDoc]:
    """Live working-memory keys, task states and scratchpad notes of every session.

    Kind ``wm``; refs are ``<session>/<key>``, ``<session>/task`` and
    ``<session>/scratch/<n>``. Expired keys are left out, as every read leaves
    them out. Not part of the workbench's index (no pane jumps to one key yet);
    ``memwork search`` covers them. Call inside ``store.reading()``.
    """
    found: list[SearchDoc] = []
    for name in physical_tables(store.table_names(), "working_memory"):
        for doc in store.docs(name).values():
            if "kv" not in doc:
                continue  # a checkpoint, not the live state
            sid = doc["session_id"]
            for key, entry in sorted(doc["kv"].items()):
                expires = entry.get("expires_at")
                # The rule of working_memory.state.is_expired, without importing its models.
                if expires and parse_instant(expires) <= now:
                    continue
                value = entry["value"] if isinstance(entry["value"], str) else str(entry["value"])
                title = clip(f"{key} = {value}", TITLE_WIDTH)
                found.append(SearchDoc("wm", f"{sid}/{key}", title, sid))
            task = doc.get("task")
            if task:
                title = clip(f"task {task.get('task_id', '')}: {task.get('description', '')}", 90)
                found.append(SearchDoc("wm", f"{sid}/task", title, f"{sid} {task.get('status')}"))
            for number, entry in enumerate(doc.get("scratchpad", []), start=1):
                text = clip(entry.get("text", ""), TITLE_WIDTH)
                found.append(SearchDoc("wm", f"{sid}/scratch/{number}", text, sid))
    return found


def build_index(store: Store) -> SearchIndex:
    """A fresh index over everything the workbench curates (the audit log has its own pane).

    Each shard is read under its own short lock, and the index is built with no
    lock held, so agents' writes never wait for an index of a big store.
    """
    docs: list[SearchDoc] = []
    with store.reading():
        docs.extend(_small_tables(store))
        names = shards.shard_names(store, "episodes")
    for name in reversed(names):
        with store.reading():
            docs.extend(_episode_docs(store, name))
    index = SearchIndex(docs)
    index.warm_up()
    return index
