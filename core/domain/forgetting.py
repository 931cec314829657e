"""Forgetting for good: a session, or single observations, taken out of the store.

Unlike ``lesson forget`` (soft, restorable), forgetting here is for privacy: what
an agent saw must be able to leave memory. ``forget_session`` deletes a session
with its observations and its working memory; ``forget_observations`` deletes
single observations. In one transaction, the data leaves:

- every table: the session record, its observations table, its working-memory
  table (keys, task, scratchpad, working-memory checkpoints), the actions made in
  the session (their titles and notes are what the agent was doing), and the links
  that start from or point to any of them (``links.observations.<session>`` whole;
  an action outside the session that waited for one no longer waits);
- the audit log's words: every entry about the forgotten records keeps its
  time, actor, action, table and record id (the *fact* that something was
  recorded, then forgotten) but its summary becomes ``[forgotten]``, so no title,
  summary, observation text or key name stays behind; the forget itself is
  audited without content;
- the search index: a folder store removes recall's index file
  (``<store>/cache/recall/``) as the commit that deletes text lands
  (core/storage/folder_backend.py), and a long-lived process's index follows the
  store's announced changes, dropping the deleted records;
- a folder store's write-ahead log: its older records hold the words until it is
  folded into the table files, so a forget folds it once it has committed;
- the quotes memwork itself made of a forgotten observation: a session summary that
  ``crystallize`` wrote without a model quotes its observations (after "Decided:",
  "Errors:", "Last:"), and so does the audit entry of that summary; each such quote,
  whole or cut short with an ellipsis, becomes ``[forgotten]`` (``quotes_blanked``);
- the next context: it reads the store as it is.

What it does not reach, and says so: store checkpoints keep their copies until
they are deleted (the answer lists the checkpoints taken since the session
started, ``checkpoints_may_hold``), a migration's backup folder beside the store
keeps its copy, and a Redis server keeps the old bytes in its append-only file
until it rewrites it (``BGREWRITEAOF``). Episodes that name the session keep
their ``session_id`` (an id, not what happened in it). Words written about an
observation in other words (a summary a model or a person wrote, a lesson) are their
own records: forget or edit those by themselves. A lesson that says a forgotten
observation word for word (``reflect`` writes some that way) is named in the answer
(``lessons_quoting``), for ``lesson delete``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import names
from ..base.clock import iso, parse_instant
from ..base.errors import InvalidInput, NotFound
from ..base.text import normalise, one_line
from ..ledger import audit, isolation, links
from ..storage import shards
from ..storage.store import Store
from ..storage.tables import physical_tables
from . import lessons, sessions

#: What a forgotten record's audit entries say instead of their summary.
FORGOTTEN = "[forgotten]"
#: Tables whose audit entries can hold a forgotten record's words.
_AUDITED = ("sessions", "observations", "working_memory", "actions")
#: The work items table (core.domain.actions; not imported: actions sit above sessions).
_ACTIONS = "actions"


def forget_links(store: Store, gone: set[str], dropped_homes: set[str]) -> int:
    """Remove every link from or to a record in ``gone`` (the link tables of
    ``dropped_homes`` go whole); returns how many links went."""
    count = 0
    for home in dropped_homes:
        name = links.table_of(home)
        if store.has_table(name):
            count += len(store.docs(name))
            store.drop(name)
    touching = links.touching(store, gone)
    links.delete(store, touching)
    return count + len(touching)


def redact_audit(
    store: Store,
    record_ids: set[str],
    quoted: dict[str, list[str]] | None = None,
    tables: tuple[str, ...] = _AUDITED,
) -> tuple[int, int]:
    """Blank the summaries of audit entries about ``record_ids`` in ``tables``, and in
    the entries about each session of ``quoted`` (session id → the contents of its
    observations being forgotten) the quotes of those contents, in one read of the
    whole log (privacy over speed); returns (entries blanked, entries whose quotes
    went)."""
    blanked = requoted = 0
    quoted = quoted or {}
    for name in shards.shard_names(store, audit.BASE):
        hits = {}
        for doc_id, doc in store.docs(name).items():
            record, said = doc.get("record_id"), doc.get("summary")
            if record in record_ids:
                if doc.get("table") in tables and said != FORGOTTEN:
                    hits[doc_id] = {**doc, "summary": FORGOTTEN}
                    blanked += 1
            elif record in quoted and isinstance(said, str):
                kept = _without_quotes(said, quoted[record])
                if kept != said:
                    hits[doc_id] = {**doc, "summary": kept}
                    requoted += 1
        if hits:
            store.put_many(name, hits)
    return blanked, requoted


#: Where a summary memwork writes quotes observations, one quote after each (the
#: heuristic summary of ``crystallize``: "Decided: a; b. Errors: c. Last: d").
_QUOTED_AFTER = ("Decided: ", "Errors: ", "Last: ", "; ")
#: A quote cut short with an ellipsis is taken for a forgotten observation's only when
#: it keeps at least this much of it (a few letters could begin anything).
_CUT_QUOTE_MIN = 12


def _quoted_length(rest: str, content: str) -> int:
    """How many characters at the start of ``rest`` quote ``content`` (one line), whole,
    cut short with an ellipsis or cut by the end of the text; 0 when they do not."""
    if content and rest.startswith(content):
        return len(content)
    if len(rest) >= _CUT_QUOTE_MIN and content.startswith(rest):
        return len(rest)  # the text ends inside the quote (an audit entry cut to its width)
    cut = rest.find("…")
    if cut >= _CUT_QUOTE_MIN and content.startswith(rest[:cut]):
        return cut + 1
    return 0


def _without_quotes(text: str, contents: list[str]) -> str:
    """``text`` with every quote of ``contents`` that follows one of the words a
    machine-written summary quotes after replaced by ``[forgotten]``."""
    flat = sorted({line for line in map(one_line, contents) if line}, key=len, reverse=True)
    for marker in _QUOTED_AFTER:
        at = text.find(marker)
        while at >= 0:
            start = at + len(marker)
            for content in flat:
                length = _quoted_length(text[start:], content)
                if length:
                    text = text[:start] + FORGOTTEN + text[start + length :]
                    break
            at = text.find(marker, start)
    return text


def _session_actions(store: Store, sid: str) -> set[str]:
    """The ids of the actions made in session ``sid``."""
    if not store.has_table(_ACTIONS):
        return set()
    return {key for key, doc in store.docs(_ACTIONS).items() if doc.get("session_id") == sid}


#: The prefix ``reflect`` puts before an error it turns into a lesson.
_AVOID = "Avoid: "


def lessons_quoting(store: Store, contents: list[str]) -> list[str]:
    """The lessons that say one of ``contents`` word for word, whole or cut short (as
    ``reflect`` writes an observation of a lesson's or an error's kind into a lesson):
    records of their own, which a forget leaves, and names so that a person can delete
    them too (``lesson delete``)."""
    said = [normalise(c) for c in contents if len(c.strip()) >= _CUT_QUOTE_MIN]
    if not said or not store.has_table(lessons.TABLE):
        return []
    found = []
    for lesson_id, doc in store.docs(lessons.TABLE).items():
        texts = [doc.get("content"), *(doc.get("wordings") or ())]
        for text in texts:
            if not isinstance(text, str):
                continue
            core = normalise(text.removeprefix(_AVOID).rstrip("…"))
            if len(core) >= _CUT_QUOTE_MIN and any(c.startswith(core) for c in said):
                found.append(lesson_id)
                break
    return sorted(found)


def checkpoints_since(store: Store, started_at: str) -> list[str]:
    """Checkpoints taken since ``started_at``: they may hold copies of what was forgotten."""
    start = parse_instant(started_at)
    found = []
    for doc in store.docs("checkpoints").values() if store.has_table("checkpoints") else ():
        try:
            taken = parse_instant(doc["created_at"])
        except (KeyError, ValueError):
            taken = start
        if taken >= start:
            found.append(doc["id"])
    return sorted(found)


def forget_session(store: Store, session: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Delete a session with its observations and working memory, everywhere but in
    checkpoints (see the module); returns what was forgotten."""
    with store.transaction():
        found = sessions.find_named(store, session)
        if found is None:
            raise NotFound("session", session.strip())
        sid = found["id"]
        obs_table = sessions.observations_table(sid)
        wm_table = f"{sessions.WORKING_MEMORY}.{sid}"
        held = store.docs(obs_table) if store.has_table(obs_table) else {}
        observation_ids = set(held)
        quoting = lessons_quoting(store, [str(o.get("content") or "") for o in held.values()])
        wm_ids = set(store.docs(wm_table)) if store.has_table(wm_table) else set()
        dropped = [name for name in (obs_table, wm_table) if store.has_table(name)]
        for name in dropped:
            store.drop(name)
        store.delete(sessions.TABLE, [sid])
        action_ids = _session_actions(store, sid)
        if action_ids:
            store.delete(_ACTIONS, sorted(action_ids))
        gone = {sid, *observation_ids, *action_ids}
        link_count = forget_links(store, gone, {obs_table})
        redacted, _ = redact_audit(store, {*gone, *wm_ids})
        audit.record(
            store,
            actor=actor,
            action="forget",
            table=sessions.TABLE,
            record_id=sid,
            summary=(
                f"forgot session {sid}: {len(observation_ids)} observations, working memory, "
                f"{len(action_ids)} actions, {link_count} links; {redacted} audit entries "
                "blanked"
            ),
            now=now,
        )
        holding = checkpoints_since(store, found.get("started_at") or iso(now))
        store.fold_log()  # the log's older records hold the words until it is folded
    return {
        "kind": "session",
        "id": sid,
        "observations": len(observation_ids),
        "working_memory": bool(wm_ids),
        "actions": len(action_ids),
        "links": link_count,
        "audit_entries_blanked": redacted,
        "lessons_quoting": quoting,
        "checkpoints_may_hold": holding,
    }


def _observation_table(store: Store, ref: str) -> tuple[str, str]:
    """(table, observation id) of an observation named ``<session>/<id>`` or by its id."""
    key = ref.strip()
    if not key:
        raise InvalidInput("observation", "must name an observation (obs_… or <session>/obs_…)")
    if "/" in key:
        session, _, obs_id = key.partition("/")
        found = sessions.find_named(store, session)
        if found is None:
            raise NotFound("session", session)
        table = sessions.observations_table(found["id"])
        if store.has_table(table) and obs_id in store.docs(table):
            return table, obs_id
        raise NotFound("observation", key)
    view = isolation.viewer(store)
    for name in physical_tables(store.table_names("observations"), "observations"):
        if key in store.docs(name):
            owner = isolation.owner_of_session(store, name.partition(".")[2])
            if not isolation.sees(view, owner):
                break  # another agent's, while agents are isolated: not found
            return name, key
    raise NotFound("observation", key)


def forget_observations(
    store: Store, observations: list[str], *, now: datetime, actor: str
) -> dict[str, Any]:
    """Delete single observations (ids, or ``<session>/<id>``), everywhere but in
    checkpoints; every one must exist or nothing is deleted. Returns what was forgotten."""
    wanted = [o for o in observations if isinstance(o, str)]
    if not wanted:
        raise InvalidInput("observations", "name at least one observation")
    with store.transaction():
        by_table: dict[str, set[str]] = {}
        for ref in wanted:
            table, obs_id = _observation_table(store, ref)
            by_table.setdefault(table, set()).add(obs_id)
        gone: set[str] = set()
        started: list[str] = []
        quotes = 0
        quoted: dict[str, list[str]] = {}  # session → the contents forgotten from it
        for table, obs_ids in by_table.items():
            sid = table.split(".", 1)[1]
            names.check_id(sid, "session")
            held = store.docs(table)
            quoted[sid] = [str(held[o].get("content") or "") for o in obs_ids if o in held]
            store.delete(table, sorted(obs_ids))
            session = dict(store.docs(sessions.TABLE)[sid])
            summary = session.get("summary")
            if isinstance(summary, str) and summary:
                # crystallize's summary quotes observations (its audit entry: below)
                session["summary"] = _without_quotes(summary, quoted[sid])
                quotes += session["summary"] != summary
            session["observation_count"] = len(store.docs(table))
            session["forgotten_observations"] = int(session.get("forgotten_observations", 0)) + len(
                obs_ids
            )
            session["updated_at"] = iso(now)
            store.put(sessions.TABLE, sid, session)
            started.append(session.get("started_at") or iso(now))
            gone |= obs_ids
        link_count = forget_links(store, gone, set())
        quoting = lessons_quoting(store, [text for texts in quoted.values() for text in texts])
        redacted, requoted = redact_audit(store, gone, quoted)
        quotes += requoted
        for obs_id in sorted(gone):
            audit.record(
                store,
                actor=actor,
                action="forget",
                table="observations",
                record_id=obs_id,
                summary=f"forgot observation {obs_id}",
                now=now,
            )
        holding = checkpoints_since(store, min(started))
        store.fold_log()  # the log's older records hold the words until it is folded
    return {
        "kind": "observation",
        "ids": sorted(gone),
        "observations": len(gone),
        "links": link_count,
        "audit_entries_blanked": redacted,
        "quotes_blanked": quotes,
        "lessons_quoting": quoting,
        "checkpoints_may_hold": holding,
    }


def forget(store: Store, kind: str, id: str, *, now: datetime, actor: str) -> dict[str, Any]:  # noqa: A002
    """The ``forget`` operation: a session (``kind="session"``) or an observation."""
    if kind == "session":
        return forget_session(store, id, now=now, actor=actor)
    if kind == "observation":
        return forget_observations(store, [id], now=now, actor=actor)
    raise InvalidInput("kind", f"must be one of session, observation (got {kind!r})")
