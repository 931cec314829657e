"""Where a line of the context came from: references to the records behind it.

``memwork context --format json`` gives each line its ``sources``, a list of
``{"kind", "id", …}`` references (kinds as in :mod:`core.kinds`, plus ``task``
for a task's numbers): the slot a line belongs to (with its ``label``), the
lesson, the rule and the episodes that derived it, the mistake card and the
episodes that sighted it, the failed episode, the recent episode (each episode
with its ``index``).

Rules and cards keep the ids of the episodes behind them in ``episode_ids``,
newest last, at most :data:`EPISODE_REFS` (a card seen 10,000 times keeps its
latest sightings, not a list that grows with history). Records made before
this existed, or imported, have none: their lines name the record alone.

Plain functions over documents: the context path imports this on every step.
"""

from __future__ import annotations

from typing import Any

#: Episode ids a rule or a card keeps (the newest).
EPISODE_REFS = 20

Ref = dict[str, Any]


def with_episode(episode_ids: list[str] | None, episode_id: str | None) -> list[str]:
    """``episode_ids`` with ``episode_id`` added last (moved there if present), capped."""
    kept = [e for e in (episode_ids or []) if e != episode_id]
    if episode_id:
        kept.append(episode_id)
    return kept[-EPISODE_REFS:]


def episode(doc: dict[str, Any]) -> Ref:
    """An episode (or an aggregate's compact entry, or a failure summary)."""
    ref: Ref = {"kind": "episode", "id": doc.get("id") or doc.get("episode_id")}
    if doc.get("index") is not None:
        ref["index"] = doc["index"]
    return ref


def episodes_of(doc: dict[str, Any]) -> list[Ref]:
    """The episodes a rule or a card names, oldest first."""
    return [{"kind": "episode", "id": e} for e in doc.get("episode_ids") or []]


def slot(doc: dict[str, Any]) -> list[Ref]:
    """A slot's line."""
    return [{"kind": "slot", "id": doc["id"], "label": doc["label"]}]


def lesson(doc: dict[str, Any]) -> list[Ref]:
    """A lesson's line."""
    return [{"kind": "lesson", "id": doc["id"]}]


def rule(doc: dict[str, Any]) -> list[Ref]:
    """A rule's line: the rule, then the episodes that derived it."""
    return [{"kind": "rule", "id": doc["id"]}, *episodes_of(doc)]


def card(doc: dict[str, Any]) -> list[Ref]:
    """A mistake card's line: the card, then the episodes that sighted it."""
    return [{"kind": "card", "id": doc["id"]}, *episodes_of(doc)]


def task(task_id: str) -> list[Ref]:
    """A line about a task as a whole (its mean score)."""
    return [{"kind": "task", "id": task_id}]
