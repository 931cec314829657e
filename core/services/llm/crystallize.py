"""``crystallize SESSION``: a session's summary, written from its observations.

With a model endpoint the model writes the paragraph (as agentmemory's crystallize
does); without one the heuristic counts and quotes the observations
(:mod:`.heuristics`). The summary replaces the session's own, active or ended; while
review holds an agent's writes it waits as a ``session summarize`` proposal instead.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...domain import sessions
from ...ledger.curator import Curator
from ...storage.store import Store
from .. import review
from . import client, endpoint, heuristics, prompts, session_source

#: The operation a held summary is proposed as (declared in core/ops/operations.py).
SUMMARIZE = "summarize_session"


def crystallize_op(
    store: Store,
    session: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> dict[str, Any]:
    """The ``crystallize`` operation: the summary, which engine wrote it, and the proposal
    it became if review holds it."""
    found, observations = session_source.read(store, session, "crystallize")
    where = endpoint.configured()
    if where is not None:
        messages = prompts.crystallize_messages(found, observations)
        summary = client.ask(where, messages, prompts.parse_summary)
    else:
        summary = heuristics.summary_of(observations)
    proposal: str | None = None
    with store.transaction():
        if review.needs_review(store, curator, now=now, actor=actor):
            params = {"session": found["id"], "summary": summary}
            held = review.propose_operation(
                store, SUMMARIZE, params, now=now, actor=actor, words="session summarize"
            )
            proposal = held["id"]
        else:
            sessions.summarize(store, found["id"], summary, now=now, actor=actor)
    return {
        "engine": endpoint.LLM if where else endpoint.HEURISTIC,
        "fallback_reason": None if where else endpoint.NOT_CONFIGURED,
        "session": found["id"],
        "summary": summary,
        "proposed": proposal is not None,
        "proposal": proposal,
    }
