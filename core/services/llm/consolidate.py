"""``consolidate``: with a model endpoint, the model writes the ``[CONSOLIDATED]`` rules.

Without one, the domain's consolidation runs as it always has (the external command
when one is set, else the heuristic; :mod:`core.domain.consolidation`). With one, the
last 30 episodes go to the model outside the store lock, and its rules are added in
one transaction, or, while review holds an agent's writes, queued as rule proposals.
A failing or malformed endpoint is an error: nothing is written, and the caller is
told, rather than a silent fallback that would hide a wrong key or URL.
The automatic consolidation after recording never asks a model: recording stays
local and fast.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...base.errors import NotFound
from ...domain import aggregates, consolidation, episodes
from ...ledger.curator import Curator
from ...storage.store import Store
from .. import review
from . import client, endpoint, prompts


def _full(store: Store, recent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The window's episodes whole (mistakes and successes too), where still stored."""
    window = recent[-prompts.CONSOLIDATE_WINDOW :]
    found: list[dict[str, Any]] = []
    for entry in window:
        try:
            found.append(episodes.get_episode(store, entry["id"]))
        except NotFound:  # forgotten since: what the aggregates kept is enough
            found.append(entry)
    return found


def model_rules(store: Store, where: endpoint.Endpoint) -> list[str]:
    """The rules the model proposes from the last 30 episodes (ModelFailed if it fails)."""
    with store.reading():
        window = _full(store, aggregates.read_global(store)["recent"])
    return client.ask(where, prompts.consolidation_messages(window), prompts.parse_rules)


def consolidate_op(
    store: Store, *, now: datetime, actor: str, curator: Curator | None = None
) -> dict[str, Any]:
    """The ``consolidate`` operation: what it added (or proposed), which engine did it,
    and why it fell back if it did."""
    where = endpoint.configured()
    if where is None:
        return consolidation.consolidate(store, now=now, actor=actor).to_json()
    texts = model_rules(store, where)
    report = consolidation.Report(endpoint.LLM)
    with store.transaction():
        if texts and review.needs_review(store, curator, now=now, actor=actor):
            for text in texts:
                params = {"text": text, "scope": "global"}
                proposal = review.propose_operation(store, "add_rule", params, now=now, actor=actor)
                report.proposed.append(proposal["id"])
            texts = []
        glob = aggregates.read_global(store)
        consolidation.apply_rules(store, texts, report, glob, now=now, actor=actor)
        aggregates.write_global(store, glob)
    return report.to_json()
