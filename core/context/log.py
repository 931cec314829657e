"""Recording which lessons and slots a context put in front of an agent.

With the store setting ``context_log`` on, every ``memwork context`` an agent
asks for appends one audit entry per lesson and per slot it injected (action
``inject``; the summary names the task and the style), so ``memwork history
--record ID`` and the History pane can say when a record reached an agent's
prompt. It is off by default: the context runs on every agent step and
otherwise never writes.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from .. import audit
from ..storage.store import Store

if TYPE_CHECKING:
    from .budget import Section


class ContextResult(Protocol):
    """What the log reads of a built context (:class:`core.context.build.ContextResult`)."""

    sections: list[Section]
    task_id: str | None
    style: str


ACTION = "inject"
#: Source kinds that are recorded, and the table their audit entries name.
RECORDED = {"lesson": "lessons", "slot": "slots"}


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


def record_injections(store: Store, result: ContextResult, *, now: datetime, actor: str) -> int:
    """Append one ``inject`` audit entry per injected lesson and slot (one transaction);
    returns how many."""
    records = injected(result)
    if not records:
        return 0
    where = f"task {result.task_id}" if result.task_id else "no task"
    with store.transaction():
        for kind, record_id, label in records:
            name = f" {label}" if label else ""
            audit.record(
                store,
                actor=actor,
                action=ACTION,
                table=RECORDED[kind],
                record_id=record_id,
                summary=f"injected into context: {kind}{name} ({where}, {result.style} style)",
                now=now,
            )
    return len(records)
