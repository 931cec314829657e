"""The parts of an agentmemory export that become links and work items.

Read by :mod:`core.services.interop.agentmemory` once its lessons are known
(relations point at memories, which become lessons).

- **actions** (list, or object id → action) → work items (memwork's actions):
  ``title`` (required), ``status`` (pending, active, blocked, done, cancelled;
  ``in_progress`` reads as active), ``priority`` (a whole number), ``project``,
  ``createdBy`` (else ``agentId``) as the agent, ``createdAt``/``updatedAt``.
  The ``description``, the ``result`` and the ``tags`` become the action's notes,
  so nothing the source said about the work is lost. A closed action's
  ``closed_at`` is its ``updatedAt``.
- **actionEdges** → links between the imported actions. ``requires`` and
  ``gated_by`` (the source waits for the target) and ``unlocks`` (the target
  waits for the source) become ``after`` links, memwork's dependencies; an
  action's own ``dependsOn``/``requires``/``blockedBy`` lists do too. Other edge
  types (``spawned_by``, ``conflicts_with``, …) and an action's ``parentId``
  (``spawned_by``) are kept as links of that kind. Dependencies that would close
  a cycle are refused, naming it, as ``memwork action add --after`` refuses them.
- **relations** (list, or object id → relation) → links between the lessons
  the memories became: ``{type, sourceId, targetId}``; the type is the link's
  kind (``supersedes`` keeps its meaning: the target is replaced). A memory's
  own ``relatedIds`` add ``related`` links for pairs no relation names.

Ids map: every end is the id the record got in this store, and link ids are
derived from the source ids, so importing the same file twice reports clashes
instead of doubling the links. A relation or edge whose end the import does not
hold (an older memory version, an action the export lacks) is not stored; the
note counts it (``links_skipped``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ...base.clock import iso
from ...base.errors import InvalidInput
from ...base.text import one_line
from ...domain.actions import CLOSED, STATUSES, cycle_named
from ...ledger import links
from ...privacy import scrub
from . import agentmemory_read as readers
from .bundle import Bundle

#: Edge types where the source waits for the target, and where the target waits.
_WAITS_FOR_TARGET = {"requires", "gated_by", "depends_on", "blocked_by", "after"}
_WAITS_FOR_SOURCE = {"unlocks", "blocks", "before"}
_STATUS_ALIASES = {"in_progress": "active", "running": "active", "open": "pending"}
_WORD = re.compile(r"[^a-z0-9_-]+")


def _items(data: dict[str, Any], key: str, aliases: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """``(where, item)`` for a list, or an object id → item (the id filled in)."""
    for name in (key, *aliases):
        raw = data.get(name)
        if raw is None:
            continue
        if isinstance(raw, dict):
            return [
                (f"{name}.{k}", {"id": k, **v} if isinstance(v, dict) else v)
                for k, v in raw.items()
            ]
        if isinstance(raw, list):
            return [(f"{name}[{n}]", item) for n, item in enumerate(raw, start=1)]
        raise InvalidInput(name, f"must be a list (got {type(raw).__name__})")
    return []


def link_kind(value: Any, field: str) -> str:
    """A source relation type as a link kind: lower case, other characters as ``_``."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, "must be a non-empty string (the relation's type)")
    kind = _WORD.sub("_", value.strip().lower()).strip("_")
    if not links.is_kind(kind):
        raise InvalidInput(field, f"{links.KIND_RULE} (got {value!r})")
    return kind


class Work:
    """Actions, their dependencies and the lessons' relations, gathered into links."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        #: Source action id → memwork action id.
        self.actions: dict[str, str] = {}
        self.links: dict[str, dict[str, Any]] = {}
        self.skipped: dict[str, int] = {}
        self.dependencies = 0
        self.relations = 0
        self._after: dict[str, list[str]] = {}

    # -- actions -----------------------------------------------------------------------
    def add_actions(self, data: dict[str, Any], bundle: Bundle) -> None:
        """Every action, then every dependency and edge between them."""
        raw = _items(data, "actions")
        for where, item in raw:
            item = readers.object_of(item, where)
            source_id = readers.ident(item, ("id", "actionId", "action_id"), where)
            if source_id is None:
                raise InvalidInput(f"{where}.id", "is required (the action's id)")
            if source_id in self.actions:
                raise InvalidInput(f"{where}.id", f"repeats action {source_id!r}")
            doc = self._action(item, where, source_id)
            self.actions[source_id] = doc["id"]
            bundle.add("actions", doc)
        for where, item in raw:
            own = readers.ident(item, ("id", "actionId", "action_id"), where)
            for key in ("dependsOn", "depends_on", "requires", "blockedBy", "blocked_by"):
                for n, other in enumerate(self._id_list(item, key, where), start=1):
                    self._edge("requires", own, other, item, f"{where}.{key}[{n}]")
            parent = readers.ident(item, ("parentId", "parent_id"), where)
            if parent is not None:
                self._edge("spawned_by", own, parent, item, f"{where}.parentId")
        for where, item in _items(data, "actionEdges", ("action_edges",)):
            item = readers.object_of(item, where)
            kind = link_kind(item.get("type", item.get("kind")), f"{where}.type")
            src = readers.ident(item, ("sourceActionId", "source_action_id", "from"), where)
            dst = readers.ident(item, ("targetActionId", "target_action_id", "to"), where)
            if src is None or dst is None:
                field = "sourceActionId" if src is None else "targetActionId"
                raise InvalidInput(f"{where}.{field}", "is required (an action id)")
            self._edge(kind, src, dst, item, where)

    def _action(self, item: dict[str, Any], where: str, source_id: str) -> dict[str, Any]:
        title = one_line(scrub(readers.text(item, ("title", "name"), where)))
        if not title:
            raise InvalidInput(f"{where}.title", "must be a non-empty string")
        status_key, status = readers.first(item, ("status", "state"))
        status = "pending" if status is None else status
        if not isinstance(status, str):
            raise InvalidInput(f"{where}.{status_key}", f"must be a string (got {status!r})")
        status = _STATUS_ALIASES.get(status.strip().lower(), status.strip().lower())
        if status not in STATUSES:
            raise InvalidInput(
                f"{where}.{status_key}", f"must be one of {', '.join(STATUSES)} (got {status!r})"
            )
        key, priority = readers.number(item, ("priority",), where)
        if priority is not None and not float(priority).is_integer():
            raise InvalidInput(f"{where}.{key}", f"must be a whole number (got {priority})")
        created = readers.instant(item, ("createdAt", "created_at"), where) or self.now
        updated = readers.instant(item, ("updatedAt", "updated_at"), where) or created
        agent = readers.text(
            item, ("createdBy", "created_by", "agentId", "agent_id"), where
        ).strip()
        notes = []
        by = readers.text(item, ("assignedTo", "assigned_to"), where).strip()
        description = readers.text(item, ("description", "details"), where).strip()
        if description:
            notes.append({"ts": iso(created), "text": scrub(description), "by": agent})
        result = readers.text(item, ("result", "outcome"), where).strip()
        if result:
            notes.append({"ts": iso(updated), "text": "Result: " + scrub(result), "by": by})
        tags = readers.strings(item, ("tags",), where)
        if tags:
            notes.append({"ts": iso(created), "text": "Tags: " + ", ".join(tags), "by": ""})
        if by:
            notes.append({"ts": iso(updated), "text": f"Assigned to {scrub(by)}", "by": ""})
        return {
            "agent_id": agent,
            "closed_at": iso(updated) if status in CLOSED else None,
            "created_at": iso(created),
            "id": readers.stable_id("act", created, "action", source_id),
            "notes": notes,
            "priority": int(priority or 0),
            "project": scrub(readers.text(item, ("project",), where)).strip(),
            "session_id": "",
            "status": status,
            "title": title,
            "updated_at": iso(updated),
        }

    def _id_list(self, item: Any, key: str, where: str) -> list[str]:
        if not isinstance(item, dict) or item.get(key) is None:
            return []
        value = item[key]
        if not isinstance(value, list) or not all(
            isinstance(v, str | int) and not isinstance(v, bool) for v in value
        ):
            raise InvalidInput(f"{where}.{key}", "must be a list of action ids")
        return [str(v) for v in value]

    def _edge(self, kind: str, src: str | None, dst: str, item: Any, where: str) -> None:
        if src is None:
            return
        if kind in _WAITS_FOR_SOURCE:
            kind, src, dst = "requires", dst, src
        waits = kind in _WAITS_FOR_TARGET
        made = links.AFTER if waits else kind
        if made in links.MANAGED:
            raise InvalidInput(f"{where}.type", f"{kind} is not a relation between actions")
        frm, to = self.actions.get(src), self.actions.get(dst)
        if frm is None or to is None:
            self._skip("action_missing")
            return
        if waits:
            if frm == to:
                raise InvalidInput(where, f"an action cannot wait for itself ({src})")
            cycle = cycle_named(self._after, frm, to)
            if cycle is not None:
                raise InvalidInput(where, "would make a cycle: " + cycle)
        when = self._when(item, where)
        if self._put(made, frm, to, "actions", when, ("action", src, dst)) and waits:
            self._after.setdefault(frm, []).append(to)
            self.dependencies += 1

    # -- relations between memories ---------------------------------------------------------
    def add_relations(
        self, data: dict[str, Any], lessons: dict[str, str], older: set[str], memories: list[Any]
    ) -> None:
        """``relations`` and the memories' ``relatedIds``, as links between their lessons.

        ``lessons``: source memory (or lesson) id → lesson id; ``older``: ids of memory
        versions the import skipped (a relation to one is counted, not stored)."""
        named: set[frozenset[str]] = set()
        for where, item in _items(data, "relations", ("memoryRelations", "memory_relations")):
            item = readers.object_of(item, where)
            kind = link_kind(item.get("type", item.get("kind")), f"{where}.type")
            if kind in links.MANAGED and kind != links.SUPERSEDES:
                # memwork keeps these itself between rules, cards and episodes.
                raise InvalidInput(f"{where}.type", f"{kind} is not a relation between memories")
            src = readers.ident(item, ("sourceId", "source_id", "from"), where)
            dst = readers.ident(item, ("targetId", "target_id", "to"), where)
            if src is None or dst is None:
                field = "sourceId" if src is None else "targetId"
                raise InvalidInput(f"{where}.{field}", "is required (a memory id)")
            named.add(frozenset((src, dst)))
            self._relation(kind, src, dst, item, where, lessons, older)
        for n, item in enumerate(memories, start=1):
            where = f"memories[{n}]"
            if not isinstance(item, dict) or item.get("isLatest") is False:
                continue
            src = readers.ident(item, ("id", "memoryId"), where)
            for m, other in enumerate(self._id_list(item, "relatedIds", where), start=1):
                if src is None or frozenset((src, other)) in named:
                    continue
                named.add(frozenset((src, other)))
                self._relation(
                    "related", src, other, item, f"{where}.relatedIds[{m}]", lessons, older
                )

    def _relation(
        self,
        kind: str,
        src: str,
        dst: str,
        item: dict[str, Any],
        where: str,
        lessons: dict[str, str],
        older: set[str],
    ) -> None:
        frm, to = lessons.get(src), lessons.get(dst)
        if frm is None or to is None:
            self._skip("older_version" if {src, dst} & older else "memory_missing")
            return
        if frm == to:
            self._skip("same_lesson")  # two copies the import merged into one lesson
            return
        if self._put(kind, frm, to, "lessons", self._when(item, where), ("memory", src, dst)):
            self.relations += 1

    # -- shared ---------------------------------------------------------------------------
    def _when(self, item: Any, where: str) -> datetime:
        if not isinstance(item, dict):
            return self.now
        return readers.instant(item, ("createdAt", "created_at"), where) or self.now

    def _put(
        self, kind: str, frm: str, to: str, home: str, when: datetime, source: tuple[str, ...]
    ) -> bool:
        # The id comes from the source's ids, so a second import of the file clashes.
        lid = links.link_id(kind, "agentmemory:" + source[1], f"{source[0]}:{source[2]}", when)
        if lid in self.links:
            self._skip("repeated")
            return False
        doc = links.make(kind, frm, to, home, when)
        doc["id"] = lid
        self.links[lid] = doc
        return True

    def _skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def finish(self, bundle: Bundle, note: dict[str, Any]) -> None:
        """Queue the links and say in the note what was made and what was not."""
        for doc in self.links.values():
            bundle.add("links", doc)
        if self.dependencies:
            note["dependencies"] = self.dependencies
        if self.relations:
            note["relations"] = self.relations
        if self.skipped:
            note["links_skipped"] = dict(sorted(self.skipped.items()))
