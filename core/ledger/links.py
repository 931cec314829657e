"""Links: every relation between two records, as records of one kind.

A link says that one record stands in a relation to another:
``{"id": "lnk_…", "kind", "from", "to", "home", "note", "created_at", "updated_at"}``.
Before links, each relation lived in a field of its own (a lesson's
``superseded_by``, a card's ``merged_from`` and ``episode_ids``, a rule's
``episode_ids``) and each was read, copied and forgotten its own way; a
migration (schema 3, :func:`convert_legacy`) turned those fields into links.

Kinds memwork keeps itself (:data:`MANAGED`; ``memwork link`` refuses them):

- ``derived_from``: a rule → an episode it was derived from (recording,
  consolidation), the newest :data:`EPISODE_REFS` per rule;
- ``sighted_in``: a mistake card → an episode that reported it, the newest
  :data:`EPISODE_REFS` per card;
- ``supersedes``: a lesson → the lesson it replaced (``--on-duplicate supersede``);
- ``merged_into``: a card or a lesson → the one that absorbed it (card and lesson
  merges; the absorbed card is gone, its link is what keeps its id findable).

Kinds agents and people add (``memwork link A B --kind K``): ``about`` (a record
about a slot, a task ``task:X``, a project ``project:P`` or a file ``file:PATH``),
``after`` (an action that waits for another, :mod:`core.domain.actions`; a cycle is
refused) and any other word (``[a-z][a-z0-9_-]*``): a free relation.

**Placement.** A link lives beside the record it starts from: in the table
``links.<home>``, where ``home`` is the physical table of its ``from`` record
(``links.lessons``, ``links.mistake_cards``, ``links.rules.task.deploy``,
``links.episodes.000003``, ``links.observations.<session>``). What a record
links to is then one small table away, read with the record's own table (the
context reads its cards' and rules' sources that way, never a table that grows
with history), and a rule that leaves the active window takes its links along
to its archive chunk (:func:`rehome`). What links *to* a record is found by
reading every link table (:func:`incoming`): curation's question, not an agent's
per-step one. While episodes are recorded, :func:`note_episode` and :func:`rehome`
work on a model of the touched records' links that is written once at the end of
the recording (:mod:`core.ledger.link_batch`); every other function here writes that
model out first.

Plain functions over documents, no pydantic: the context path imports this
module (:func:`superseded` decides which lessons are live).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from ..base import ids
from ..base.clock import iso
from ..base.errors import InvalidInput
from ..storage.store import Store

LOGICAL = "links"
#: Episode references a rule or a card keeps (the newest).
EPISODE_REFS = 20

DERIVED_FROM = "derived_from"
SIGHTED_IN = "sighted_in"
SUPERSEDES = "supersedes"
MERGED_INTO = "merged_into"
ABOUT = "about"
AFTER = "after"

#: Kinds memwork keeps itself, with what makes them (a person cannot add or remove one).
MANAGED: dict[str, str] = {
    DERIVED_FROM: "recording an episode derives rules (consolidation too)",
    SIGHTED_IN: "recording an episode merges its mistake cards",
    SUPERSEDES: "lesson add --on-duplicate supersede",
    MERGED_INTO: "card merge and lesson merge",
}
#: Kinds whose ``to`` is an episode, capped at :data:`EPISODE_REFS` per record.
EPISODE_KINDS = (DERIVED_FROM, SIGHTED_IN)
#: What each kind means, for help texts and the workbench.
MEANING: dict[str, str] = {
    DERIVED_FROM: "derived from",
    SIGHTED_IN: "sighted in",
    SUPERSEDES: "supersedes",
    MERGED_INTO: "merged into",
    ABOUT: "about",
    AFTER: "after",
}
#: A free kind: a short lower-case word.
KIND_RULE = "must be a lower-case word: a letter, then letters, digits, _ or - (at most 40)"
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,39}")
#: References a link may point to that are not records.
REFERENCE_PREFIXES = ("task:", "project:", "file:", "url:")

Link = dict[str, Any]

#: Where a recording's model of episode references lives (``store.derived``), while
#: :func:`core.ledger.link_batch.deferred` runs.
BATCH = "links.batch"


def _settle(store: Store) -> None:
    """Write a recording's modelled episode references first (see :mod:`core.ledger.link_batch`):
    whatever reads or writes links another way must not find a table behind."""
    batch = store.derived.get(BATCH)
    if batch is not None and batch.records:
        batch.flush()


def table_of(home: str) -> str:
    """The physical table that holds links starting from records of table ``home``."""
    return f"{LOGICAL}.{home}"


def home_of_table(name: str) -> str:
    """``links.rules.task.x`` → ``rules.task.x``."""
    return name.split(".", 1)[1]


def is_kind(kind: str) -> bool:
    """Whether ``kind`` is a well-formed kind word."""
    return isinstance(kind, str) and _KIND.fullmatch(kind) is not None


def is_reference(ref: str) -> bool:
    """Whether ``ref`` names something that is not a record (``task:X``, ``file:P``, …)."""
    return ref.startswith(REFERENCE_PREFIXES)


#: hashlib's sha1, loaded on the first link made (an import statement per link was
#: a fifth of making one, and a bulk recording makes hundreds of thousands).
_sha1: Any = None


def link_id(kind: str, frm: str, to: str, now: datetime) -> str:
    """A link's id: the instant it was made (as record ids start) and a digest of what
    it joins. Taking nothing from the id generator, links leave every other record's
    id as it would be (the seeded demo store keeps its ids)."""
    global _sha1, _stamped
    if _sha1 is None:  # CPython's own: hashlib would load OpenSSL (~2 ms)
        from ..base.hashing import sha1 as _sha1
    digest = int.from_bytes(_sha1(f"{kind}\0{frm}\0{to}".encode()).digest()[:10], "big")
    if _stamped[0] != now:  # a recording makes its links at one instant: encoded once
        _stamped = (now, "lnk_" + ids.encode(int(now.timestamp() * 1000), 10))
    return _stamped[1] + ids.encode(digest, 16)


#: The last instant a link was made at, and its encoded prefix.
_stamped: tuple[datetime | None, str] = (None, "")


def make(
    kind: str,
    frm: str,
    to: str,
    home: str,
    now: datetime,
    *,
    note: str = "",
    seq: int = 0,
) -> Link:
    """A new link document (not stored). ``seq`` orders a record's links of one kind
    (an episode reference's place among the record's others)."""
    stamp = iso(now)
    doc: Link = {
        "created_at": stamp,
        "from": frm,
        "home": home,
        "id": link_id(kind, frm, to, now),
        "kind": kind,
        "note": note,
        "to": to,
        "seq": seq,
        "updated_at": stamp,
    }
    return doc


def order(link: Link) -> tuple[str, str, int, str]:
    """Links sort by creation, oldest first: by time, then by the record they start from,
    then by ``seq`` (a record's links in the order they were made, whatever the clock
    says; its ids are time-ordered like every record's)."""
    return (link["created_at"], link["from"], int(link.get("seq", 0)), link["id"])


# -- reading -------------------------------------------------------------------------------
def in_home(store: Store, home: str) -> list[Link]:
    """Every link that starts from a record of table ``home`` (call inside a read)."""
    _settle(store)
    name = table_of(home)
    if not store.has_table(name):
        return []
    return list(store.docs(name).values())


class _Grouped:
    """A links table's links grouped by ``from``, and the table they were grouped from."""

    __slots__ = ("docs", "stamp", "groups")

    def __init__(self, docs: dict[str, Link], stamp: tuple[int, int]) -> None:
        self.docs = docs
        self.stamp = stamp
        self.groups: dict[str, list[Link]] = {}
        for link in docs.values():
            self.groups.setdefault(link["from"], []).append(link)


_GROUPED = "links.from"


def _current(store: Store, name: str) -> _Grouped | None:
    """The grouping of table ``name`` if it still matches the table."""
    grouped: _Grouped | None = store.derived.get(_GROUPED, {}).get(name)
    if grouped is None or grouped.docs is not store.docs(name):
        return None
    return grouped if grouped.stamp == store.table_stamp(name) else None


def from_record(store: Store, home: str, frm: str) -> list[Link]:
    """The links from record ``frm`` kept in ``home``, in table order (call inside a
    read; treat the list as read-only).

    Recording an episode asks this for each rule and card it touches; scanning the
    whole links table each time grew with history (a mistake card's table holds
    every card's sightings), so the table is grouped once and the grouping kept
    current by :func:`put` and :func:`delete` (and rebuilt after any other change).
    """
    _settle(store)
    return _grouping(store, table_of(home)).groups.get(frm, [])


def _grouping(store: Store, name: str) -> _Grouped:
    """Table ``name``'s grouping, made again if the table changed since."""
    grouped = _current(store, name)
    if grouped is None:
        held: dict[str, _Grouped] = store.derived.setdefault(_GROUPED, {})
        _forget_stale(store, held)
        grouped = held[name] = _Grouped(store.docs(name), store.table_stamp(name))
    return grouped


def _forget_stale(store: Store, held: dict[str, _Grouped]) -> None:
    """Drop the groupings of tables the store no longer holds as they were grouped: each
    keeps its table's documents alive, and a bulk recording hands tables it has written
    to the backend to bound its memory."""
    gone = [n for n, g in held.items() if not store.is_loaded(n) or g.docs is not store.docs(n)]
    for name in gone:
        del held[name]


def _regrouped(store: Store, name: str, grouped: _Grouped | None) -> None:
    """After a write :func:`put` or :func:`delete` applied to ``grouped`` as well."""
    if grouped is not None:
        grouped.docs, grouped.stamp = store.docs(name), store.table_stamp(name)


def _ungroup(grouped: _Grouped, links: Iterable[Link]) -> None:
    """Take ``links`` (the very documents the grouping holds) out of their groups."""
    gone: dict[str, set[int]] = {}
    for link in links:
        gone.setdefault(link["from"], set()).add(id(link))
    for frm, objects in gone.items():
        group = [x for x in grouped.groups.get(frm, ()) if id(x) not in objects]
        if group:
            grouped.groups[frm] = group
        else:
            grouped.groups.pop(frm, None)


def by_from(links: Iterable[Link]) -> dict[str, list[Link]]:
    """Links grouped by their ``from`` record, each group oldest first."""
    grouped: dict[str, list[Link]] = {}
    for link in links:
        grouped.setdefault(link["from"], []).append(link)
    for group in grouped.values():
        group.sort(key=order)
    return grouped


def outgoing(store: Store, home: str, frm: str, kind: str | None = None) -> list[Link]:
    """The links from record ``frm`` (kept in ``home``), oldest first."""
    found = [
        link
        for link in in_home(store, home)
        if link["from"] == frm and (kind is None or link["kind"] == kind)
    ]
    return sorted(found, key=order)


def link_tables(store: Store) -> list[str]:
    """Every link table (lists the store's tables: not for a hot path)."""
    return store.table_names(LOGICAL)


def every_link(store: Store) -> Iterator[Link]:
    """Every link of the store (call inside a read; reads every link table)."""
    _settle(store)
    for name in link_tables(store):
        yield from store.docs(name).values()


def incoming(store: Store, record_id: str) -> list[Link]:
    """The links that point to ``record_id``, oldest first (reads every link table)."""
    return sorted((x for x in every_link(store) if x["to"] == record_id), key=order)


def touching(store: Store, record_ids: set[str]) -> list[Link]:
    """The links from or to any of ``record_ids`` (reads every link table)."""
    return [x for x in every_link(store) if x["from"] in record_ids or x["to"] in record_ids]


def episode_ids(links: Iterable[Link], kind: str) -> list[str]:
    """The episode ids of a record's ``kind`` links, oldest first (what ``episode_ids``
    shows)."""
    return [x["to"] for x in sorted(links, key=order) if x["kind"] == kind]


# -- lessons: superseded and merged ---------------------------------------------------------
def lesson_relations(store: Store) -> tuple[dict[str, str], dict[str, str]]:
    """``(superseded_by, supersedes)`` of the lessons: which lesson replaced which.

    A lesson is superseded by the lesson that ``supersedes`` it, or by the one it was
    ``merged_into``. Call inside a read; one small table (``links.lessons``).
    """
    replaced_by: dict[str, str] = {}
    replaces: dict[str, str] = {}
    for link in sorted(in_home(store, "lessons"), key=order):
        if link["kind"] == SUPERSEDES:
            replaced_by[link["to"]] = link["from"]
            replaces[link["from"]] = link["to"]
        elif link["kind"] == MERGED_INTO:
            replaced_by[link["from"]] = link["to"]
    return replaced_by, replaces


def with_lesson_relations(store: Store, lessons: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each lesson with ``superseded_by`` and ``supersedes`` as its links say (copies)."""
    replaced_by, replaces = lesson_relations(store)
    return [
        {
            **lesson,
            "superseded_by": replaced_by.get(lesson["id"]),
            "supersedes": replaces.get(lesson["id"]),
        }
        for lesson in lessons
    ]


#: Fields computed from links that a record's view carries but its document never does.
COMPUTED = (
    "superseded_by",
    "supersedes",
    "merged_from",
    "episode_ids",
    "merged_from_id",
    "link_refs",
)


def stored(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without the fields computed from links (what the store keeps)."""
    if not any(k in doc for k in COMPUTED):
        return doc
    return {k: v for k, v in doc.items() if k not in COMPUTED}


# -- cards and rules: their episodes ----------------------------------------------------------
def with_episode_ids(
    store: Store, home: str, docs: Iterable[dict[str, Any]], kind: str
) -> list[dict[str, Any]]:
    """Each rule or card (all kept in ``home``) with the ``episode_ids`` its ``kind``
    links name, oldest first (copies)."""
    grouped = by_from(x for x in in_home(store, home) if x["kind"] == kind)
    return [{**doc, "episode_ids": [x["to"] for x in grouped.get(doc["id"], [])]} for doc in docs]


def with_targets(store: Store, home: str, docs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each record (all kept in ``home``) with ``link_refs``: what its links point to,
    oldest first, as context sources (``{"kind", "id", "via"}``). Copies; a record
    with no link is returned as it is."""
    grouped = by_from(in_home(store, home))
    out = []
    for doc in docs:
        mine = grouped.get(doc["id"])
        out.append({**doc, "link_refs": [target_ref(x) for x in mine]} if mine else doc)
    return out


#: Record kinds by the prefix of the ids memwork makes.
ID_PREFIXES = {
    "les_": "lesson",
    "ep_": "episode",
    "rule_": "rule",
    "card_": "card",
    "slot_": "slot",
    "ses_": "session",
    "prop_": "proposal",
    "obs_": "observation",
    "act_": "action",
    "prof_": "profile",
}


def kind_of(ref: str) -> str:
    """What a link end names: a record kind by its id's prefix, ``task``, ``project``,
    ``file`` or ``url`` for a reference, else ``session`` (an agent's own session id)."""
    for prefix, kind in ID_PREFIXES.items():
        if ref.startswith(prefix):
            return kind
    if "/obs_" in ref:
        return "observation"
    if is_reference(ref):
        return ref.split(":", 1)[0]
    return "session"


def target_ref(link: Link) -> dict[str, Any]:
    """A context source for what ``link`` points to: ``{"kind", "id", "via"}``."""
    to = link["to"]
    kind = kind_of(to)
    shown = to.split(":", 1)[1] if is_reference(to) else to
    return {"kind": kind, "id": shown, "via": link["kind"]}


def merged_from(store: Store, card_id: str) -> list[str]:
    """Every card merged (directly or through another) into ``card_id``, nearest first."""
    into: dict[str, list[str]] = {}
    for link in sorted(in_home(store, "mistake_cards"), key=order):
        if link["kind"] == MERGED_INTO:
            into.setdefault(link["to"], []).append(link["from"])
    out: list[str] = []
    pending = list(into.get(card_id, []))
    while pending:
        absorbed = pending.pop(0)
        if absorbed in out or absorbed == card_id:
            continue
        out.append(absorbed)
        pending.extend(into.get(absorbed, []))
    return out


def merged_target(store: Store, home: str, absorbed_id: str) -> str | None:
    """The record ``absorbed_id`` was merged into, followed to the end (None when it was
    never merged)."""
    targets = {x["from"]: x["to"] for x in in_home(store, home) if x["kind"] == MERGED_INTO}
    seen: set[str] = set()
    current = absorbed_id
    while current in targets and current not in seen:
        seen.add(current)
        current = targets[current]
    return None if current == absorbed_id else current


# -- writing -----------------------------------------------------------------------------------
def put(store: Store, link: Link) -> Link:
    """Store a link in its home's table (call inside a transaction)."""
    _settle(store)
    name = table_of(link["home"])
    grouped = _current(store, name)
    old = grouped.docs.get(link["id"]) if grouped is not None else None
    store.put(name, link["id"], link)
    if grouped is not None:
        if old is not None and old["from"] == link["from"]:
            # Where it was, as in the table (a dict keeps a replaced key's place).
            group = grouped.groups[link["from"]]
            group[next(i for i, held in enumerate(group) if held is old)] = link
        else:
            if old is not None:
                _ungroup(grouped, [old])
            grouped.groups.setdefault(link["from"], []).append(link)
        _regrouped(store, name, grouped)
    return link


def put_all(store: Store, home: str, links: list[Link]) -> None:
    """Store new links that all live in ``home`` (ids not in its table yet), in one write
    (call inside a transaction)."""
    _settle(store)
    name = table_of(home)
    grouped = _current(store, name)
    if grouped is not None and any(link["id"] in grouped.docs for link in links):
        for link in links:  # one replaces a link: keep its place, as put does
            put(store, link)
        return
    store.put_many(name, {link["id"]: link for link in links})
    if grouped is not None:
        for link in links:
            grouped.groups.setdefault(link["from"], []).append(link)
        _regrouped(store, name, grouped)


def delete(store: Store, links: Iterable[Link]) -> None:
    """Remove links (call inside a transaction)."""
    _settle(store)
    by_table: dict[str, list[str]] = {}
    for link in links:
        by_table.setdefault(table_of(link["home"]), []).append(link["id"])
    for name, link_ids in by_table.items():
        grouped = _current(store, name)
        if grouped is not None:
            held = grouped.docs
            _ungroup(grouped, [held[i] for i in link_ids if i in held])
        store.delete(name, link_ids)
        _regrouped(store, name, grouped)


def note_episode(
    store: Store,
    kind: str,
    frm: str,
    home: str,
    episode_id: str | None,
    now: datetime,
) -> None:
    """Link ``frm`` to ``episode_id`` with ``kind`` (``derived_from``/``sighted_in``) unless
    it already is, keeping its newest :data:`EPISODE_REFS` such links (call inside a
    transaction)."""
    if not episode_id:
        return
    batch = store.derived.get(BATCH)
    if batch is not None:
        batch.note(kind, frm, home, episode_id, now)
        return
    every = from_record(store, home, frm)
    if any(x["to"] == episode_id and x["kind"] == kind for x in every):
        return
    mine = [x for x in every if x["kind"] == kind]
    put(store, make(kind, frm, episode_id, home, now, seq=next_seq(every)))
    overflow = len(mine) + 1 - EPISODE_REFS
    if overflow == 1:  # the usual case once a record is well sighted: no sort
        delete(store, [min(mine, key=order)])
    elif overflow > 1:
        delete(store, sorted(mine, key=order)[:overflow])


def next_seq(outgoing: Iterable[Link]) -> int:
    """The ``seq`` of a record's next link: after every link it has (so a record's links
    keep the order they were made in, whatever the clock says)."""
    return 1 + max((int(x.get("seq", 0)) for x in outgoing), default=0)


def note_episodes(
    store: Store, kind: str, frm: str, home: str, episode_ids: Iterable[str], now: datetime
) -> None:
    """:func:`note_episode` for several episodes, oldest first."""
    for episode_id in episode_ids:
        note_episode(store, kind, frm, home, episode_id, now)


def rehome(store: Store, frm: str, old_home: str, new_home: str) -> int:
    """Move record ``frm``'s links from ``old_home`` to ``new_home`` (a rule that moved
    between its active table and an archive chunk); returns how many moved."""
    if old_home == new_home:
        return 0
    batch = store.derived.get(BATCH)
    if batch is not None:
        return int(batch.rehome(frm, old_home, new_home))
    # Every link of one record, out of one grouping and into another, as one delete and
    # one write: an archived rule moves its links on every step that archives it.
    name = table_of(old_home)
    source = _grouping(store, name)
    moving = source.groups.pop(frm, None)
    if not moving:
        return 0
    store.delete(name, [link["id"] for link in moving])
    _regrouped(store, name, source)
    put_all(store, new_home, [{**link, "home": new_home} for link in moving])
    return len(moving)


def repoint_from(store: Store, links: Iterable[Link], new_from: str) -> None:
    """Give ``links`` another ``from`` record in the same home (a merged card's sightings
    become the absorbing card's)."""
    for link in links:
        put(store, {**link, "from": new_from})


# -- what the ad hoc fields became (schema 2 → 3, old checkpoints, old exports) ---------------
def legacy_links(
    table: str, home: str, doc: dict[str, Any], now: datetime
) -> tuple[dict[str, Any], list[Link]]:
    """``doc`` without its relation fields, and the links they meant.

    A lesson's ``supersedes`` / ``superseded_by``, a card's ``merged_from`` and
    ``episode_ids``, a rule's ``episode_ids``. Links are made in the order the
    fields listed them, so ``episode_ids`` keeps its oldest-first order. The
    created time of a made link is the record's ``updated_at`` (else ``now``). A field
    of the wrong type is ``InvalidInput`` naming it.
    """
    kept = dict(doc)
    made: list[Link] = []
    when = _instant(doc.get("updated_at"), now)
    if table == "lessons":
        new_of_old = _relation(kept.pop("superseded_by", None), "superseded_by")
        old_of_new = _relation(kept.pop("supersedes", None), "supersedes")
        if old_of_new:
            made.append(make(SUPERSEDES, doc["id"], old_of_new, home, when))
        if new_of_old:
            # Written on the old lesson; the new one says it too when it supersedes it
            # (that link is made from the new lesson's own field). A merge set only this.
            made.append(make(MERGED_INTO, doc["id"], new_of_old, home, when))
    elif table == "mistake_cards":
        for absorbed in _relations(kept.pop("merged_from", None), "merged_from"):
            made.append(make(MERGED_INTO, absorbed, doc["id"], home, when))
        episodes = _relations(kept.pop("episode_ids", None), "episode_ids")[-EPISODE_REFS:]
        for seq, episode_id in enumerate(episodes, start=1):
            made.append(make(SIGHTED_IN, doc["id"], episode_id, home, when, seq=seq))
    elif table == "rules":
        episodes = _relations(kept.pop("episode_ids", None), "episode_ids")[-EPISODE_REFS:]
        for seq, episode_id in enumerate(episodes, start=1):
            made.append(make(DERIVED_FROM, doc["id"], episode_id, home, when, seq=seq))
    return kept, made


def _relation(value: Any, field: str) -> str | None:
    """A relation field naming one record: its id, or None when it names none;
    ``InvalidInput`` naming ``field`` when it is anything else (a file edited by hand)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    raise InvalidInput(field, "must be a record id (a string)")


def _relations(value: Any, field: str) -> list[str]:
    """A relation field listing records: their ids, as :func:`_relation` reads one."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(item, str) and item for item in value):
        return value
    raise InvalidInput(field, "must be a list of record ids (strings)")


def _instant(stamp: Any, now: datetime) -> datetime:
    from ..base.clock import parse_instant

    if isinstance(stamp, str):
        try:
            return parse_instant(stamp)
        except ValueError:
            pass
    return now


def dedupe(made: list[Link]) -> list[Link]:
    """One relation per pair: a superseded lesson's ``superseded_by`` and its successor's
    ``supersedes`` describe the same replacement, kept as the one ``supersedes`` link."""
    superseding = {(x["to"], x["from"]) for x in made if x["kind"] == SUPERSEDES}
    return [
        x for x in made if not (x["kind"] == MERGED_INTO and (x["from"], x["to"]) in superseding)
    ]


_LEGACY_TABLES = ("lessons", "mistake_cards", "rules")
_LEGACY_FIELDS = ("superseded_by", "supersedes", "merged_from", "episode_ids")


def convert_legacy(store: Store, now: datetime) -> int:
    """Turn every relation field still written in a record into links (call inside a
    transaction); returns how many links were made. Idempotent: a store with no such
    field is left as it is. Runs as the schema-3 migration and after a checkpoint
    taken before it is restored."""
    from ..storage.tables import logical_name

    made_total = 0
    for name in store.table_names():
        table = logical_name(name)
        if table not in _LEGACY_TABLES:
            continue
        docs = store.docs(name)
        changed: dict[str, dict[str, Any]] = {}
        made: list[Link] = []
        for doc in docs.values():
            if not any(field in doc for field in _LEGACY_FIELDS):
                continue
            try:
                kept, links = legacy_links(table, name, doc, now)
            except InvalidInput:
                continue  # kept as it is, nothing lost: doctor names the field
            changed[doc["id"]] = kept
            made.extend(links)
        if table == "lessons":
            made = dedupe(made)
        if changed:
            store.put_many(name, changed)
        existing = {(x["kind"], x["from"], x["to"]) for x in in_home(store, name)}
        for link in made:
            key = (link["kind"], link["from"], link["to"])
            if key not in existing:
                existing.add(key)
                put(store, link)
                made_total += 1
    return made_total
