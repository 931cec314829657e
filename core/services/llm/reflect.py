"""``reflect SESSION``: a session's observations become lessons, through review.

With a model endpoint the model reads the observations and proposes lessons (as
agentmemory's reflect does); without one the heuristic keeps what the agent marked
as lessons, decisions and errors (:mod:`.heuristics`). Either way each lesson is
written as an agent's ``lesson add`` would be: a proposal while review is on and the
caller is not the curator, else a lesson (one already kept in the same or nearly the
same words is reinforced instead of added again).
They are all written in one transaction, tagged ``reflected``, scoped to the
session's project when it has one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...ledger.curator import Curator
from ...storage.store import Store
from .. import review
from . import client, endpoint, heuristics, prompts, session_source

TAG = "reflected"


def reflect_op(
    store: Store,
    session: str,
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
) -> dict[str, Any]:
    """The ``reflect`` operation: the lessons it wrote or proposed, and which engine."""
    found, observations = session_source.read(store, session, "reflect on")
    where = endpoint.configured()
    if where is not None:
        messages = prompts.reflection_messages(found, observations)
        proposed = client.ask(where, messages, prompts.parse_lessons)
    else:
        proposed = heuristics.lessons_from(observations)
    scope = f"project:{found['project']}" if found.get("project") else "global"
    written: list[dict[str, Any]] = []
    with store.transaction():
        for text, confidence in proposed:
            done = review.submit_lesson(
                store,
                text,
                now=now,
                actor=actor,
                scope=scope,
                confidence=confidence,
                tags=[TAG],
                on_duplicate="reinforce",
                curator=curator,
            )
            if done.proposal is not None:
                written.append({"text": text, "id": done.proposal["id"], "proposed": True})
            else:
                lesson = done.result.lesson
                written.append({"text": lesson["content"], "id": lesson["id"], "proposed": False})
    return {
        "engine": endpoint.LLM if where else endpoint.HEURISTIC,
        "fallback_reason": None if where else endpoint.NOT_CONFIGURED,
        "session": found["id"],
        "lessons": written,
    }
