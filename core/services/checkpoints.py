"""Store checkpoints: snapshot every table, diff, restore (undoably), delete.

A snapshot keeps independent copies of the committed table files under
``snapshots/<uuid4>/`` (reflinks where the filesystem offers them), so nothing
done to the live files can change a checkpoint. Restore first takes an
automatic checkpoint, so a restore can itself be undone. The audit log is not
part of a snapshot: it records what happened, restores included.

A checkpoint command killed half-way can leave a snapshot folder that no
checkpoint record names; every checkpoint command (create, restore, delete)
first removes such orphans, under the store's lock, and ``memwork doctor``
reports them meanwhile.

Restore is also the repair: it works on a store whose table files are damaged or
missing. Every table that cannot be read is left out of the automatic checkpoint,
its file is moved aside into the store's ``damaged/<time>/`` folder (never deleted)
and named in the result, and the restored tables take its place; ``memwork
doctor`` names the newest checkpoint holding a readable copy of each damaged table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection
from datetime import datetime
from typing import Any

from ..base import ids, lookup
from ..base.clock import iso
from ..base.errors import InvalidInput, StoreUnreadable
from ..domain import rule_archive
from ..ledger import audit, links
from ..models import kinds
from ..privacy import scrub
from ..storage import tables
from ..storage.backend import Docs
from ..storage.store import Store
from . import stats

TABLE = "checkpoints"
DIFF_TABLES = tuple(t for t in tables.USER_TABLES if t not in ("checkpoints", "audit"))


def _snapshot_names(store: Store) -> list[str]:
    return [n for n in store.table_names() if tables.logical_name(n) in tables.SNAPSHOT_TABLES]


def _sweep(store: Store) -> int:
    """Remove snapshot folders that no checkpoint record names (left by a checkpoint
    command killed before its commit); call inside a transaction. When the store's
    history was found damaged, a record may have been lost with it: a snapshot that
    describes itself is then given its record back instead."""
    recorded = set(store.docs(TABLE))
    if store.backend.damage_found():
        found = {
            key: about
            for key in store.backend.snapshot_keys()
            if key not in recorded and (about := store.backend.snapshot_about(key)) is not None
        }
        if found:
            store.put_many(TABLE, {key: _record_of(about) for key, about in found.items()})
            recorded |= set(found)
    return store.backend.snapshot_sweep(recorded)


def _take(
    store: Store,
    description: str,
    now: datetime,
    automatic: bool,
    damaged: Collection[str] = (),
) -> dict[str, Any]:
    key = ids.new_uuid()
    counts = _counts(store, damaged)
    doc = {
        "automatic": automatic,
        "counts": counts,
        "created_at": iso(now),
        "description": description,
        "id": key,
    }
    # The snapshot keeps the record too: it describes itself to a restore that cannot
    # read the checkpoints table (or store.json).
    names = [n for n in _snapshot_names(store) if n not in damaged]
    store.backend.snapshot_create(key, names, about=doc)
    store.put(TABLE, key, doc)
    return doc


def create(
    store: Store, description: str = "", *, now: datetime, actor: str, automatic: bool = False
) -> dict[str, Any]:
    """Snapshot the store now; returns the checkpoint record."""
    taken: list[str] = []
    try:
        with store.transaction():
            if store.cache.dirty():
                raise RuntimeError("a checkpoint must be taken before any write in its transaction")
            _sweep(store)
            doc = _take(store, scrub(description).strip(), now, automatic)
            taken.append(doc["id"])
            audit.record(
                store,
                actor=actor,
                action="checkpoint",
                table=TABLE,
                record_id=doc["id"],
                summary=f"checkpoint {doc['id'][:8]}: {doc['description'] or '(no description)'}",
                now=now,
            )
    except BaseException:
        _forget_uncommitted(store, taken)
        raise
    return doc


def restore_point(store: Store, description: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """An automatic checkpoint taken before a destructive change a person makes (the
    workbench's ``U`` restores it); swept with the other automatic ones."""
    return create(store, description, now=now, actor=actor, automatic=True)


def list_checkpoints(store: Store) -> list[dict[str, Any]]:
    """Checkpoints, oldest first."""
    with store.reading():
        return sorted(store.docs(TABLE).values(), key=lambda d: (d["created_at"], d["id"]))


def resolve(store: Store, key: str) -> dict[str, Any]:
    """A checkpoint by id or unique prefix (>= 4 characters)."""
    return lookup.resolve(store.docs(TABLE), key, "checkpoint")


def restore_op(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """The ``restore_checkpoint`` operation: the automatic checkpoint taken first (which
    undoes the restore). An isolated agent's restore is refused (it rewinds every agent's
    memory, and may bring isolation back off), as its export is. A restore is also the
    repair of damaged tables: the checkpoint may be found among the snapshots on disk."""
    from ..ledger.isolation import check_operator

    with store.transaction():
        check_operator(store, "checkpoint restore")
        target = restorable(store, key)
        return restore(store, target["id"], now=now, actor=actor)


def restore(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Replace every snapshotted table with the checkpoint's.

    Returns the automatic checkpoint taken first, which undoes the restore, with
    ``damaged``: each table found unreadable (``table``, ``reason``, ``moved_to``:
    where its file now is, or None when it was missing, and ``restored``: whether the
    checkpoint held a copy that replaced it). Those are left out of the automatic
    checkpoint and moved aside, never deleted. A restore refused half-way (a damaged
    snapshot, a failed write) leaves no snapshot files behind.
    """
    taken: list[str] = []
    try:
        with store.transaction():
            before, report = _restore_within(store, key, now=now, actor=actor, taken=taken)
    except BaseException:
        _forget_uncommitted(store, taken)
        raise
    # Folded at once: the log still holds what the restore put away (until its next
    # fold), and so would any damaged file still in place; after the fold the store's
    # files hold only the restored state and what reads.
    store.fold_log()
    return {**before, "damaged": report}


def _restore_within(
    store: Store, key: str, *, now: datetime, actor: str, taken: list[str]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    target = restorable(store, key)
    snapshot = store.backend.snapshot_read(target["id"])
    damaged = find_damaged(store)
    # Damaged files go aside first (the commit then replaces or drops them), so the
    # automatic checkpoint holds only what reads.
    stamp = now.strftime("%Y%m%dT%H%M%S") + "-" + ids.new_uuid()[:8]
    report = [
        {
            "moved_to": store.backend.set_aside(name, stamp),
            "reason": reason,
            "restored": name in snapshot,
            "table": name,
        }
        for name, reason in sorted(damaged.items())
    ]
    for name in damaged:
        store.drop(name)
    if TABLE in damaged:
        # Which snapshots are checkpoints is lost with the table: every one on disk is
        # kept as a recovered checkpoint (none is swept as an orphan).
        _recover_records(store, now)
    else:
        _sweep(store)
    before = _take(
        store, f"before restoring {target['id'][:8]}", now, automatic=True, damaged=damaged
    )
    taken.append(before["id"])
    # Who may decide is not part of what a checkpoint rewinds (core/ledger/curator.py); with
    # the meta table damaged it is not known, and the checkpoint's is kept.
    curator = None if "meta" in damaged else store.docs("meta").get("curator")
    kept = _unchanged_since(store, snapshot, damaged)
    for name in _snapshot_names(store):
        if name not in kept:
            store.drop(name)
    for name, (_, docs) in snapshot.items():
        if name not in kept:
            store.put_many(name, docs)
    if curator is not None:
        store.put("meta", "curator", curator)
    elif "meta" not in damaged and store.docs("meta").get("curator") is not None:
        store.delete("meta", ["curator"])
    # A checkpoint taken before the archive moved to chunks holds hash buckets; one
    # taken before links holds relations as fields of the records.
    rule_archive.convert_legacy(store)
    links.convert_legacy(store, now)
    repaired = f"; {len(report)} damaged tables moved aside" if report else ""
    audit.record(
        store,
        actor=actor,
        action="restore",
        table=TABLE,
        record_id=target["id"],
        summary=f"restored checkpoint {target['id'][:8]} (undo: restore {before['id'][:8]})"
        + repaired,
        now=now,
    )
    return before, report


def _unchanged_since(
    store: Store, snapshot: dict[str, tuple[int, Docs]], damaged: Collection[str]
) -> set[str]:
    """The tables a restore leaves as they are: still at the version the checkpoint
    recorded, and holding its very documents. Rewriting them would cost the restore
    their whole size and give each a new version, and every index kept from the store
    (recall's among them) would read them all again. The documents are compared too:
    a copy of a store (``memwork copy``, the demo's) numbers its tables afresh and its
    checkpoints keep the numbers they were taken with."""
    written = set(store.cache.dirty())
    return {
        name
        for name, (version, docs) in snapshot.items()
        if name not in damaged
        and name not in written
        and store.has_table(name)  # (not dropped earlier in this transaction)
        and store.table_version(name) == version
        and store.committed_docs(name) == docs
    }


def _record_of(about: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint record a snapshot keeps of itself (less what only the snapshot
    needs)."""
    return {k: v for k, v in about.items() if k != "schema_version"}


def _recover_records(store: Store, now: datetime) -> None:
    """A checkpoint record for every snapshot on disk, as far as its files tell."""
    recovered = {}
    for key in store.backend.snapshot_keys():
        try:
            held = store.backend.snapshot_read(key)
        except (StoreUnreadable, InvalidInput):
            continue  # not readable: not offered as a checkpoint (its folder stays)
        about = store.backend.snapshot_about(key)
        if about is not None:  # it describes itself: its own record comes back
            recovered[key] = _record_of(about)
            continue
        counts: dict[str, int] = {}
        for name, (_, docs) in held.items():
            logical = tables.logical_name(name)
            counts[logical] = counts.get(logical, 0) + len(docs)
        recovered[key] = {
            "automatic": False,
            "counts": counts,
            "created_at": iso(now),
            "description": "recovered from its files (the checkpoints table was damaged)",
            "id": key,
        }
    store.put_many(TABLE, recovered)


def find_damaged(store: Store) -> dict[str, str]:
    """Every table that cannot be read (table → why), each checked without keeping it;
    call inside ``store.reading()`` or a transaction."""
    damaged = {}
    for name in store.table_names():
        if store.is_loaded(name):
            continue  # it was read, so it reads
        reason = store.backend.check_table(name)
        if reason is not None:
            damaged[name] = reason
    return damaged


def restorable(store: Store, key: str) -> dict[str, Any]:
    """The checkpoint ``key`` names; when the checkpoints table itself cannot be read,
    the snapshot it names (a full id, or a unique start of one, of those on disk)."""
    try:
        return resolve(store, key)
    except StoreUnreadable:
        on_disk = {
            k: store.backend.snapshot_about(k) or {"id": k} for k in store.backend.snapshot_keys()
        }
        return lookup.resolve(on_disk, key, "checkpoint")


def _counts(store: Store, damaged: Collection[str]) -> dict[str, int]:
    """Records per user table for a checkpoint's record (the damaged tables left out)."""
    if not damaged:
        counts = stats.table_counts(store)
    else:
        counts = {}
        for logical in tables.USER_TABLES:
            names = tables.physical_tables(store.table_names(), logical)
            counts[logical] = sum(len(store.docs(n)) for n in names if n not in damaged)
    return {k: v for k, v in counts.items() if k not in ("checkpoints", "audit")}


def _forget_uncommitted(store: Store, taken: list[str]) -> None:
    """After a refused checkpoint command: remove the snapshot files it wrote before the
    refusal (a folder store writes them ahead of its commit) unless its commit landed
    after all. Only its own: a refusal leaves every other file as it was. Best effort:
    the refusal itself is what the caller reports."""
    for key in taken:
        with contextlib.suppress(Exception), store.reading():
            if key not in store.docs(TABLE):
                store.backend.snapshot_delete(key)


def delete(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Delete a checkpoint and its snapshot files."""
    with store.transaction():
        target = resolve(store, key)
        # Checked before anything changes: an id that is not a safe name (a
        # tampered checkpoints table) is refused with the store untouched.
        store.backend.snapshot_check(target["id"])
        _sweep(store)
        store.delete(TABLE, [target["id"]])
        audit.record(
            store,
            actor=actor,
            action="delete",
            table=TABLE,
            record_id=target["id"],
            summary=f"deleted checkpoint {target['id'][:8]}: {target['description']}",
            now=now,
        )
    store.backend.snapshot_delete(target["id"])
    return target


# -- diff ------------------------------------------------------------------------------
def _by_logical(physical: dict[str, Docs]) -> dict[str, dict[str, dict[str, Any]]]:
    """Logical table → {qualified id → doc}; per-session docs are keyed ``session/id``."""
    grouped: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in DIFF_TABLES}
    for name, docs in physical.items():
        logical = tables.logical_name(name)
        if logical not in grouped:
            continue
        for doc_id, doc in docs.items():
            key = f"{doc['session_id']}/{doc_id}" if logical == "working_memory" else doc_id
            grouped[logical][key] = doc
    return grouped


def _current(store: Store) -> dict[str, Docs]:
    # Read for the diff alone: a long-lived process (the workbench) does not keep every
    # table of a big store in memory for it.
    return {n: store.committed_docs(n) for n in _snapshot_names(store)}


def diff_states(old: dict[str, Docs], new: dict[str, Docs]) -> dict[str, dict[str, Any]]:
    """Per table: ids added, removed, and changed (with the fields that changed)."""
    a, b = _by_logical(old), _by_logical(new)
    result = {}
    for table in DIFF_TABLES:
        before, after = a[table], b[table]
        changed = []
        for key in sorted(before.keys() & after.keys()):
            x, y = before[key], after[key]
            if x != y:
                fields = sorted(f for f in x.keys() | y.keys() if x.get(f) != y.get(f))
                fields = [f for f in fields if f != "updated_at"] or fields
                changed.append({"id": key, "fields": fields})
        result[table] = {
            "added": sorted(after.keys() - before.keys()),
            "removed": sorted(before.keys() - after.keys()),
            "changed": changed,
        }
    return result


def diff(store: Store, key: str, key2: str | None = None, *, titles: int = 0) -> dict[str, Any]:
    """What changed from checkpoint ``key`` to ``key2`` (or to now).

    With ``titles=n``, the result also carries ``titles``: {table: {id: title}} for
    the first ``n`` ids of each list (added, removed, changed), named as
    :mod:`core.models.kinds` names records, so a reader sees more than ids.
    """
    with store.reading():
        first = resolve(store, key)
        second = None if key2 is None else resolve(store, key2)
        new = _current(store) if second is None else None
    # A snapshot never changes once taken: read with no lock held (100k records take a
    # second, and a read holds every writer up).
    old = store.backend.snapshot_tables(first["id"])
    if second is not None:
        new = store.backend.snapshot_tables(second["id"])
    assert new is not None
    result: dict[str, Any] = {
        "from": first["id"],
        "to": second["id"] if second else "now",
        "tables": diff_states(old, new),
    }
    if titles:
        result["titles"] = _titles(old, new, result["tables"], titles)
    return result


#: How wide a record's title in a diff may be.
TITLE_WIDTH = 60


def _titles(
    old: dict[str, Docs], new: dict[str, Docs], changes: dict[str, Any], first_n: int
) -> dict[str, dict[str, str]]:
    before, after = _by_logical(old), _by_logical(new)
    out: dict[str, dict[str, str]] = {}
    for table, change in changes.items():
        kind = kinds.of_table(table)
        if kind is None:
            continue
        names: dict[str, str] = {}
        for record_id in [
            *change["added"][:first_n],
            *(c["id"] for c in change["changed"][:first_n]),
        ]:
            names[record_id] = kind.title(after[table][record_id], TITLE_WIDTH)
        for record_id in change["removed"][:first_n]:
            names[record_id] = kind.title(before[table][record_id], TITLE_WIDTH)
        names = {k: v for k, v in names.items() if v}
        if names:
            out[table] = names
    return out
