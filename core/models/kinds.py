"""The kinds of memory record: where each is stored, what to call one, who shows it.

One registry for everything that names records across memwork: the global
search (a hit's title, and where Enter takes you), the History pane (the table
an audit entry names leads to the record's pane) and the checkpoint diff (a
short title beside each id). Before it, each of those kept its own map and its
own title builder, and they drifted apart.

A *kind* is the noun a user reads ("lesson", "observation"); its *table* is the
logical table that holds it (:mod:`core.storage.tables`); its *pane* is the id of the
workbench pane that shows it. A pane id is a plain string, so the core stays
free of the UI. A record's *ref* is what that pane's ``jump_to`` takes: the
record id, except for observations (``<session id>/<observation id>``) and
working memory (its session's id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ..base.text import clip, one_line

Doc = dict[str, Any]


class Kind(NamedTuple):
    """One kind of memory record (a named tuple: ``memwork search`` runs on every agent
    step that recalls, and dataclasses cost it ~8 ms of imports)."""

    name: str
    """The user-facing noun, singular (``"card"``)."""
    table: str
    """The logical table that holds records of this kind."""
    pane: str
    """The id of the workbench pane that shows them."""
    title_of: Callable[[Doc], str]
    """A one-line human title for a record (uncut; see :meth:`title`)."""
    ref_of: Callable[[Doc], str]
    """What the pane's ``jump_to`` takes to select the record."""

    def title(self, doc: Doc, width: int | None = None) -> str:
        """The record's title on one line, cut to ``width`` characters when given."""
        text = self.title_of(doc)
        return clip(text, width) if width else one_line(text)


def _id(doc: Doc) -> str:
    return str(doc["id"])


def _episode(doc: Doc) -> str:
    score = doc.get("score")
    shown = f" {score:.2f}" if isinstance(score, int | float) else ""
    return f"#{doc.get('index', '?')} {doc.get('task_id', '')}{shown}: {doc.get('summary', '')}"


def _card(doc: Doc) -> str:
    return f"[{doc.get('mistake_type', '')}] {doc.get('lesson', '')}"


def _session(doc: Doc) -> str:
    who = f"{doc.get('agent_id') or ''} {doc.get('project') or ''}".strip()
    return doc.get("title") or who or _id(doc)


def _observation(doc: Doc) -> str:
    return f"{doc.get('kind', '')}: {doc.get('content', '')}"


def _working_memory(doc: Doc) -> str:
    # Working memory has no name of its own: its session has (and its ids, which
    # lead with the session's, are long enough already).
    return ""


#: Every kind, in the order the workbench lists them.
KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("session", "sessions", "sessions", _session, _id),
        Kind(
            "observation",
            "observations",
            "sessions",
            _observation,
            lambda d: f"{d['session_id']}/{d['id']}",
        ),
        Kind(
            "working_memory",
            "working_memory",
            "sessions",
            _working_memory,
            lambda d: str(d["session_id"]),
        ),
        Kind("episode", "episodes", "episodes", _episode, _id),
        Kind("card", "mistake_cards", "cards", _card, _id),
        Kind("rule", "rules", "lessons", lambda d: str(d.get("text", "")), _id),
        Kind("lesson", "lessons", "lessons", lambda d: str(d.get("content", "")), _id),
        Kind("slot", "slots", "slots", lambda d: str(d.get("label", "")), _id),
        Kind(
            "proposal",
            "proposals",
            "review",
            lambda d: f"{d.get('kind', '')} {d.get('op', '')} {d.get('target', '')}",
            _id,
        ),
        Kind(
            "checkpoint",
            "checkpoints",
            "checkpoints",
            lambda d: str(d.get("description") or d["id"]),
            _id,
        ),
        Kind(
            "action",
            "actions",
            "sessions",
            lambda d: f"[{d.get('status', '')}] {d.get('title', '')}",
            _id,
        ),
        Kind(
            "profile",
            "profiles",
            "sessions",
            lambda d: f"{d.get('project', '')}: {d.get('content', '')}",
            _id,
        ),
    )
}

_BY_TABLE: dict[str, Kind] = {k.table: k for k in KINDS.values()}


def kind(name: str) -> Kind:
    """The kind called ``name`` (``KeyError`` for an unknown one)."""
    return KINDS[name]


def of_table(table: str) -> Kind | None:
    """The kind a logical table holds, or None (``audit``, ``meta``, …)."""
    return _BY_TABLE.get(table)


def pane_of(name: str) -> str:
    """The pane that shows records of kind ``name``."""
    return KINDS[name].pane
