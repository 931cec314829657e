"""What the workbench's global search covers: every kind of memory but working memory,
as SearchDocs (for :mod:`.search_index`).

A document's title is its kind's title (:mod:`core.models.kinds`) and its body the
searchable text recall reads of the record (:func:`.extract.body_text`): one definition
of what each kind holds as text. Where the workbench reads more or less than recall is
listed with :data:`.extract.BODY_FIELDS`, and done here.

Runs off the UI thread in the workbench (reading every episode shard of a big store takes a
second); the result replaces the app's index in one assignment.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...base.text import clip
from ...domain import readable
from ...ledger import links
from ...models.kinds import KINDS
from ...storage import shards
from ...storage.store import Store
from ...storage.tables import physical_tables
from .extract import body_text
from .search_index import SearchDoc, SearchIndex

#: How wide a hit's title may be (the search box is 100 columns).
TITLE_WIDTH = 90


def _doc(kind: str, doc: dict[str, Any], body: str | None = None) -> SearchDoc:
    """A record's document: its kind's title, and as body :func:`.extract.body_text` (or
    ``body``, where the workbench reads the record otherwise)."""
    entry = KINDS[kind]
    text = body_text(kind, doc) if body is None else body
    return SearchDoc(kind, entry.ref_of(doc), entry.title(doc, TITLE_WIDTH), text)


def episode_doc(doc: dict[str, Any]) -> SearchDoc:
    """The search document of one stored episode."""
    return _doc("episode", doc)


def _episode_docs(store: Store, name: str) -> Iterator[SearchDoc]:
    for doc in readable.docs(store, name).values():
        yield episode_doc(doc)


def _small_tables_but_sessions(store: Store) -> Iterator[SearchDoc]:
    yield from _cards_and_lessons(store)
    for name in store.table_names("rules"):
        yield from rule_docs(store, name)
    yield from _slots(store)


def _cards_and_lessons(store: Store) -> Iterator[SearchDoc]:
    for doc in readable.docs(store, "mistake_cards").values():
        yield _doc("card", doc)
    for doc in links.with_lesson_relations(store, readable.docs(store, "lessons").values()):
        found = _doc("lesson", doc)  # forgotten ones too, unlike recall
        # A lesson the agent no longer gets says so in a hit, before its (cut) text.
        state = (
            "superseded" if doc.get("superseded_by") else "forgotten" if doc.get("deleted") else ""
        )
        if state:
            found = SearchDoc(found.kind, found.ref, f"({state}) {found.title}", found.text)
        yield found


def _slots(store: Store) -> Iterator[SearchDoc]:
    for doc in readable.docs(store, "slots").values():
        yield _doc("slot", doc)


def rule_docs(store: Store, name: str) -> Iterator[SearchDoc]:
    """The search documents of one rules table (active rules of a scope, or an archive)."""
    for doc in readable.docs(store, name).values():
        yield _doc("rule", doc)


def _sessions(store: Store) -> Iterator[SearchDoc]:
    for doc in readable.docs(store, "sessions").values():
        yield _doc("session", doc)


def _checkpoints(store: Store) -> Iterator[SearchDoc]:
    for doc in store.docs("checkpoints").values():
        yield _doc("checkpoint", doc, doc["created_at"])  # found by its time, unlike recall


def session_titles(store: Store) -> dict[str, str]:
    """Session id → the title observations are shown under."""
    return {
        doc["id"]: KINDS["session"].title(doc) for doc in readable.docs(store, "sessions").values()
    }


def observation_docs(store: Store, name: str, titles: dict[str, str]) -> Iterator[SearchDoc]:
    """The search documents of one observations table (``titles``: :func:`session_titles`)."""
    observation = KINDS["observation"]
    for doc in readable.docs(store, name).values():
        # The same note often recurs across sessions; naming the session tells the hits apart.
        session_id: str = doc["session_id"]
        session = clip(titles.get(session_id, session_id), 28)
        yield SearchDoc(
            "observation",
            observation.ref_of(doc),
            f"{doc['kind']} · {session}: {clip(doc['content'], TITLE_WIDTH)}",
            f"{session} {body_text('observation', doc)}",
        )


def build_index(store: Store) -> SearchIndex:
    """A fresh index over everything the workbench curates (the audit log has its own pane).

    Each session's notes and each episode shard are read under a short lock of their
    own, and the index is built with no lock held, so agents' writes never wait for
    an index of a big store (the 90,000 notes of a 100k store under one lock held
    every other reader and writer up for seconds).
    """
    docs: list[SearchDoc] = []
    with store.reading():
        docs.extend(_small_tables_but_sessions(store))
        docs.extend(_sessions(store))
        titles = session_titles(store)
        notes = physical_tables(store.table_names(), "observations")
        names = shards.shard_names(store, "episodes")
    for name in notes:
        with store.reading():
            docs.extend(observation_docs(store, name, titles))
    with store.reading():
        docs.extend(_checkpoints(store))
    for name in reversed(names):
        with store.reading():
            docs.extend(_episode_docs(store, name))
    index = SearchIndex(docs)
    index.warm_up()
    return index
