"""Per-agent isolation: with the store's ``isolation`` setting at ``agent``, each agent
reads only its own sessions, observations, working memory and episodes, plus what is
global.

Who owns what:

- a session is its agent's (``agent_id``); its observations and its working memory
  are the session's agent's;
- an episode is the agent's that recorded it (``agent_id``, stamped on the way in
  from the caller's agent id);
- a record with no agent stamp (written by a caller with no agent id, or before
  stamps existed) is global, and so are slots, lessons, rules, mistake cards,
  profiles, proposals, actions and checkpoints: what agents share on purpose.

Who is asking is a property of the call, not of the record: every door runs its
operations through :func:`core.ops.runner.call` (and the CLI through ``run_op``), which
says who asks with :func:`asking`; a core read then asks :func:`viewer`. The
workbench calls core functions itself and never says who asks, so it sees
everything (it filters by agent on its own terms). An agent's door (``cli``,
``api``, ``mcp``, ``http``) with no agent id sees only global records: it cannot be
told apart from any other agent, so it is told nothing that belongs to one. A caller
that presents the store's curator key (a person: ``--curator-key FILE``,
``Memory(curator_key=...)``) sees everything.

A record another agent owns is *not found* (exit 2) by every door, worded as an id
that does not exist. What joins records follows them: a link is listed, made and
removed only by a caller that sees both its ends (:class:`core.domain.link_ops.Walls`,
which also keeps the context's sources to what the caller sees), a work item names
only a session its caller sees (:func:`check_session_named`), and the HTTP event
stream carries a reader only the history entries it may read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..base.errors import NotFound
from . import config

if TYPE_CHECKING:
    from ..storage.store import Store
    from .curator import Curator

SETTING = "isolation"
#: The doors agents call through; anything else (the workbench's ``tui``) sees all.
AGENT_DOORS = frozenset({"cli", "api", "mcp", "http"})

#: Who asks in this call: (actor, curator key given), or None (nobody said: sees all).
_ASKER: ContextVar[tuple[str, Curator | None] | None] = ContextVar("memwork_asker", default=None)


@contextmanager
def asking(actor: str, curator: Curator | None = None) -> Iterator[None]:
    """Run the block as ``actor`` (``cli:coder``), holding ``curator`` if one was given."""
    token = _ASKER.set((actor, curator))
    try:
        yield
    finally:
        _ASKER.reset(token)


def run_asking(
    actor: str, curator: Curator | None, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
) -> Any:
    """``fn(*args, **kwargs)`` run as :func:`asking` runs a block: what every operation
    does, without a generator's context manager around each call."""
    token = _ASKER.set((actor, curator))
    try:
        return fn(*args, **kwargs)
    finally:
        _ASKER.reset(token)


def agent_of(actor: str) -> str:
    """The agent id in an actor (``mcp:coder`` → ``coder``; ``cli`` → ``""``)."""
    return actor.partition(":")[2]


def is_on(store: Store) -> bool:
    """Whether the store isolates agents (call inside a read)."""
    return config.value(store, SETTING) == "agent"


def viewer(store: Store) -> str | None:
    """Whose records this call may read (call inside a read): None for everything, else
    the asking agent's id (``""`` for an agent's door with no agent id: global only)."""
    asked = _ASKER.get()
    if asked is None:
        return None
    actor, curator = asked
    if actor.partition(":")[0] not in AGENT_DOORS or not is_on(store):
        return None
    if curator is not None:
        from .curator import holds

        if holds(store, curator):
            return None
    return agent_of(actor)


def sees(view: str | None, owner: Any) -> bool:
    """Whether a caller that reads as ``view`` sees a record owned by ``owner``."""
    return view is None or not owner or owner == view


def sees_session(view: str | None, session: dict[str, Any] | None) -> bool:
    """Whether ``view`` sees a session (its observations, its working memory)."""
    return view is None or session is None or sees(view, session.get("agent_id"))


def owner_of_session(store: Store, session_id: str | None) -> str:
    """The agent a session belongs to (``""``: global, or no such session)."""
    if not session_id:
        return ""
    doc = store.docs("sessions").get(session_id)
    return str((doc or {}).get("agent_id") or "")


def check_session(store: Store, session: dict[str, Any], key: str) -> dict[str, Any]:
    """``session`` when this call sees it; else NotFound, worded as an unknown id."""
    if not sees_session(viewer(store), session):
        raise NotFound("session", key.strip())
    return session


def check_session_named(store: Store, session_id: str) -> None:
    """Refuse a write that names session ``session_id`` (an action's) unless this call
    sees that session: another agent's is *not found*, and so is an id no session has
    (else the two answers would tell another agent's session ids apart)."""
    view = viewer(store)
    if view is None:
        return
    doc = store.docs("sessions").get(session_id) if store.has_table("sessions") else None
    if doc is None or not sees(view, doc.get("agent_id")):
        raise NotFound("session", session_id)


def visible_episodes(store: Store, episode_ids: list[str]) -> list[str]:
    """``episode_ids`` (a rule's or a card's) without the episodes this call may not see
    (call inside a read): another agent's, while agents are isolated. An id no episode
    has any more stays (it names nobody's record)."""
    view = viewer(store)
    if view is None or not episode_ids:
        return episode_ids
    tables = [store.docs(name) for name in reversed(store.table_names("episodes"))]
    kept = []
    for episode_id in episode_ids:
        doc = next((docs[episode_id] for docs in tables if episode_id in docs), None)
        if doc is None or sees(view, doc.get("agent_id")):
            kept.append(episode_id)
    return kept


def check_episode(store: Store, episode: dict[str, Any], key: str) -> dict[str, Any]:
    """``episode`` when this call sees it; else NotFound, worded as an unknown id."""
    if not sees(viewer(store), episode.get("agent_id")):
        raise NotFound("episode", key.strip())
    return episode


def check_own_agent(store: Store, agent: str) -> None:
    """Refuse to start a session for another agent while agents are isolated (the
    session would be one the caller can no longer see, or a write into another's)."""
    view = viewer(store)
    if view is not None and agent and agent != view:
        from ..base.errors import InvalidInput

        own = f"your own agent id ({view})" if view else "empty: you have no agent id"
        raise InvalidInput("agent", f"must be {own} while isolation is agent (got {agent!r})")


def check_operator(store: Store, what: str) -> None:
    """Refuse an operator's tool that reaches every agent's records (``export``,
    ``checkpoint restore``) to an agent while agents are isolated; a person with the
    curator key may."""
    if viewer(store) is not None:
        from ..base.errors import Conflict

        raise Conflict(
            f"{what}: isolation is agent and {what} reaches every agent's records: "
            "give the store's curator key (--curator-key FILE) or use the workbench"
        )
