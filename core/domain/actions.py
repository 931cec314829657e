"""Work items: actions with dependencies, and the frontier of what can be done now.

An action is something to do (a title, a status, a priority, optionally the
session and project it belongs to, timestamped notes). It may wait for other
actions: ``after`` links (:mod:`core.ledger.links`, kept in ``links.actions``) from the
waiting action to each action it waits for. A dependency that would close a
cycle (A after B after … after A) is refused, naming the cycle.

The *frontier* is what can be worked on now: actions that are pending or
active and whose every dependency is done, highest priority first, then oldest
first. ``memwork context`` shows its top 5 when the store has actions (of the
context's project, when one is given).

Statuses: pending, active, blocked (a person or an agent says so: it never
leaves the frontier by itself), done, cancelled. An action waiting for a
dependency that is not done is not on the frontier whatever its status; a
cancelled dependency is not done (unlink it, or cancel the waiting action too).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from ..base import ids
from ..base.clock import iso
from ..base.errors import InvalidInput, NotFound
from ..base.text import one_line
from ..ledger import audit, links
from ..privacy import identifier_problem, scrub
from ..storage.store import Store
from . import readable

TABLE = "actions"
STATUSES = ("pending", "active", "blocked", "done", "cancelled")
WORKABLE = ("pending", "active")
CLOSED = ("done", "cancelled")
#: How many frontier actions the context shows.
CONTEXT_FRONTIER = 5
#: How many ids of a cycle an error names before it shortens the middle.
CYCLE_SHOWN = 10


# -- reads ------------------------------------------------------------------------------------
def _dependencies(store: Store) -> dict[str, list[str]]:
    """Action id → the actions it waits for, oldest link first (call inside a read)."""
    found: dict[str, list[str]] = {}
    for link in sorted(links.in_home(store, TABLE), key=links.order):
        if link["kind"] == links.AFTER:
            found.setdefault(link["from"], []).append(link["to"])
    return found


def _views(store: Store, docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    actions = readable.docs(store, TABLE) if store.has_table(TABLE) else {}
    deps = _dependencies(store)
    out = []
    for doc in docs:
        after = deps.get(doc["id"], [])
        waiting = [d for d in after if actions.get(d, {}).get("status") != "done"]
        out.append(
            {
                **doc,
                "after": after,
                "waiting_for": waiting,
                "workable": doc["status"] in WORKABLE and not waiting,
            }
        )
    return out


def _order(doc: dict[str, Any]) -> tuple[int, str, str]:
    return (-int(doc["priority"]), doc["created_at"], doc["id"])


def resolve(store: Store, key: str, field: str = "action") -> dict[str, Any]:
    """An action by id or a unique start or end of it (call inside a read)."""
    from ..base import lookup

    docs = readable.docs(store, TABLE) if store.has_table(TABLE) else {}
    return lookup.resolve(docs, key, "action", field=field)


def list_actions(
    store: Store, *, status: str | None = None, project: str | None = None
) -> list[dict[str, Any]]:
    """Every action (of ``status``, of ``project`` when given): open ones first, each group
    by priority then age; each with ``after``, ``waiting_for`` and ``workable``."""
    if status is not None and status not in STATUSES:
        raise InvalidInput("status", f"must be one of {', '.join(STATUSES)} (got {status!r})")
    with store.reading():
        docs = list(readable.docs(store, TABLE).values()) if store.has_table(TABLE) else []
        if status is not None:
            docs = [d for d in docs if d["status"] == status]
        if project is not None:
            docs = [d for d in docs if d.get("project", "") == project]
        views = _views(store, docs)
    return sorted(views, key=lambda v: (v["status"] in CLOSED, *_order(v)))


def frontier(
    store: Store, *, project: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """What can be worked on now: pending or active, every dependency done; highest
    priority first, then oldest first (at most ``limit``)."""
    with store.reading():
        if not store.has_table(TABLE):
            return []
        docs = [d for d in readable.docs(store, TABLE).values() if d["status"] in WORKABLE]
        if project is not None:
            docs = [d for d in docs if d.get("project", "") in ("", project)]
        views = [v for v in _views(store, docs) if v["workable"]]
    views.sort(key=_order)
    return views[:limit] if limit is not None else views


def frontier_op(
    store: Store, *, project: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """The ``frontier`` operation."""
    if limit is not None and limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {limit})")
    return frontier(store, project=project, limit=limit)


# -- dependencies -------------------------------------------------------------------------------
def _cycle(deps: dict[str, list[str]], waiting: str, waited_for: str) -> list[str] | None:
    """The cycle that ``waiting`` after ``waited_for`` would close, as a path of ids from
    ``waiting`` back to itself; None when there is none."""
    if waiting == waited_for:
        return [waiting, waiting]
    # Depth first with an explicit stack (a chain of thousands of dependencies is a
    # plain work plan, deeper than Python's recursion limit): ``trail`` is the path from
    # ``waited_for`` to the node on top, each with the dependencies it has left to try.
    seen = {waited_for}
    trail: list[tuple[str, Iterator[str]]] = [(waited_for, iter(deps.get(waited_for, [])))]
    while trail:
        nxt = next(trail[-1][1], None)
        if nxt is None:
            trail.pop()
        elif nxt == waiting:
            return [waiting, *(node for node, _ in trail), waiting]
        elif nxt not in seen:
            seen.add(nxt)
            trail.append((nxt, iter(deps.get(nxt, []))))
    return None


def _named(cycle: list[str]) -> str:
    """A cycle as ``a -> b -> … -> a``; a long one by its ends and its length (a chain of
    a thousand actions would make an error line of tens of thousands of characters)."""
    if len(cycle) <= CYCLE_SHOWN:
        return " -> ".join(cycle)
    half = CYCLE_SHOWN // 2
    ends = [*cycle[:half], "…", *cycle[-half:]]
    return " -> ".join(ends) + f" ({len(cycle) - 1} actions)"


def cycle_named(deps: dict[str, list[str]], waiting: str, waited_for: str) -> str | None:
    """The cycle ``waiting`` after ``waited_for`` would close, named for an error line
    (``deps``: action id → the actions it waits for); None when there is none."""
    cycle = _cycle(deps, waiting, waited_for)
    return None if cycle is None else _named(cycle)


def _check_after(store: Store, action_id: str, waited_for: list[str], field: str) -> list[str]:
    """The ids of the actions ``action_id`` will wait for, checked: each exists, is not
    itself, and closes no cycle (``InvalidInput`` naming the cycle)."""
    deps = _dependencies(store)
    resolved: list[str] = []
    for key in waited_for:
        try:
            other = resolve(store, key, field)
        except NotFound:
            raise NotFound("action", f"{key} (in {field})") from None
        if other["id"] == action_id:
            raise InvalidInput(field, f"an action cannot wait for itself ({action_id})")
        cycle = _cycle(deps, action_id, other["id"])
        if cycle is not None:
            raise InvalidInput(field, "would make a cycle: " + _named(cycle))
        deps.setdefault(action_id, []).append(other["id"])
        if other["id"] not in resolved:
            resolved.append(other["id"])
    return resolved


def check_dependency(store: Store, origin: tuple[str, str], target: tuple[str, str] | None) -> None:
    """An ``after`` link made with ``memwork link`` joins two actions and closes no cycle.

    ``origin`` and ``target`` are ``(kind, id)`` of the records it joins (None: a target
    memwork does not keep)."""
    if origin[0] != "action" or target is None or target[0] != "action":
        raise InvalidInput("kind", "after links an action to an action it waits for")
    _check_after(store, origin[1], [target[1]], "target")


def _add_after(store: Store, action_id: str, waited_for: list[str], now: datetime) -> None:
    mine = links.outgoing(store, TABLE, action_id)
    known = {link["to"] for link in mine if link["kind"] == links.AFTER}
    for other in waited_for:
        if other not in known:
            made = links.make(links.AFTER, action_id, other, TABLE, now, seq=links.next_seq(mine))
            mine.append(links.put(store, made))


# -- writes -----------------------------------------------------------------------------------
def _check_status(status: str) -> str:
    if status not in STATUSES:
        raise InvalidInput("status", f"must be one of {', '.join(STATUSES)} (got {status!r})")
    return status


def _title(title: str) -> str:
    text = one_line(scrub(title)).strip() if isinstance(title, str) else ""
    if not text:
        raise InvalidInput("title", "must not be empty")
    return text


def _save(store: Store, doc: dict[str, Any]) -> dict[str, Any]:
    from ..models.action import Action
    from ..models.base import validate

    saved = validate(Action, doc).to_doc()
    store.put(TABLE, saved["id"], saved)
    return saved


def _audit(
    store: Store, actor: str, action: str, doc: dict[str, Any], note: str, now: datetime
) -> None:
    audit.record(
        store,
        actor=actor,
        action=action,
        table=TABLE,
        record_id=doc["id"],
        summary=f"{action} action: {one_line(doc['title'])[:100]}{note}",
        now=now,
    )


def create(
    store: Store,
    title: str,
    *,
    session: str | None = None,
    project: str | None = None,
    priority: int = 0,
    after: list[str] | None = None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Add an action (pending) that waits for the actions in ``after``; returns it."""
    text = _title(title)
    session_id = (session or "").strip()
    if session_id:
        problem = identifier_problem(session_id)
        if problem:
            raise InvalidInput("session", problem)
    stamp = iso(now)
    doc: dict[str, Any] = {
        "id": ids.new_id("act"),
        "title": text,
        "status": "pending",
        "priority": priority,
        "session_id": session_id,
        "project": scrub(project or "").strip(),
        "agent_id": actor.partition(":")[2],
        "notes": [],
        "closed_at": None,
        "created_at": stamp,
        "updated_at": stamp,
    }
    with store.transaction():
        if session_id:
            from ..ledger.isolation import check_session_named

            check_session_named(store, session_id)
        waited_for = _check_after(store, doc["id"], list(after or []), "after")
        saved = _save(store, doc)
        _add_after(store, saved["id"], waited_for, now)
        note = f" (after {', '.join(waited_for)})" if waited_for else ""
        _audit(store, actor, "add", saved, note, now)
        return _views(store, [saved])[0]


def update(
    store: Store,
    action: str,
    *,
    status: str | None = None,
    title: str | None = None,
    note: str | None = None,
    priority: int | None = None,
    after: list[str] | None = None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Change an action's status, title or priority, add a note, or make it wait for more
    actions; only what is given changes. Returns it."""
    if status is not None:
        _check_status(status)
    text = _title(title) if title is not None else None
    note_text = scrub(note).strip() if isinstance(note, str) else None
    if note is not None and not note_text:
        raise InvalidInput("note", "must not be empty")
    if all(v is None for v in (status, title, note, priority)) and not after:
        raise InvalidInput("action", "give at least one of status, title, note, priority, after")
    with store.transaction():
        doc = resolve(store, action)
        changes = []
        if status is not None and status != doc["status"]:
            changes.append(f"{doc['status']} -> {status}")
            doc["status"] = status
            doc["closed_at"] = iso(now) if status in CLOSED else None
        if text is not None and text != doc["title"]:
            changes.append("title")
            doc["title"] = text
        if priority is not None and priority != doc["priority"]:
            changes.append(f"priority {priority}")
            doc["priority"] = priority
        if note_text:
            doc["notes"] = [
                *doc.get("notes", []),
                {"ts": iso(now), "text": note_text, "by": actor},
            ]
            changes.append("note")
        waited_for = _check_after(store, doc["id"], list(after or []), "after") if after else []
        doc["updated_at"] = iso(now)
        saved = _save(store, doc)
        if waited_for:
            _add_after(store, saved["id"], waited_for, now)
            changes.append(f"after {', '.join(waited_for)}")
        _audit(store, actor, "update", saved, f" ({'; '.join(changes) or 'unchanged'})", now)
        return _views(store, [saved])[0]


def get_op(store: Store, action: str) -> dict[str, Any]:
    """One action with its dependencies."""
    with store.reading():
        return _views(store, [resolve(store, action)])[0]


def context_lines(store: Store, project: str | None) -> list[dict[str, Any]]:
    """The frontier's top :data:`CONTEXT_FRONTIER`, for the context (call inside a read)."""
    if not store.has_table(TABLE):
        return []
    return frontier(store, project=project, limit=CONTEXT_FRONTIER)
