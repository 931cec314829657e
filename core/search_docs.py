"""What the global search covers: every kind of memory, as SearchDocs.

Runs off the UI thread in the workbench (reading every episode shard of a big store takes a
second); the result replaces the app's index in one assignment.
"""

from __future__ import annotations

from datetime import datetime

from core import shards
from core.clock import parse_instant
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


def episode_doc(doc: dict) -> SearchDoc:
    """The search document of one stored episode."""
    body = " ".join([doc.get("summary", ""), *doc.get("mistakes", []), *doc.get("successes", [])])
    body += " " + " ".join(e.get("message", "") for e in doc.get("errors", []))
    return SearchDoc(
        "episode", doc["id"], f"#{doc['index']} {doc['task_id']}: {_clip(doc['summary'])}", body
    )


def _episode_docs(store: Store, name: str):
    for doc in store.docs(name).values():
        yield episode_doc(doc)


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


def small_table_docs(store: Store) -> list[SearchDoc]:
    """Every record but episodes and working memory (call inside ``store.reading()``)."""
    return list(_small_tables(store))


def working_memory_docs(store: Store, now: datetime) -> list[SearchDoc]:
    """Live working-memory keys, task states and scratchpad notes of every session.

    Kind ``wm``; refs are ``<session>/<key>``, ``<session>/task`` and
    ``<session>/scratch/<n>``. Expired keys are left out, as every read leaves
    them out. Call inside ``store.reading()``.
    """
    found: list[SearchDoc] = []
    for name in physical_tables(store.table_names(), "working_memory"):
        for doc in store.docs(name).values():
            if "kv" not in doc:
                continue  # a checkpoint, not the live state
            sid = doc["session_id"]
            for key, entry in sorted(doc["kv"].items()):
                expires = entry.get("expires_at")
                # The rule of core.working_memory.is_expired, without importing its models.
                if expires and parse_instant(expires) <= now:
                    continue
                value = entry["value"] if isinstance(entry["value"], str) else str(entry["value"])
                found.append(SearchDoc("wm", f"{sid}/{key}", _clip(f"{key} = {value}"), sid))
            task = doc.get("task")
            if task:
                title = _clip(f"task {task.get('task_id', '')}: {task.get('description', '')}")
                found.append(SearchDoc("wm", f"{sid}/task", title, f"{sid} {task.get('status')}"))
            for number, entry in enumerate(doc.get("scratchpad", []), start=1):
                found.append(
                    SearchDoc("wm", f"{sid}/scratch/{number}", _clip(entry.get("text", "")), sid)
                )
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
