"""What the global search covers: every kind of memory, as SearchDocs.

Runs off the UI thread in the workbench (reading every episode shard of a big store takes a
second); the result replaces the app's index in one assignment.
"""

from __future__ import annotations

from core import shards
from core.search_index import SearchDoc, SearchIndex
from core.storage.store import Store
from core.tables import physical_tables

#: Record kind → the pane that shows it.
PANE_OF = {
    "episode": "episodes",
    "card": "cards",
    "lesson": "lessons",
    "rule": "lessons",
    "slot": "slots",
    "session": "sessions",
    "observation": "sessions",
    "checkpoint": "checkpoints",
}


def _clip(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _episode_docs(store: Store, name: str):
    for doc in store.docs(name).values():
        body = " ".join(
            [doc.get("summary", ""), *doc.get("mistakes", []), *doc.get("successes", [])]
        )
        body += " " + " ".join(e.get("message", "") for e in doc.get("errors", []))
        yield SearchDoc(
            "episode", doc["id"], f"#{doc['index']} {doc['task_id']}: {_clip(doc['summary'])}", body
        )


def _small_tables(store: Store):
    for doc in store.docs("mistake_cards").values():
        yield SearchDoc(
            "card",
            doc["id"],
            f"[{doc['mistake_type']}] {_clip(doc['lesson'])}",
            f"{doc['task_id']} {doc.get('bad_decision', '')} {doc.get('correct_decision', '')} "
            f"{doc.get('evidence', '')}",
        )
    for doc in store.docs("lessons").values():
        yield SearchDoc(
            "lesson",
            doc["id"],
            _clip(doc["content"]),
            f"{doc['scope']} {' '.join(doc.get('tags', []))}",
        )
    for name in store.table_names("rules"):
        for doc in store.docs(name).values():
            yield SearchDoc("rule", doc["id"], _clip(doc["text"]), doc["scope"])
    for doc in store.docs("slots").values():
        yield SearchDoc(
            "slot",
            doc["id"],
            doc["label"],
            f"{doc.get('description', '')} {doc.get('content', '')}",
        )
    titles: dict[str, str] = {}
    for doc in store.docs("sessions").values():
        titles[doc["id"]] = doc.get("title") or doc.get("agent_id") or doc["id"]
        yield SearchDoc(
            "session",
            doc["id"],
            _clip(doc.get("title") or doc["id"]),
            f"{doc.get('agent_id', '')} {doc.get('project', '')} {doc.get('summary', '')}",
        )
    for name in physical_tables(store.table_names(), "observations"):
        for doc in store.docs(name).values():
            # The same note often recurs across sessions; naming the session tells the hits apart.
            session = _clip(titles.get(doc["session_id"], doc["session_id"]), 28)
            yield SearchDoc(
                "observation",
                f"{doc['session_id']}/{doc['id']}",
                f"{doc['kind']} · {session}: {_clip(doc['content'])}",
                " ".join([session, *doc.get("tags", [])]),
            )
    for doc in store.docs("checkpoints").values():
        yield SearchDoc(
            "checkpoint", doc["id"], _clip(doc.get("description") or doc["id"]), doc["created_at"]
        )


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
