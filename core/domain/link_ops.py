"""The link verbs (``memwork link``, ``unlink``, ``links``) and finding where a record lives.

:mod:`core.ledger.links` holds links and the relations memwork keeps itself; this module
is what an agent or a person does with them: link two records (or a record and a
task, project, file or URL), remove such a link, list a record's links both ways
(with each end's title, and whether it still exists), report dangling links for
``lint``, and place the links an import brings beside their records.

A record is named by its id (a unique start or end of it is enough for ids
memwork made), an observation also as ``<session>/<observation>``, a slot also
by its label, a session also by an agent's own id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from ..base import lookup, names
from ..base.errors import Conflict, InvalidInput, NotFound
from ..base.text import clip, one_line
from ..ledger import audit, links
from ..models.kinds import KINDS
from ..privacy import identifier_problem, scrub
from ..storage.store import Store
from ..storage.tables import physical_tables

#: Tables with a fixed name, by record kind (the rest are found by looking).
FIXED_HOMES = {
    "lesson": "lessons",
    "card": "mistake_cards",
    "slot": "slots",
    "session": "sessions",
    "proposal": "proposals",
    "action": "actions",
    "profile": "profiles",
}
#: How a link shows its end when the record is gone.
GONE = "(no longer in the store)"


class Located(NamedTuple):
    """A record found by the id an agent gave."""

    kind: str
    id: str
    home: str
    doc: dict[str, Any]


def _in_table(store: Store, name: str, key: str, what: str, field: str) -> dict[str, Any] | None:
    if not store.has_table(name):
        return None
    return lookup.find(store.docs(name), key, what, field)


def locate(store: Store, ref: str, field: str = "id") -> Located | None:
    """The record ``ref`` names, or None (call inside a read)."""
    key = ref.strip()
    if not key:
        return None
    session, slash, rest = key.partition("/")
    if slash and rest.startswith("obs_"):
        table = f"observations.{session}"
        ok = names.is_safe_file_name(table) and store.has_table(table)
        doc = store.docs(table).get(rest) if ok else None
        return Located("observation", rest, table, dict(doc)) if doc else None
    if slash:
        return _slot_labelled(store, key)
    kind = links.kind_of(key)
    if kind in FIXED_HOMES and kind != "session":
        table = FIXED_HOMES[kind]
        doc = _in_table(store, table, key, kind, field)
        return Located(kind, doc["id"], table, doc) if doc else None
    if kind == "rule":
        for name in store.table_names("rules"):
            doc = store.docs(name).get(key)
            if doc is not None:
                return Located("rule", key, name, dict(doc))
        return None
    if kind == "episode":
        for name in reversed(store.table_names("episodes")):
            doc = store.docs(name).get(key)
            if doc is not None:
                return Located("episode", key, name, dict(doc))
        return None
    if kind == "observation":
        for name in physical_tables(store.table_names("observations"), "observations"):
            doc = store.docs(name).get(key)
            if doc is not None:
                return Located("observation", key, name, dict(doc))
        return None
    if links.is_reference(key):
        return None
    doc = _in_table(store, "sessions", key, "session", field)
    if doc is not None:
        return Located("session", doc["id"], "sessions", doc)
    return _slot_labelled(store, key)


def _slot_labelled(store: Store, label: str) -> Located | None:
    for slot in store.docs("slots").values() if store.has_table("slots") else ():
        if slot["label"] == label:
            return Located("slot", slot["id"], "slots", dict(slot))
    return None


def require(store: Store, ref: str, field: str) -> Located:
    """:func:`locate`, or ``NotFound`` naming what was asked for."""
    found = locate(store, ref, field)
    if found is None:
        raise NotFound("record", ref.strip())
    return found


def home_for(store: Store, record_id: str) -> str | None:
    """The physical table that holds ``record_id`` now, or None (call inside a read)."""
    found = locate(store, record_id)
    if found is not None:
        return found.home
    kind = links.kind_of(record_id)
    return FIXED_HOMES.get(kind) if kind != "session" else None


def title_of(found: Located, width: int = 80) -> str:
    """A record's one-line title."""
    kind = KINDS.get(found.kind)
    if kind is None:
        return clip(one_line(str(found.doc.get("title") or found.id)), width)
    return kind.title(found.doc, width) or found.id


# -- the verbs ---------------------------------------------------------------------------------
def _check_kind(kind: str) -> str:
    kind = kind.strip() if isinstance(kind, str) else ""
    if not links.is_kind(kind):
        raise InvalidInput("kind", f"{links.KIND_RULE} (got {kind!r})")
    if kind in links.MANAGED:
        raise InvalidInput(
            "kind",
            f"{kind} links are kept by memwork ({links.MANAGED[kind]}); choose another kind",
        )
    return kind


def _target(store: Store, target: str) -> tuple[str, Located | None]:
    """The ``to`` end: a record (its id) or a reference (``task:X``, ``file:PATH``, …)."""
    text = target.strip() if isinstance(target, str) else ""
    if not text:
        raise InvalidInput("target", "must name a record or a task:, project:, file: or url:")
    if links.is_reference(text):
        prefix, _, rest = text.partition(":")
        rest = scrub(rest).strip()
        if not rest:
            raise InvalidInput("target", f"{prefix}: must be followed by what it names")
        problem = identifier_problem(rest)
        if problem:
            raise InvalidInput("target", problem)
        return f"{prefix}:{rest}", None
    found = _require_seen(store, text, "target")
    return found.id, found


def _require_seen(store: Store, ref: str, field: str) -> Located:
    """:func:`require`, and a record this call may not see is missing too: the very
    words of an unknown id, so the answer never tells another agent's ids apart."""
    found = locate(store, ref, field)
    if found is None or Walls(store).hides(found):
        raise NotFound("record", ref.strip())
    return found


def _view(link: links.Link) -> dict[str, Any]:
    return {k: v for k, v in link.items() if k != "home"}


def add_link(
    store: Store,
    source: str,
    target: str,
    *,
    kind: str = "about",
    note: str = "",
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Link record ``source`` to ``target`` (a record, or ``task:X`` / ``project:P`` /
    ``file:PATH`` / ``url:U``) with relation ``kind``; returns the link.

    The same link twice is one link (the second answers with the first). ``after``
    links two actions and refuses a cycle. Kinds memwork keeps itself are refused.
    """
    kind = _check_kind(kind)
    text = scrub(note).strip() if isinstance(note, str) else ""
    with store.transaction():
        origin = _require_seen(store, source, "source")
        to, found = _target(store, target)
        if to == origin.id:
            raise InvalidInput("target", "a record cannot link to itself")
        if kind == links.AFTER:
            from .actions import check_dependency

            check_dependency(
                store, (origin.kind, origin.id), (found.kind, found.id) if found else None
            )
        mine = links.outgoing(store, origin.home, origin.id)
        for link in mine:
            if link["to"] == to and link["kind"] == kind:
                return {**_view(link), "created": False}
        link = links.put(
            store,
            links.make(kind, origin.id, to, origin.home, now, note=text, seq=links.next_seq(mine)),
        )
        audit.record(
            store,
            actor=actor,
            action="link",
            table=links.LOGICAL,
            record_id=link["id"],
            summary=f"link {origin.id} {kind} {to}",
            now=now,
        )
    return {**_view(link), "created": True}


def remove_links(
    store: Store,
    source: str,
    target: str,
    *,
    kind: str | None = None,
    now: datetime,
    actor: str,
) -> list[dict[str, Any]]:
    """Remove the links from ``source`` to ``target`` (of ``kind``, else every kind a
    person may remove); returns them. ``NotFound`` when there is none."""
    if kind is not None:
        kind = _check_kind(kind)
    with store.transaction():
        seen = Walls(store)
        origin = locate(store, source, "source")
        if origin is not None and seen.hides(origin):
            from_id, home = source.strip(), None  # as an id that does not exist
        else:
            from_id = origin.id if origin is not None else source.strip()
            home = origin.home if origin is not None else home_for(store, from_id)
        wanted = target.strip()
        if not links.is_reference(wanted):
            found = locate(store, wanted, "target")
            wanted = found.id if found is not None and not seen.hides(found) else wanted
        candidates = links.outgoing(store, home, from_id) if home else []
        gone = [
            x
            for x in candidates
            if x["to"] == wanted
            and (x["kind"] == kind if kind else x["kind"] not in links.MANAGED)
            and seen.both_ends(x)
        ]
        if not gone:
            what = f"{kind} link" if kind else "link"
            raise NotFound(what, f"{from_id} -> {wanted}")
        links.delete(store, gone)
        for link in gone:
            audit.record(
                store,
                actor=actor,
                action="unlink",
                table=links.LOGICAL,
                record_id=link["id"],
                summary=f"unlink {link['from']} {link['kind']} {link['to']}",
                now=now,
            )
    return [_view(x) for x in gone]


class Walls:
    """What this call may see of the records links join, while agents are isolated
    (:mod:`core.ledger.isolation`): a session, its observations and an episode are
    their agent's; every other record, a reference (``task:X``…) and an end that is
    gone are seen by all. A link is seen, made and removed only by a caller that sees
    both its ends. Answers are kept for the call (call inside a read)."""

    def __init__(self, store: Store) -> None:
        from ..ledger import isolation

        self.store = store
        self.view = isolation.viewer(store)
        self._seen: dict[str, bool] = {}

    def hides(self, found: Located) -> bool:
        """Whether ``found`` is another agent's, to this call."""
        from ..ledger import isolation

        if self.view is None:
            return False
        if found.kind == "observation":
            owner = isolation.owner_of_session(self.store, found.doc.get("session_id"))
        elif found.kind in ("session", "episode"):
            owner = str(found.doc.get("agent_id") or "")
        else:
            return False
        return not isolation.sees(self.view, owner)

    def sees(self, ref: str) -> bool:
        """Whether this call sees the record (or reference) ``ref`` names."""
        if self.view is None or links.is_reference(ref):
            return True
        known = self._seen.get(ref)
        if known is None:
            found = locate(self.store, ref)
            known = self._seen[ref] = found is None or not self.hides(found)
        return known

    def both_ends(self, link: links.Link) -> bool:
        """Whether this call sees both ends of ``link``."""
        return self.view is None or (self.sees(link["from"]) and self.sees(link["to"]))

    def sources(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Rules, cards, lessons or slots with only the ``episode_ids`` and ``link_refs``
        this call sees (what the context names as a line's sources; copies)."""
        if self.view is None:
            return docs
        out = []
        for doc in docs:
            ids = doc.get("episode_ids")
            refs = doc.get("link_refs")
            if ids:
                doc = {**doc, "episode_ids": [e for e in ids if self.sees(e)]}
            if refs:
                doc = {**doc, "link_refs": [r for r in refs if self._sees_target(r)]}
            out.append(doc)
        return out

    def _sees_target(self, ref: dict[str, Any]) -> bool:
        return ref["kind"] in ("task", "project", "file", "url") or self.sees(str(ref["id"]))


def _end(store: Store, ref: str) -> dict[str, Any]:
    """One end of a link as a listing shows it: kind, id, title, whether it exists."""
    if links.is_reference(ref):
        return {"kind": links.kind_of(ref), "id": ref, "title": ref, "exists": True}
    found = locate(store, ref)
    if found is None:
        return {"kind": links.kind_of(ref), "id": ref, "title": GONE, "exists": False}
    return {"kind": found.kind, "id": found.id, "title": title_of(found), "exists": True}


def links_of(store: Store, id: str) -> dict[str, Any]:  # noqa: A002 - the parameter's name
    """A record's links: ``outgoing`` (what it links to) and ``incoming`` (what links to
    it), oldest first, each with the other end's kind, title and whether it exists.

    A card merged away is found through its ``merged_into`` link. Reads every link table
    (``incoming``): a curation question, not an agent's per-step one.
    """
    key = id.strip() if isinstance(id, str) else ""
    if not key:
        raise InvalidInput("id", "must name a record")
    with store.reading():
        seen = Walls(store)
        found = locate(store, key)
        if found is not None and seen.hides(found):
            raise NotFound("record", key)
        if found is None:
            # What is gone may still be linked (a merged card, a deleted record).
            record_id = key
            ends = [
                x
                for x in links.every_link(store)
                if key in (x["from"], x["to"]) and seen.both_ends(x)
            ]
            if not ends:
                raise NotFound("record", key)
            head = {"kind": links.kind_of(key), "id": key, "title": GONE, "exists": False}
            home = None
        else:
            record_id, home = found.id, found.home
            head = {"kind": found.kind, "id": found.id, "title": title_of(found), "exists": True}
        outgoing = (
            links.outgoing(store, home, record_id)
            if home
            else sorted(
                (x for x in links.every_link(store) if x["from"] == record_id), key=links.order
            )
        )
        incoming = links.incoming(store, record_id)
        # Only links whose other end this call sees: another agent's record, its link's
        # id and its note stay behind the wall.
        return {
            **head,
            "outgoing": [
                {**_view(x), "target": _end(store, x["to"])} for x in outgoing if seen.sees(x["to"])
            ],
            "incoming": [
                {**_view(x), "source": _end(store, x["from"])}
                for x in incoming
                if seen.sees(x["from"])
            ],
        }


# -- lint and imports --------------------------------------------------------------------------
def dangling(store: Store) -> list[dict[str, Any]]:
    """Links one of whose records is gone (call inside a read).

    The ``from`` end of a ``merged_into`` link is gone by design (a merged card lives on
    in the card that absorbed it), so that end is never reported; references (``task:X``,
    ``file:P``…) name no record and are never dangling either. Links memwork keeps
    between rules or cards and their episodes (``derived_from``, ``sighted_in``) move
    with their records and are not checked (they are most of the links of a long
    history).
    """
    out = []
    seen = Walls(store)
    for link in sorted(links.every_link(store), key=links.order):
        if link["kind"] in links.EPISODE_KINDS or not seen.both_ends(link):
            continue
        missing = []
        if link["kind"] != links.MERGED_INTO and locate(store, link["from"]) is None:
            missing.append("from")
        if not links.is_reference(link["to"]) and locate(store, link["to"]) is None:
            missing.append("to")
        if missing:
            out.append({**_view(link), "missing": missing})
    return out


def place_imported(store: Store, arriving: list[dict[str, Any]], renamed: dict[str, str]) -> None:
    """Store links an import brought, beside their records as this store placed them
    (call inside the import's transaction, after its records are written).

    An end whose record was stored under another id (kept twice, or matched to a
    record already here) follows it. A link whose ``from`` record is nowhere keeps
    the place its kind of record has (a merged card's link stays with the cards).
    """
    for doc in arriving:
        link = {
            **doc,
            "from": renamed.get(doc["from"], doc["from"]),
            "to": renamed.get(doc["to"], doc["to"]),
        }
        home = home_for(store, link["from"])
        if home is None and link["home"].split(".", 1)[0] in ("rules", "episodes", "observations"):
            raise Conflict(
                f"link {doc['id']} starts from {link['from']}, which the import does not hold"
            )
        links.put(store, {**link, "home": home or link["home"]})
