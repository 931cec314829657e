"""Where a line of the context came from: references to the records behind it.

``memwork context --format json`` gives each line its ``sources``, a list of
``{"kind", "id", …}`` references (kinds as in :mod:`core.models.kinds`, plus ``task``
for a task's numbers): the slot a line belongs to (with its ``label``), the
lesson, the rule and the episodes that derived it, the mistake card and the
episodes that sighted it, the failed episode, the recent episode (each episode
with its ``index``).

Sources follow links (:mod:`core.ledger.links`): a rule's ``derived_from`` links and a
card's ``sighted_in`` links name the episodes behind it (read into
``episode_ids``, oldest first, at most :data:`EPISODE_REFS`: a card seen 10,000
times keeps its latest sightings, not a list that grows with history); a lesson's
or a slot's links (``about`` a task, a file, another record) follow its own
reference, marked ``via`` the link's kind. Records with no links name themselves.

Plain functions over documents: the context path imports this on every step.
"""

from __future__ import annotations

from typing import Any

#: Episode ids a rule or a card keeps (the newest; ``core.ledger.links.EPISODE_REFS``).
EPISODE_REFS = 20

Ref = dict[str, Any]


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
    """A slot's line: the slot, then what its links point to."""
    return [{"kind": "slot", "id": doc["id"], "label": doc["label"]}, *doc.get("link_refs", ())]


def lesson(doc: dict[str, Any]) -> list[Ref]:
    """A lesson's line: the lesson, then what its links point to (``via`` the link's kind:
    the task, file or record it is ``about``, …)."""
    return [{"kind": "lesson", "id": doc["id"]}, *doc.get("link_refs", ())]


def rule(doc: dict[str, Any]) -> list[Ref]:
    """A rule's line: the rule, then the episodes that derived it."""
    return [{"kind": "rule", "id": doc["id"]}, *episodes_of(doc)]


def card(doc: dict[str, Any]) -> list[Ref]:
    """A mistake card's line: the card, then the episodes that sighted it."""
    return [{"kind": "card", "id": doc["id"]}, *episodes_of(doc)]


def task(task_id: str) -> list[Ref]:
    """A line about a task as a whole (its mean score)."""
    return [{"kind": "task", "id": task_id}]
