"""A session's timeline, to replay step by step (the workbench's Replay).

Everything that happened in one session, in time order: its start, each
observation it kept (notes, tool calls, decisions, errors), each episode recorded
with its id, each work item (action) it opened, the notes added to them and
their closing, and its end. Events at the same instant keep the order in which
they were made (the session's start first, its end last, observations by their
sequence number). Observations the session dropped past its cap are gone, and a
replay says how many.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.text import one_line
from ..domain import actions, episodes, sessions
from ..storage.store import Store

#: The order of events at one instant.
_RANK = {"start": 0, "observation": 1, "action": 2, "note": 3, "episode": 4, "closed": 5, "end": 6}


@dataclass(frozen=True, slots=True)
class ReplayEvent:
    """One step of a replay."""

    at: str
    """When (an ISO instant, UTC)."""
    kind: str
    """``start``, ``observation``, ``episode``, ``action``, ``note``, ``closed`` or ``end``."""
    label: str
    """A short word for the step: the observation's kind, ``episode``, ``action``, ..."""
    text: str
    """What happened, in full."""
    ref: str
    """The record the step is about (an id)."""


@dataclass(frozen=True, slots=True)
class Replay:
    """A session and its steps, oldest first."""

    session: dict[str, Any]
    events: list[ReplayEvent]
    dropped: int
    """Observations the session no longer keeps (past its cap, or forgotten)."""


def _episode_text(doc: dict[str, Any]) -> str:
    score = doc.get("score")
    head = f"{doc.get('task_id', '')} · score {score:.2f}" if score is not None else ""
    summary = one_line(str(doc.get("summary") or ""))
    return f"#{doc.get('index')} {head} · {summary}".strip(" ·")


def session_replay(store: Store, session: str) -> Replay:
    """The timeline of ``session`` (an id, a unique start of one, or an agent's own
    session id). Reads every episode shard: a curation view."""
    with store.reading():
        doc = sessions.resolve(store, session)
        sid = doc["id"]
        kept = sessions.observations(store, sid)
        recorded = [e for e in episodes.iter_all(store) if e.get("session_id") == sid]
    work = [a for a in actions.list_actions(store) if a.get("session_id") == sid]
    steps: list[tuple[str, int, int, ReplayEvent]] = []

    def add(at: str | None, kind: str, order: int, label: str, text: str, ref: str) -> None:
        if at:
            steps.append((at, _RANK[kind], order, ReplayEvent(at, kind, label, text, ref)))

    title = one_line(str(doc.get("title") or sid))
    add(doc.get("started_at"), "start", 0, "start", f"session started: {title}", sid)
    for obs in kept:
        add(obs["created_at"], "observation", obs["seq"], obs["kind"], obs["content"], obs["id"])
    for ep in recorded:
        add(
            ep.get("created_at"),
            "episode",
            ep.get("index", 0),
            "episode",
            _episode_text(ep),
            ep["id"],
        )
    for n, item in enumerate(work):
        name = one_line(str(item["title"]))
        add(item.get("created_at"), "action", n, "action", f"work item opened: {name}", item["id"])
        for note in item.get("notes") or []:
            add(note.get("ts"), "note", n, "note", f"{name}: {note.get('text', '')}", item["id"])
        add(
            item.get("closed_at"),
            "closed",
            n,
            item["status"],
            f"work item {item['status']}: {name}",
            item["id"],
        )
    if doc.get("ended_at"):
        summary = one_line(str(doc.get("summary") or ""))
        text = f"session ended: {summary}" if summary else "session ended"
        add(doc["ended_at"], "end", 0, "end", text, sid)
    steps.sort(key=lambda s: (s[0], s[1], s[2]))
    dropped = int(doc.get("dropped_observations") or 0) + int(
        doc.get("forgotten_observations") or 0
    )
    return Replay(session=sessions.view(doc), events=[s[3] for s in steps], dropped=dropped)
