"""Sessions (one run of an agent) and the observations made inside them.

A session's observations live in their own physical table,
``observations.<session_id>``, so logging one costs the size of that session,
never the size of the store. Each session keeps at most ``max_observations``
(default 500): past it the oldest are dropped and counted in
``dropped_observations`` (and observations forgotten for good in
``forgotten_observations``, :mod:`core.domain.forgetting`), so the three together are
always the number of observations ever logged.
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..base import ids, lookup, names
from ..base.clock import iso, parse_instant
from ..base.errors import Conflict, InvalidInput
from ..base.text import one_line
from ..ledger import audit, isolation
from ..models.plain_session import plain_observation, plain_session
from ..privacy import scrub
from ..storage.store import Store
from . import observation_seqs, readable

TABLE = "sessions"
OBSERVATIONS = "observations"
WORKING_MEMORY = "working_memory"


def observations_table(session_id: str) -> str:
    """The physical table that holds a session's observations.

    The session id becomes part of a file name, so it must pass the naming rule.
    """
    return f"{OBSERVATIONS}.{names.check_id(session_id, 'session')}"


def cap_of_new_session() -> int:
    """How many observations a session started now keeps (``MEMWORK_MAX_OBS_PER_SESSION``,
    else 500; a bad value is refused naming the variable)."""
    from ..base.env_settings import max_observations

    return max_observations()


# -- pure rules ------------------------------------------------------------------------
def view(session: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The record plus computed fields: ``total_observed`` and ``duration_seconds``.

    ``duration_seconds`` runs to ``ended_at``, or to ``now`` for an active session
    (None when no clock is given).
    """
    end: datetime | None = None
    if session.get("ended_at"):
        end = parse_instant(session["ended_at"])
    elif now is not None:
        end = now
    duration = None
    if end is not None:
        duration = max(0.0, (end - parse_instant(session["started_at"])).total_seconds())
    return {
        **session,
        "implicit": bool(session.get("implicit", False)),
        "total_observed": int(session["observation_count"])
        + int(session["dropped_observations"])
        + int(session.get("forgotten_observations", 0)),
        "duration_seconds": duration,
    }


# -- reads ----------------------------------------------------------------------------
def visible(store: Store) -> Mapping[str, dict[str, Any]]:
    """The sessions this call may read, by id (every one unless agents are isolated,
    :mod:`core.ledger.isolation`), a wrong-typed one left out (:mod:`.readable`); call
    inside a read."""
    docs = readable.docs(store, TABLE)
    view = isolation.viewer(store)
    if view is None:
        return docs
    return {k: d for k, d in docs.items() if isolation.sees(view, d.get("agent_id"))}


def resolve(store: Store, key: str) -> dict[str, Any]:
    """A session by id or unique id prefix (>= 4 characters); call inside a read.

    Another agent's session, while agents are isolated, is not found."""
    return lookup.resolve(visible(store), key, "session", field="session")


def find_named(store: Store, key: str) -> dict[str, Any] | None:
    """The session an agent names, or None (call inside a read or a transaction).

    The id itself wins. A start or end of an id is accepted only for ids memwork
    made (``ses_…``): an agent's own ids are taken whole, so ``run-4`` never
    lands in ``run-42``. Another agent's session, while agents are isolated, is not
    found (:class:`NotFound`, not None: its id is taken).
    """
    docs = store.docs(TABLE)
    key = key.strip()
    if key in docs:
        wrong = readable.problem(TABLE, docs[key])
        if wrong is not None:  # never written over, nor computed with: a person fixes it
            raise Conflict(f"session {key} is not readable ({wrong}; memwork doctor names it)")
        # Another agent's session is not found, and never created again over it.
        return dict(isolation.check_session(store, docs[key], key))
    minted = {k: d for k, d in visible(store).items() if not d.get("implicit")}
    return lookup.find(minted, key, "session", field="session")


def session_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` as a stored session: checked by the session model, which is built only
    when the plain check (:mod:`core.models.plain_session`) cannot vouch for it."""
    saved = plain_session(doc)
    if saved is None:
        from ..models.base import validate
        from ..models.session import Session

        saved = validate(Session, doc).to_doc()
    return saved


def observation_doc(doc: Mapping[str, Any]) -> dict[str, Any]:
    """``doc`` as a stored observation (see :func:`session_doc`)."""
    saved = plain_observation(doc)
    if saved is None:
        from ..models.base import validate
        from ..models.session import Observation

        saved = validate(Observation, doc).to_doc()
    return saved


def check_named_id(key: str) -> str:
    """An id an agent may name to create a session (:func:`core.base.names.check_id`).

    The id becomes part of table and file names, so anything else is refused.
    """
    return names.check_id(key, "session", "a new session id")


def ensure_session(store: Store, key: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """The session ``key`` names, created (marked ``implicit``) when it does not exist.

    An agent's session id is all it has: working memory and observations accept
    any well-formed id. Call inside a transaction; a write that then fails takes
    the new session back with it.
    """
    found = find_named(store, key)
    if found is not None:
        return found
    sid = check_named_id(key.strip())
    stamp = iso(now)
    agent = actor.split(":", 1)[1] if ":" in actor else ""
    doc = {
        "id": sid,
        "agent_id": agent,
        "project": "",
        "title": "",
        "started_at": stamp,
        "ended_at": None,
        "status": "active",
        "summary": "",
        "observation_count": 0,
        "dropped_observations": 0,
        "max_observations": cap_of_new_session(),
        "forgotten_observations": 0,
        "implicit": True,
        "created_at": stamp,
        "updated_at": stamp,
    }
    saved = session_doc(doc)
    store.put(TABLE, sid, saved)
    _audit(store, actor, "start", TABLE, sid, f"start session {sid} (implicit: first use)", now)
    return dict(saved)


def list_sessions(store: Store, now: datetime | None = None) -> list[dict[str, Any]]:
    """Every session (this call may read) with computed fields, newest first (by start,
    then id)."""
    with store.reading():
        docs = list(visible(store).values())
    docs.sort(key=lambda d: (d["started_at"], d["id"]), reverse=True)
    return [view(d, now) for d in docs]


def get_session(store: Store, key: str, now: datetime | None = None) -> dict[str, Any]:
    """One session (id or unique prefix) with computed fields."""
    with store.reading():
        return view(resolve(store, key), now)


def observations(store: Store, session_id: str) -> list[dict[str, Any]]:
    """A session's retained observations, oldest first (NotFound for an unknown session)."""
    with store.reading():
        session = resolve(store, session_id)
        docs = list(readable.docs(store, observations_table(session["id"])).values())
    return sorted((dict(d) for d in docs), key=lambda d: (d["seq"], d["id"]))


# -- writes ---------------------------------------------------------------------------
def _audit(
    store: Store, actor: str, action: str, table: str, record_id: str, summary: str, now: datetime
) -> None:
    audit.record(
        store,
        actor=actor,
        action=action,
        table=table,
        record_id=record_id,
        summary=summary,
        now=now,
    )


def start_session(
    store: Store,
    *,
    agent_id: str = "",
    project: str = "",
    title: str = "",
    now: datetime,
    actor: str,
    max_observations: int | None = None,
    session_id: str | None = None,
) -> dict[str, Any]:
    """Start a session (``session_id``: a checked id of the caller's, else a new one);
    returns it with computed fields."""
    stamp = iso(now)
    doc = {
        "id": session_id or ids.new_id("ses"),
        "agent_id": agent_id.strip(),
        # Project names are often paths (/home/<user>/…): scrubbed like any agent text.
        "project": scrub(project).strip(),
        "title": scrub(title).strip(),
        "started_at": stamp,
        "status": "active",
        "max_observations": cap_of_new_session() if max_observations is None else max_observations,
        "created_at": stamp,
        "updated_at": stamp,
    }
    saved = session_doc(doc)
    with store.transaction():
        store.put(TABLE, saved["id"], saved)
        label = saved["title"] or saved["project"] or saved["agent_id"] or "untitled"
        _audit(store, actor, "start", TABLE, saved["id"], f"start session: {one_line(label)}", now)
    return view(saved, now)


def start_op(
    store: Store,
    *,
    agent: str = "",
    project: str = "",
    title: str = "",
    session: str | None = None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """The ``start_session`` operation: the agent defaults to the caller's own agent id
    (``cli:coder`` starts sessions for ``coder``). ``session``: an id of the caller's own
    (:func:`start_named`)."""
    agent_id = agent or actor.partition(":")[2]
    with store.reading():
        isolation.check_own_agent(store, agent_id)
    if session is not None:
        return start_named(
            store, session, agent_id=agent_id, project=project, title=title, now=now, actor=actor
        )
    return start_session(
        store, agent_id=agent_id, project=project, title=title, now=now, actor=actor
    )


def start_named(
    store: Store,
    key: str,
    *,
    agent_id: str = "",
    project: str = "",
    title: str = "",
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Start the session with the caller's own id ``key`` (an agent's ``run-42``), so that
    it can have a project and an agent, and so the keys they share, like a minted one.

    - No session has that id: it is started with it (not implicit).
    - Working memory or an observation already made it (implicit): it is adopted: it takes
      the agent, project and title given, stops being implicit, keeps what it holds.
    - It was started already: the same call again (same agent and project, or none given)
      returns it unchanged; a different agent or project is a Conflict naming the field.
    """
    sid = check_named_id(key.strip())
    wanted = {"agent_id": agent_id.strip(), "project": scrub(project).strip()}
    with store.transaction():
        docs = store.docs(TABLE)
        found = docs.get(sid)
        if found is not None:
            isolation.check_session(store, dict(found), sid)
        if found is not None and not found.get("implicit"):
            for field, value in wanted.items():
                if value and value != found.get(field):
                    name = "agent" if field == "agent_id" else field
                    raise Conflict(
                        f"session {sid} was started with {name} {found.get(field)!r} "
                        f"(not {value!r}): a session keeps its {name}"
                    )
            return view(dict(found), now)
        if found is None:
            saved = start_session(
                store,
                agent_id=agent_id,
                project=project,
                title=title,
                now=now,
                actor=actor,
                session_id=sid,
            )
            return saved
        doc = dict(found)
        if doc.get("agent_id") and wanted["agent_id"] and doc["agent_id"] != wanted["agent_id"]:
            raise Conflict(
                f"session {sid} belongs to agent {doc['agent_id']!r} (not "
                f"{wanted['agent_id']!r}): a session keeps its agent"
            )
        doc["agent_id"] = doc.get("agent_id") or wanted["agent_id"]
        doc["project"] = wanted["project"]
        doc["title"] = scrub(title).strip()
        doc["implicit"] = False
        doc["updated_at"] = iso(now)
        saved = session_doc(doc)
        store.put(TABLE, sid, saved)
        label = saved["title"] or saved["project"] or saved["agent_id"] or "untitled"
        _audit(store, actor, "start", TABLE, sid, f"start session: {one_line(label)}", now)
    return view(saved, now)


def show(
    store: Store,
    key: str,
    now: datetime | None = None,
    *,
    order: str = "oldest",
    limit: int | None = None,
) -> dict[str, Any]:
    """One session with its observations (``session show --json``): oldest first, or
    newest first (``order="newest"``, a timeline); ``limit`` keeps the newest N."""
    if order not in ("oldest", "newest"):
        raise InvalidInput("order", f"must be one of oldest, newest (got {order!r})")
    if limit is not None and limit < 1:
        raise InvalidInput("limit", f"must be >= 1 (got {limit})")
    with store.reading():
        session = get_session(store, key, now)
        found = observations(store, session["id"])
    if limit is not None:
        found = found[-limit:]
    if order == "newest":
        found.reverse()
    return {**session, "observations": found}


def end_session(
    store: Store, session_id: str, *, summary: str = "", now: datetime, actor: str
) -> dict[str, Any]:
    """End an active session (Conflict when it has already ended)."""
    text = scrub(summary).strip()
    with store.transaction():
        session = resolve(store, session_id)
        if session["status"] == "ended":
            raise Conflict(f"session {session['id']} already ended at {session['ended_at']}")
        session.update(status="ended", ended_at=iso(now), summary=text, updated_at=iso(now))
        saved = session_doc(session)
        store.put(TABLE, saved["id"], saved)
        note = f": {one_line(text)[:120]}" if text else ""
        _audit(store, actor, "end", TABLE, saved["id"], f"end session{note}", now)
    return view(saved, now)


def summarize(
    store: Store, session: str, summary: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Set a session's summary, leaving it active or ended as it is (``crystallize`` writes
    one from the observations; a person may write their own)."""
    text = scrub(summary).strip()
    if not text:
        raise InvalidInput("summary", "must not be empty")
    with store.transaction():
        found = resolve(store, session)
        found.update(summary=text, updated_at=iso(now))
        saved = session_doc(found)
        store.put(TABLE, saved["id"], saved)
        _audit(
            store, actor, "summarize", TABLE, saved["id"], f"summary: {one_line(text)[:120]}", now
        )
    return view(saved, now)


def _clean_tags(tags: list[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for tag in tags or []:
        cleaned = scrub(str(tag)).strip()
        if cleaned:
            seen.setdefault(cleaned, None)
    return list(seen)


_SEQ = operator.itemgetter("seq")


def _seqs(docs: Mapping[str, dict[str, Any]]) -> list[int]:
    """Every observation's ``seq``, in the table's order. A full session (500) is
    scanned on every observe, under the store's lock: C-level loops, not Python ones."""
    seqs = list(map(_SEQ, docs.values()))
    if set(map(type, seqs)) <= {int}:
        return seqs
    return [int(seq) for seq in seqs]


def _oldest(docs: Mapping[str, dict[str, Any]], seqs: list[int], count: int) -> list[str]:
    """The ids of the ``count`` oldest observations (by ``seq``, then id); ``seqs`` is
    :func:`_seqs` of ``docs``. A full session drops one on every call: that one is
    found without a sort or a Python-level loop."""
    if count == 1:
        first = min(seqs)
        if seqs.count(first) == 1:
            return [list(docs)[seqs.index(first)]]
    oldest = heapq.nsmallest(count, docs.values(), key=lambda d: (int(d["seq"]), d["id"]))
    return [d["id"] for d in oldest]


def observe(
    store: Store,
    session_id: str,
    text: str,
    *,
    kind: str = "note",
    tags: list[str] | None = None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Log an observation; returns it plus ``dropped`` (oldest dropped by this call).

    Observing into an ended session is allowed (agents flush logs late); such
    observations are marked ``after_end``. An id no session has yet creates one
    (marked ``implicit``), as working memory does.
    """
    content = scrub(text).strip()
    if not content:
        raise InvalidInput(
            "content", "must not be empty (<private>…</private> parts are removed first)"
        )
    cap_of_new_session()  # a bad MEMWORK_MAX_OBS_PER_SESSION is said where it matters
    stamp = iso(now)
    # Made before the lock is taken: the other writers wait only for what needs it.
    obs_id = ids.new_id("obs")
    clean_kind = scrub(kind).strip()
    clean_tags = _clean_tags(tags)
    with store.transaction():
        session = ensure_session(store, session_id, now=now, actor=actor)
        table = observations_table(session["id"])
        docs = store.docs(table)
        overflow = len(docs) + 1 - int(session["max_observations"])
        # The numbers kept between calls where the store can say what changed (a full
        # session's notes are otherwise all read on every call, under the lock).
        kept = observation_seqs.last_and_oldest(store, table, docs) if overflow <= 1 else None
        seqs = _seqs(docs) if kept is None else None
        last = max(seqs, default=0) if seqs is not None else kept[0]  # type: ignore[index]
        total = (
            int(session["observation_count"])
            + int(session["dropped_observations"])
            + int(session.get("forgotten_observations", 0))
        )
        doc = {
            "id": obs_id,
            "session_id": session["id"],
            "kind": clean_kind,
            "content": content,
            "tags": clean_tags,
            "seq": max(last, total) + 1,
            "after_end": session["status"] == "ended",
            "created_at": stamp,
            "updated_at": stamp,
        }
        saved = observation_doc(doc)  # before the first write
        dropped: list[str] = []
        if overflow > 0:
            if kept is not None and kept[1] is not None:
                dropped = [kept[1]]  # (kept only when one note goes)
            else:
                dropped = _oldest(docs, seqs if seqs is not None else _seqs(docs), overflow)
        store.put(table, saved["id"], saved)
        store.delete(table, dropped)
        session["observation_count"] = len(store.docs(table))
        session["dropped_observations"] = int(session["dropped_observations"]) + len(dropped)
        session["updated_at"] = stamp
        store.put(TABLE, session["id"], session_doc(session))
        summary = f"observe {saved['kind']}: {one_line(content)[:120]}"
        if dropped:
            summary += f" (dropped {len(dropped)} oldest)"
        _audit(store, actor, "observe", OBSERVATIONS, saved["id"], summary, now)
    return {**saved, "dropped": len(dropped)}
