"""Importing a file: parse, check clashes, write everything or nothing.

Every format parses into a :class:`~core.services.interop.bundle.Bundle`; this module
validates each record against its model, finds records that already exist
(by id, slot label, lesson fingerprint, rule text, card merge key) and, when
there are clashes, refuses unless ``--on-conflict`` says what to do. The
writes land in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from ...base import ids, names
from ...base.clock import iso
from ...base.errors import Conflict, InvalidInput
from ...base.text import fingerprint
from ...domain import aggregates, rule_archive, rules
from ...ledger import audit
from ...ledger.curator import Curator
from ...models.base import validate
from ...models.by_table import model_for
from ...models.limits import check_json
from ...privacy.fields import check_doc, scrub_doc
from ...storage import counters, tables
from ...storage.store import Store
from ...storage.tables import logical_name
from .bundle import Bundle

FORMATS = ("memwork", "episodic", "letta", "agentmemory")
POLICIES = ("skip", "replace", "keep-both")
Progress = Callable[[int, int], None]


# -- reading and sniffing -------------------------------------------------------------
def load_document(path: Path) -> Any:
    """Parse a JSON file (at most 256 MB); a JSON string holding JSON (double encoding)
    is unwrapped."""
    import orjson

    from ...base import jsonio

    data = jsonio.load_document(path)
    for _ in range(3):
        if not isinstance(data, str):
            break
        try:
            data = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise InvalidInput(
                "FILE", f"{path.name} holds a JSON string that is not JSON"
            ) from None
    return data


def sniff(data: Any) -> str:
    """Which format a parsed document is in."""
    from . import agentmemory, episodic, letta, memwork_format

    for name, module in (
        ("memwork", memwork_format),
        ("episodic", episodic),
        ("letta", letta),
        ("agentmemory", agentmemory),
    ):
        if module.looks_like(data):
            return name
    raise InvalidInput(
        "format",
        "could not tell the file's format; pass --format memwork|episodic|letta|agentmemory",
    )


def parse(data: Any, fmt: str, *, now: datetime, source: str) -> Bundle:
    """Parse with the named format's parser."""
    from . import agentmemory, episodic, letta, memwork_format

    if fmt == "auto":
        fmt = sniff(data)
    if fmt == "memwork":
        return memwork_format.parse(data, now=now)
    if fmt == "episodic":
        return episodic.parse(data, now=now)
    if fmt == "letta":
        return letta.parse(data, now=now, source=source)
    if fmt == "agentmemory":
        return agentmemory.parse(data, now=now, source=source)
    raise InvalidInput("format", f"must be one of auto, {', '.join(FORMATS)}")


# -- validation and clashes ----------------------------------------------------------
def validate_bundle(bundle: Bundle) -> None:
    """Check, scrub and validate every record; the message names the table, item and field.

    Every record of every table goes through the model the CLI writes it with
    (bookkeeping tables through :mod:`core.models.aggregates`): identifiers that
    look like secrets are refused, text is scrubbed, and what is stored is the
    model's own output, so a record missing a field gets its default instead of
    breaking later commands. Two records of one table with the same id or
    identity (slot label, rule text, lesson fingerprint, card key) are refused
    too: one would silently overwrite the other.
    """
    for target in (bundle.tables, bundle.history):
        for table, docs in target.items():
            seen: dict[Any, int] = {}
            for number, raw in enumerate(docs, start=1):
                where = f"{table}[{number}]"
                doc = _validated(table, raw, where)
                docs[number - 1] = doc
                keys = [("id", doc.get("session_id"), doc.get("id"))]
                if table in ("slots", "rules", "lessons", "mistake_cards"):
                    keys.append(_identity(table, doc))
                for key in keys:
                    if key in seen:
                        raise InvalidInput(where, f"duplicates {table}[{seen[key]}] ({key[-1]!r})")
                    seen[key] = number


def _validated(table: str, raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise InvalidInput(where, f"must be a JSON object (got {type(raw).__name__})")
    data = {k: v for k, v in raw.items() if k not in ("over_limit", "chars")}
    try:
        check_json(data, "")
        check_doc(table, data, where)
    except InvalidInput as exc:
        field = exc.field if exc.field.startswith(where) else f"{where}.{exc.field}"
        raise InvalidInput(field, exc.rule) from None
    data = scrub_doc(table, data)
    if table == "lessons" and isinstance(data.get("content"), str):
        # Scrubbing may have changed the text; the fingerprint follows the text.
        data["fingerprint"] = fingerprint(data["content"])
    model = model_for(table, data)
    if model is None:
        raise InvalidInput(where, f"{table} is not a table memwork imports")
    try:
        checked = validate(model, data)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}.{exc.field}", exc.rule) from None
    dumped = checked.model_dump(mode="json")
    for field in _ADDED_WHEN_NEEDED.get(table, ()):
        if field not in data:
            dumped.pop(field, None)
    normalised: dict[str, Any] = _normalised(dumped, data)  # a dict, as both inputs are
    return normalised


#: Fields the writers add only once there is something in them (their readers default
#: them): absent in a record, absent after the import, so a round trip stays exact.
_ADDED_WHEN_NEEDED = {"mistake_cards": ("merged_keys",), "episodes": ("agent_id",)}


def _normalised(dumped: Any, given: Any) -> Any:
    """The model's output, minus empty optional fields the record did not have.

    Missing fields get their defaults (a slot without ``limit`` gets 2000), values
    get their type ("0.9" becomes 0.9); a field absent from the record and None
    in the model stays absent, so an export imported back stays byte-identical.
    """
    if isinstance(dumped, dict) and isinstance(given, dict):
        return {
            k: _normalised(v, given.get(k))
            for k, v in dumped.items()
            if k in given or v is not None
        }
    if isinstance(dumped, list) and isinstance(given, list) and len(dumped) == len(given):
        return [_normalised(d, g) for d, g in zip(dumped, given, strict=True)]
    return dumped


def check_names(bundle: Bundle) -> None:
    """Every imported id that becomes part of a file name follows the naming rule.

    Session ids name the files of a session's observations and working memory;
    any other record is placed in a table whose name must be a plain file name.
    The message names the table, the item and the field.
    """
    from ...storage.manifest import table_file

    for table, docs in (*bundle.tables.items(), *bundle.history.items()):
        for number, doc in enumerate(docs, start=1):
            where = f"{table}[{number}]"
            if not isinstance(doc, dict):
                continue  # the shape is validate_bundle's to report
            if table == "sessions":
                names.check_id(doc.get("id"), f"{where}.id")
            if table in ("observations", "working_memory"):
                names.check_id(doc.get("session_id"), f"{where}.session_id")
            try:
                physical = tables.physical_name(table, doc)
            except Exception:  # noqa: BLE001 - a malformed record is the models' to report
                continue
            try:
                table_file(physical)
            except InvalidInput:
                raise InvalidInput(
                    where, f"its table name {physical[:40]!r} {names.FILE_NAME_RULE}"
                ) from None


def _identity(table: str, doc: dict[str, Any]) -> tuple[Any, ...]:
    if table == "slots":
        return ("label", doc["label"])
    if table == "rules":
        return ("rule", doc["scope"], doc["text"])
    if table == "lessons":
        return ("lesson", doc.get("fingerprint"), doc.get("scope"))
    if table == "mistake_cards":
        return (
            "card",
            doc["mistake_type"],
            doc["task_id"],
            doc.get("worker_id") or "",
            doc.get("correct_decision") or "",
        )
    return ("id", doc["id"])


def _existing(store: Store, table: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    for name in tables.physical_tables(store.table_names(), table):
        for doc in store.docs(name).values():
            found[("id", doc["id"])] = doc
            found[_identity(table, doc)] = doc
    return found


class ImportReport:
    """What an import did, per table."""

    def __init__(self, fmt: str) -> None:
        self.format = fmt
        self.added: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.replaced: dict[str, int] = {}
        self.kept_both: dict[str, int] = {}
        self.clashes: list[str] = []
        self.note: dict[str, Any] = {}
        self.import_id = ""
        #: Store settings the file carried, left out (this store keeps its own).
        self.settings_not_imported: dict[str, Any] = {}

    def to_json(self) -> dict[str, Any]:
        """For ``--json``."""
        return {
            "added": self.added,
            "clashes": self.clashes,
            "format": self.format,
            "import_id": self.import_id,
            "kept_both": self.kept_both,
            "note": self.note,
            "replaced": self.replaced,
            "settings_not_imported": self.settings_not_imported,
            "skipped": self.skipped,
        }


def _bump(counts: dict[str, int], table: str) -> None:
    counts[table] = counts.get(table, 0) + 1


def _fresh_copy(table: str, doc: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    prefix = doc["id"].split("_", 1)[0] if "_" in doc["id"] else "rec"
    copy = {**doc, "id": ids.new_id(prefix)}
    if table == "slots":
        n = 2
        base = doc["label"][:190]  # room for the suffix within the 200-character rule
        while f"{base}-{n}" in taken:
            n += 1
        copy["label"] = f"{base}-{n}"
        taken.add(copy["label"])
    return copy


# -- applying ------------------------------------------------------------------------
def _check_review(
    store: Store, bundle: Bundle, curator: Curator | None, *, now: datetime, actor: str
) -> None:
    """Refuse, in one line naming the curator key, an agent's import of records review
    covers while it is on (call inside the import's transaction)."""
    from .. import review

    held = sorted(
        {logical_name(t) for t, docs in bundle.tables.items() if docs} & set(review.REVIEWED_TABLES)
    )
    if held and review.needs_review(store, curator, now=now, actor=actor):
        raise Conflict(
            f"review is on: importing {', '.join(held)} would put them live without review; "
            "a person imports them with --curator-key FILE (nothing was imported)"
        )


def apply_bundle(
    store: Store,
    bundle: Bundle,
    *,
    on_conflict: str | None,
    now: datetime,
    actor: str,
    source: str,
    progress: Progress | None = None,
    curator: Curator | None = None,
) -> ImportReport:
    """Write a bundle in one transaction (nothing at all when anything is wrong). While the
    store's review is on, a bundle holding records review covers (lessons, rules, slots…)
    is refused unless the curator key is given: an import would put them live at once."""
    if on_conflict is not None and on_conflict not in POLICIES:
        raise InvalidInput("on_conflict", f"must be one of {', '.join(POLICIES)}")
    check_names(bundle)
    report = ImportReport(bundle.format)
    report.settings_not_imported = _leave_out_settings(bundle)
    validate_bundle(bundle)
    report.note = bundle.note
    # The import's id, known before anything is written: audit entries it brings are
    # marked with it (they happened in another store, not here).
    report.import_id = ids.new_id("imp")
    for doc in bundle.tables.get("audit", []):
        doc.setdefault("imported", report.import_id)
    total = bundle.total()
    done = 0
    with store.transaction():
        _check_review(store, bundle, curator, now=now, actor=actor)
        glob = aggregates.read_global(store)
        has_history = int(glob["total_episodes"]) > 0
        if has_history and (bundle.tables.get("episodes") or bundle.history):
            raise Conflict(
                "this store already has episode history; import episode histories into an "
                "empty store (memwork --db NEW import ...) — two histories cannot interleave"
            )
        restore = bundle.format == "memwork" and not has_history and _store_is_empty(store)
        plans: list[tuple[str, dict[str, Any], dict[str, Any] | None]] = []
        for table, docs in bundle.tables.items():
            existing = _existing(store, table)
            for doc in docs:
                clash = existing.get(("id", doc["id"])) or existing.get(_identity(table, doc))
                plans.append((table, doc, clash))
                if clash is not None:
                    report.clashes.append(f"{table}:{doc.get('label') or doc['id']}")
        if report.clashes and on_conflict is None:
            shown = ", ".join(report.clashes[:5])
            more = f" and {len(report.clashes) - 5} more" if len(report.clashes) > 5 else ""
            raise Conflict(
                f"{len(report.clashes)} records already exist ({shown}{more}); nothing was "
                "imported — choose --on-conflict skip|replace|keep-both"
            )
        labels = {d["label"] for d in store.docs("slots").values()}
        # Imported rules go after the ones already here, in the file's order: their
        # own sequence numbers (1, 2, ...) would interleave with the store's.
        rule_offset = counters.peek(store, "rule_seq")
        next_position = 1 + max(
            (d.get("position", 0) for d in store.docs("slots").values()), default=-1
        )
        # Sessions kept twice get a new id; their observations and working memory follow.
        renamed_sessions: dict[str, str] = {}
        # Every record that is stored under another id than the file's (kept twice, or
        # matched to a record already here): links follow it.
        renamed: dict[str, str] = {}
        arriving_links: list[dict[str, Any]] = []
        writes: dict[str, dict[str, dict[str, Any]]] = {}
        archived: list[dict[str, Any]] = []
        ordered = sorted(
            plans,
            key=lambda p: (p[0] not in ("sessions", "slots"), p[1].get("position", 0)),
        )
        for table, doc, clash in ordered:
            if (
                table in ("observations", "working_memory")
                and doc["session_id"] in renamed_sessions
            ):
                doc = {**doc, "session_id": renamed_sessions[doc["session_id"]]}
            if clash is not None:
                if on_conflict == "skip" or (on_conflict == "keep-both" and table == "rules"):
                    if clash["id"] != doc["id"]:
                        renamed[doc["id"]] = clash["id"]
                    _bump(report.skipped, table)
                    continue
                if on_conflict == "replace":
                    _remove(store, table, clash)
                    if clash["id"] != doc["id"]:
                        renamed[doc["id"]] = clash["id"]
                    doc = {**doc, "id": clash["id"]}
                    if table == "slots":
                        doc["position"] = clash.get("position", 0)
                    _bump(report.replaced, table)
                else:
                    fresh = _fresh_copy(table, doc, labels)
                    if table == "sessions":
                        renamed_sessions[doc["id"]] = fresh["id"]
                    renamed[doc["id"]] = fresh["id"]
                    doc = fresh
                    _bump(report.kept_both, table)
                    if table == "slots" and not restore:
                        doc["position"] = next_position
                        next_position += 1
            else:
                _bump(report.added, table)
                if table == "slots" and not restore:
                    # Imported slots go after the ones already here, in the file's order.
                    doc = {**doc, "position": next_position}
                    next_position += 1
            if table == "rules" and rule_offset:
                doc = {**doc, "seq": int(doc.get("seq", 0)) + rule_offset}
            if table == "rules" and not doc.get("active", True):
                archived.append(doc)  # the archive places them (core/domain/rule_archive.py)
            elif table == "links":
                arriving_links.append(doc)  # placed beside their records, once those are
            else:
                writes.setdefault(tables.physical_name(table, doc), {})[doc["id"]] = doc
            done += 1
            if progress and done % 1000 == 0:
                progress(done, total)
        for name, table_docs in writes.items():
            store.put_many(name, table_docs)
        rule_archive.add_many(store, archived)
        if arriving_links:
            from ...domain.link_ops import place_imported

            place_imported(store, arriving_links, renamed)
        if not has_history:
            for table, docs in bundle.history.items():
                for doc in docs:
                    store.put(tables.physical_name(table, doc), doc["id"], doc)
        _renumber_after_import(store)
        if rule_offset:
            for scope in {d["scope"] for t, d, _ in plans if t == "rules"}:
                rules.enforce_window(store, scope, now)
        store.put(
            "imports",
            report.import_id,
            {
                "counts": report.added,
                "created_at": iso(now),
                "format": bundle.format,
                "id": report.import_id,
                "kept_both": report.kept_both,
                "note": bundle.note,
                "replaced": report.replaced,
                "skipped": report.skipped,
                "source": source,
            },
        )
        if bundle.format == "letta":
            # The agents' names and system prompts, readable (get, export, workbench).
            from .letta_agents import keep

            keep(store, bundle.note, import_id=report.import_id, now=now)
        if not restore:
            # A memwork export restored into an empty store brings its own audit
            # log and stays byte-identical on the next export; the import itself
            # is in the store-local `imports` table either way.
            audit.record(
                store,
                actor=actor,
                action="import",
                table="imports",
                record_id=report.import_id,
                summary=f"imported {sum(report.added.values())} records from {source} "
                f"({bundle.format})",
                now=now,
            )
    if progress:
        progress(total, total)
    return report


#: ``meta`` documents that belong to the store itself, never to what it imports: its
#: settings (review, context_log) and who may decide for it (core/ledger/curator.py).
STORE_OWN = ("config", "curator")


def _leave_out_settings(bundle: Bundle) -> dict[str, Any]:
    """Take the store's own ``meta`` documents out of ``bundle``; returns the settings
    the file carried (for the report). An export that says ``review: off`` must never
    turn review off where it is imported."""
    carried: dict[str, Any] = {}
    for target in (bundle.tables, bundle.history):
        docs = target.get("meta")
        if not docs:
            continue
        kept = []
        for doc in docs:
            if isinstance(doc, dict) and doc.get("id") in STORE_OWN:
                if doc.get("id") == "config":
                    carried.update({k: v for k, v in doc.items() if k != "id"})
                continue
            kept.append(doc)
        target["meta"] = kept
    return carried


def _store_is_empty(store: Store) -> bool:
    local = set(tables.LOCAL_TABLES)
    return not any(
        store.docs(n) for n in store.table_names() if tables.logical_name(n) not in local
    )


def _remove(store: Store, table: str, doc: dict[str, Any]) -> None:
    if table == "rules" and not doc.get("active", True):
        for chunk, rule in rule_archive.copies(store, doc["scope"], doc["text"]):
            if rule["id"] == doc["id"]:
                rule_archive.remove(store, chunk, rule["id"])
        return
    store.delete(tables.physical_name(table, doc), [doc["id"]])
    if table == "sessions":
        # The file's version of the session brings its own observations and
        # working memory; the old ones must not linger beside them.
        for logical in ("observations", "working_memory"):
            name = tables.physical_name(logical, {"session_id": doc["id"]})
            if store.has_table(name):  # (a lookup: a listing per session was quadratic)
                store.drop(name)


def _renumber_after_import(store: Store) -> None:
    """Counters must stay ahead of imported rules so new rules sort after them."""
    seqs = [
        r.get("seq", 0) for name in store.table_names("rules") for r in store.docs(name).values()
    ]
    if seqs:
        counters.set_at_least(store, "rule_seq", max(seqs))


# -- reading a file and applying it -------------------------------------------------
def run_import(
    store: Store,
    path: Path,
    *,
    fmt: str = "auto",
    on_conflict: str | None = None,
    now: datetime,
    actor: str,
    progress: Progress | None = None,
    curator: Curator | None = None,
) -> ImportReport:
    """Read, parse and apply ``path`` (``curator``: the key a person gave, which an import
    of reviewed records takes while review is on)."""
    data = load_document(path)
    bundle = parse(data, fmt, now=now, source=path.name)
    return apply_bundle(
        store,
        bundle,
        on_conflict=on_conflict,
        now=now,
        actor=actor,
        source=path.name,
        progress=progress,
        curator=curator,
    )
