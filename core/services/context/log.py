"""Recording which lessons and slots a context put in front of an agent.

With the store setting ``context_log`` on, every ``memwork context`` an agent
asks for appends one audit entry per lesson and per slot it injected (action
``inject``; the summary names the record, the task and the style), so
``memwork history --record ID`` and the History pane can say when a record
reached an agent's prompt. It is off by default: the context runs on every
agent step and otherwise never writes.

The same transaction counts the injections per record (how many contexts held
it, and when the last one did) in one ``meta`` document, so "which lesson does
the agent rely on most" is one small read (:func:`injection_counts`), never a
scan of the audit log. A store whose log began before the counts existed has its
earlier ``inject`` entries counted once, by the first context that records one.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from ...base.clock import iso
from ...base.text import clip
from ...ledger import audit
from ...storage.store import Store

if TYPE_CHECKING:
    from .budget import Section


class ContextResult(Protocol):
    """What the log reads of a built context (:class:`.build.ContextResult`)."""

    sections: list[Section]
    task_id: str | None
    style: str


ACTION = "inject"
#: Source kinds that are recorded, and the table their audit entries name.
RECORDED = {"lesson": "lessons", "slot": "slots"}
#: The ``meta`` document holding the counts.
META = "meta"
COUNTS_ID = "injections"
#: How much of a lesson's text names it in an audit entry.
NAME_WIDTH = 48


class Injections(TypedDict):
    """How often one record reached an agent's context, and when it last did."""

    count: int
    last: str


def injected(result: ContextResult) -> list[tuple[str, str, str]]:
    """(kind, id, label) of every lesson and slot the context kept, in order, each once."""
    seen: set[str] = set()
    found: list[tuple[str, str, str]] = []
    for section in result.sections:
        for line in section.lines:
            for ref in line.sources:
                # A ref "via" a link is what the line's record links to, not what it shows.
                if ref["kind"] in RECORDED and "via" not in ref and ref["id"] not in seen:
                    seen.add(ref["id"])
                    found.append((ref["kind"], ref["id"], str(ref.get("label", ""))))
    return found


def _name(store: Store, kind: str, record_id: str, label: str) -> str:
    """``slot persona``, ``lesson “Canary every deploy…”``: what the entry calls it."""
    if label:
        return f"{kind} {label}"
    doc = store.docs(RECORDED[kind]).get(record_id) or {}
    content = str(doc.get("content", ""))
    return f"{kind} “{clip(content, NAME_WIDTH)}”" if content else f"{kind} {record_id}"


def record_injections(store: Store, result: ContextResult, *, now: datetime, actor: str) -> int:
    """Append one ``inject`` audit entry per injected lesson and slot and count each one
    (one transaction); returns how many."""
    records = injected(result)
    if not records:
        return 0
    where = f"task {result.task_id}" if result.task_id else "no task"
    stamp = iso(now)
    with store.transaction():
        counts = _counts_doc(store)
        for kind, record_id, label in records:
            audit.record(
                store,
                actor=actor,
                action=ACTION,
                table=RECORDED[kind],
                record_id=record_id,
                summary=f"injected into context: {_name(store, kind, record_id, label)} "
                f"({where}, {result.style} style)",
                now=now,
            )
            known = counts["records"].get(record_id) or {"count": 0, "last": stamp}
            counts["records"][record_id] = {"count": int(known["count"]) + 1, "last": stamp}
        store.put(META, COUNTS_ID, counts)
    return len(records)


def _counts_doc(store: Store) -> dict[str, Any]:
    """The counts document, a copy to change; built from the audit log the first time
    (a log kept before the counts existed is counted, not forgotten)."""
    doc = store.docs(META).get(COUNTS_ID)
    if doc is not None:
        return {"id": COUNTS_ID, "records": dict(doc.get("records") or {})}
    records: dict[str, Injections] = {}
    for entry in audit.entries(store, newest_first=False):
        if entry["action"] == ACTION:
            known = records.get(entry["record_id"])
            count = known["count"] if known else 0
            records[entry["record_id"]] = {"count": count + 1, "last": entry["ts"]}
    return {"id": COUNTS_ID, "records": records}


def injection_counts(store: Store) -> dict[str, Injections]:
    """Record id → how many contexts held it and when the last one did (records never
    injected are absent). Call inside ``store.reading()``."""
    doc = store.docs(META).get(COUNTS_ID) or {}
    records = doc.get("records") or {}
    return {
        key: {"count": int(value.get("count", 0)), "last": str(value.get("last", ""))}
        for key, value in records.items()
        if isinstance(value, dict)
    }
