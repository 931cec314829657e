"""Agent tokens: an agent's own bearer token for the HTTP door.

Over HTTP, naming an agent (``X-Memwork-Agent``) claims nothing: anyone holding the
operator's token may name any agent. An agent token is a random secret issued for one
agent; a request that carries it acts as that agent, and as no other. The store keeps
only its SHA-256 (the ``agent_tokens`` table: agent, digest, creation time), so the
store's files, its exports and its audit never hold the token itself; it is shown once,
when it is issued. The table is store-local: not exported, not snapshotted (a restore
never brings a revoked token back).

Issuing and revoking are a person's: while review is on they need the curator key.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..base.errors import InvalidInput, NotFound
from ..storage.store import Store

if TYPE_CHECKING:
    from .curator import Curator

TABLE = "agent_tokens"
PREFIX = "mwa_"


def digest(token: str) -> str:
    """What the store keeps of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def _check_agent(agent: str) -> str:
    from ..privacy import identifier_problem

    agent = agent.strip()
    problem = identifier_problem(agent) if agent else "must not be empty"
    if problem:
        raise InvalidInput("AGENT", problem)
    return agent


def _curator_check(store: Store, curator: Curator | None, now: datetime, actor: str) -> None:
    from . import config
    from .curator import check

    if config.is_on(store, "review"):
        check(store, curator, now=now, actor=actor, what="issuing or revoking agent tokens")


def issue(
    store: Store, agent: str, *, now: datetime, actor: str, curator: Curator | None = None
) -> dict[str, Any]:
    """A new token for ``agent`` (returned once; the store keeps its digest). Audited,
    naming the agent only."""
    from ..base.clock import iso
    from . import audit

    agent = _check_agent(agent)
    token = PREFIX + secrets.token_urlsafe(32)
    with store.transaction():
        _curator_check(store, curator, now, actor)
        kept = digest(token)
        doc = {"id": kept[:24], "agent": agent, "sha256": kept, "created_at": iso(now)}
        store.put(TABLE, doc["id"], doc)
        audit.record(
            store,
            actor=actor,
            action="agent_token",
            table=TABLE,
            record_id=agent,
            summary=f"issued an agent token for {agent}",
            now=now,
        )
    return {"agent": agent, "token": token, "created_at": doc["created_at"]}


def listing(store: Store) -> list[dict[str, Any]]:
    """Every token's agent and creation time (never a digest), oldest first."""
    with store.reading():
        docs = list(store.docs(TABLE).values())
    rows = [{"agent": d["agent"], "created_at": d["created_at"]} for d in docs]
    return sorted(rows, key=lambda r: (r["created_at"], r["agent"]))


def revoke(
    store: Store, agent: str, *, now: datetime, actor: str, curator: Curator | None = None
) -> dict[str, Any]:
    """Remove every token of ``agent`` (NotFound when it has none). Audited."""
    from . import audit

    agent = _check_agent(agent)
    with store.transaction():
        _curator_check(store, curator, now, actor)
        ids = [i for i, d in store.docs(TABLE).items() if d.get("agent") == agent]
        if not ids:
            raise NotFound("agent token", agent)
        store.delete(TABLE, ids)
        audit.record(
            store,
            actor=actor,
            action="agent_token_revoke",
            table=TABLE,
            record_id=agent,
            summary=f"revoked {len(ids)} agent token(s) of {agent}",
            now=now,
        )
    return {"agent": agent, "revoked": len(ids)}


def agent_of_token(store: Store, token: str) -> str | None:
    """The agent ``token`` was issued for, or None (every digest compared in constant
    time). Read from the store each time: a revoked token stops working at once."""
    if not token.startswith(PREFIX):
        return None
    given = digest(token)
    found: str | None = None
    with store.reading():
        docs = list(store.docs(TABLE).values())
    for doc in docs:
        if hmac.compare_digest(str(doc.get("sha256", "")), given):
            found = str(doc["agent"])
    return found
