"""What the global search covers: every kind of memory, as SearchDocs.

Runs off the UI thread in the workbench (reading every episode shard of a big store takes a
second); the result replaces the app's index in one assignment.
"""

from __future__ import annotations

from collections.abc import Iterator

from core import shards
from core.kinds import KINDS
from core.search_index import SearchDoc, SearchIndex
from core.storage.store import Store
from core.tables import physical_tables
from core.text import clip

#: How wide a hit's title may be (the search box is 100 columns).
TITLE_WIDTH = 90


def _doc(kind: str, doc: dict, body: str) -> SearchDoc:
    entry = KINDS[kind]
    return SearchDoc(kind, entry.ref_of(doc), entry.title(doc, TITLE_WIDTH), body)


def _episode_docs(store: Store, name: str) -> Iterator[SearchDoc]:
    for doc in store.docs(name).values():
        body = " ".join(
            [doc.get("summary", ""), *doc.get("mistakes", []), *doc.get("successes", [])]
        )
        body += " " + " ".join(e.get("message", "") for e in doc.get("errors", []))
        yield _doc("episode", doc, body)


def _small_tables(store: Store) -> Iterator[SearchDoc]:
    for doc in store.docs("mistake_cards").values():
        yield _doc(
            "card",
            doc,
            f"{doc['task_id']} {doc.get('bad_decision', '')} {doc.get('correct_decision', '')} "
            f"{doc.get('evidence', '')}",
        )
    for doc in store.docs("lessons").values():
        yield _doc("lesson", doc, f"{doc['scope']} {' '.join(doc.get('tags', []))}")
    for name in store.table_names("rules"):
        for doc in store.docs(name).values():
            yield _doc("rule", doc, doc["scope"])
    for doc in store.docs("slots").values():
        yield _doc("slot", doc, f"{doc.get('description', '')} {doc.get('content', '')}")
    titles: dict[str, str] = {}
    for doc in store.docs("sessions").values():
        titles[doc["id"]] = KINDS["session"].title(doc)
        yield _doc(
            "session",
            doc,
            f"{doc.get('agent_id', '')} {doc.get('project', '')} {doc.get('summary', '')}",
        )
    observation = KINDS["observation"]
    for name in physical_tables(store.table_names(), "observations"):
        for doc in store.docs(name).values():
            # The same note often recurs across sessions; naming the session tells the hits apart.
            session = clip(titles.get(doc["session_id"], doc["session_id"]), 28)
            yield SearchDoc(
                "observation",
                observation.ref_of(doc),
                f"{doc['kind']} · {session}: {clip(doc['content'], TITLE_WIDTH)}",
                " ".join([session, *doc.get("tags", [])]),
            )
    for doc in store.docs("checkpoints").values():
        yield _doc("checkpoint", doc, doc["created_at"])


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
