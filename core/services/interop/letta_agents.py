"""Letta agents brought in by an import: their name, system prompt and what else the file said.

A Letta agent file is mostly memory blocks, which become slots; the agent around them
(its name, system prompt, description, model, tools) has no record of its own in
memwork. The import keeps each agent here, in one ``meta`` document, so it travels
with the store: ``get letta:<name or id>`` reads one, an export carries them, a
checkpoint restores them, and the workbench shows an imported slot's agent beside
it. The same agent imported again (same id, else same name) is replaced by the
newer import.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base.clock import iso
from ...base.errors import NotFound
from ...storage.store import Store

META = "meta"
DOC = "letta_agents"
#: How ``get`` names an agent: ``letta:<name or id>``.
PREFIX = "letta:"


def all_agents(store: Store) -> list[dict[str, Any]]:
    """Every imported Letta agent, in the order they first came (call inside a read)."""
    doc = store.docs(META).get(DOC)
    return [dict(a) for a in doc["agents"]] if doc else []


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a.get("id") and b.get("id"):
        return bool(a["id"] == b["id"])
    return bool(a.get("name")) and a.get("name") == b.get("name")


def keep(store: Store, note: dict[str, Any], *, import_id: str, now: datetime) -> None:
    """Keep the agents of a Letta import's note (inside the import's transaction)."""
    incoming = [a for a in note.get("agents") or [] if isinstance(a, dict)]
    if not incoming:
        return
    kept = all_agents(store)
    for agent in incoming:
        record = {**agent, "import_id": import_id, "imported_at": iso(now)}
        at = next((i for i, old in enumerate(kept) if _same(old, record)), None)
        if at is None:
            kept.append(record)
        else:
            kept[at] = record
    store.put(META, DOC, {"id": DOC, "agents": kept})


def find(store: Store, key: str) -> dict[str, Any]:
    """The agent ``letta:<key>`` names: by its Letta id, else by its name (call inside a
    read). ``NotFound`` lists the names there are."""
    wanted = key[len(PREFIX) :] if key.startswith(PREFIX) else key
    agents = all_agents(store)
    for match in (
        lambda a: a.get("id") == wanted,
        lambda a: a.get("name") == wanted,
        lambda a: str(a.get("name") or "").lower() == wanted.lower(),
    ):
        found = [a for a in agents if match(a)]
        if len(found) == 1:
            return found[0]
    names = ", ".join(sorted(str(a.get("name") or a.get("id")) for a in agents)) or "none"
    raise NotFound("Letta agent", f"{wanted} (imported agents: {names})")


def owner_of(agents: list[dict[str, Any]], label: str) -> dict[str, Any] | None:
    """The imported agent whose memory block became the slot ``label``, if any."""
    return next((a for a in agents if label in (a.get("blocks") or [])), None)
