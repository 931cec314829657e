"""Reading any record whole by the id a search names it by (the ``get_record`` operation).

A search hit is ``{kind, id, title, score}``; its id leads here. Ids memwork
makes say their kind (``les_``, ``ep_``, ``rule_``, ``card_``, ``slot_``,
``ses_``, ``prop_``, ``obs_``); records inside a session are named
``<session>/<rest>`` (an observation ``<session>/obs_…``, working memory
``<session>/<key>``, ``<session>/task``, ``<session>/scratch/<n>``); a
checkpoint is a uuid; an import is ``imp_…`` (its report, with the note it kept);
a Letta agent an import brought is ``letta:<name or id>`` (its name, system prompt,
blocks); an agent's own session id (``run-42``) and a slot's label are taken as
they are. Each record comes back as the operation that
shows its kind returns it (a lesson with its computed fields, a session with
its observations, a slot with its size).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..base import lookup
from ..base.errors import InvalidInput, NotFound
from ..base.numbers import is_whole_number
from ..domain import cards, episodes, lessons, readable, rules, sessions, slots
from ..domain.working_memory import keys as wm_keys
from ..domain.working_memory import scratchpad as wm_scratchpad
from ..domain.working_memory import task as wm_task
from ..ledger import isolation
from ..storage.store import Store
from ..storage.tables import physical_tables
from . import checkpoints, review
from .interop import letta_agents

Doc = dict[str, Any]

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-", re.IGNORECASE)
_PREFIXES = {
    "les_": "lesson",
    "ep_": "episode",
    "rule_": "rule",
    "card_": "card",
    "slot_": "slot",
    "ses_": "session",
    "prop_": "proposal",
    "obs_": "observation",
}


def get_record(store: Store, id: str, *, now: datetime) -> Doc:  # noqa: A002 - the field's name
    """``{"kind", "id", "record"}`` for the record ``id`` names (see the module)."""
    key = id.strip() if isinstance(id, str) else ""
    if not key:
        raise InvalidInput("id", "must name a record (a search hit's id)")
    with store.reading():
        kind, record, ref = _find(store, key, now)
    return {"kind": kind, "id": ref, "record": record}


def _find(store: Store, key: str, now: datetime) -> tuple[str, Doc, str]:
    if key.startswith(letta_agents.PREFIX):
        agent = letta_agents.find(store, key)
        return "letta_agent", agent, letta_agents.PREFIX + str(agent.get("id") or agent["name"])
    if key.startswith("imp_"):
        found = store.docs("imports").get(key)
        if found is None:
            raise NotFound("import", key)
        return "import", dict(found), key
    if "/" in key:
        return _in_session(store, key, now)
    if key.startswith("#") or is_whole_number(key):
        found = episodes.get_episode(store, key)
        return "episode", found, found["id"]
    kind = next((k for prefix, k in _PREFIXES.items() if key.startswith(prefix)), None)
    if kind is not None:
        record = _by_kind(store, kind, key, now)
        return kind, record, str(record.get("id", key))
    if _UUID.match(key):
        found = checkpoints.resolve(store, key)
        return "checkpoint", found, found["id"]
    if key in store.docs(sessions.TABLE):
        return "session", sessions.show(store, key, now), key
    try:
        slot = slots.get_slot(store, key)
    except (NotFound, InvalidInput):
        raise NotFound("record", key) from None
    return "slot", slot, slot["id"]


def _by_kind(store: Store, kind: str, key: str, now: datetime) -> Doc:
    if kind == "lesson":
        return lessons.get_lesson(store, key, now)
    if kind == "episode":
        return episodes.get_episode(store, key)
    if kind == "rule":
        _, rule = rules._find(store, key)
        if rule is None:
            raise NotFound("rule", key)
        return rules.with_episodes(store, dict(rule))
    if kind == "card":
        return cards.resolve(store, key)
    if kind == "slot":
        found = lookup.resolve(store.docs(slots.TABLE), key, "slot")
        return slots.get_slot(store, found["label"])
    if kind == "session":
        return sessions.show(store, key, now)
    if kind == "proposal":
        return review.get_proposal(store, key, now)
    for name in physical_tables(store.table_names("observations"), "observations"):
        observation = readable.docs(store, name).get(key)
        if observation is not None and _seen(store, observation):
            return dict(observation)
    raise NotFound("observation", key)


def _seen(store: Store, observation: Doc) -> bool:
    """Whether this call sees an observation (its session's agent's, while isolated)."""
    owner = isolation.owner_of_session(store, observation.get("session_id"))
    return isolation.sees(isolation.viewer(store), owner)


def _in_session(store: Store, key: str, now: datetime) -> tuple[str, Doc, str]:
    session, _, rest = key.partition("/")
    if rest.startswith("obs_"):
        table = sessions.observations_table(session)
        found = readable.docs(store, table).get(rest) if store.has_table(table) else None
        if found is None or not _seen(store, found):
            raise NotFound("observation", key)
        return "observation", dict(found), key
    if rest == "task":
        task = wm_task.get_task(store, session)
        if task is not None:
            return "wm", {"session_id": session, "task": task}, key
    number = rest.removeprefix("scratch/")
    if number != rest and is_whole_number(number):
        entries = wm_scratchpad.scratch_list(store, session)
        if not 1 <= int(number) <= len(entries):
            raise NotFound("scratchpad entry", key)
        return "wm", {"session_id": session, **entries[int(number) - 1]}, key
    entry = wm_keys.get_key(store, session, rest, now=now)
    return "wm", {"session_id": session, **entry}, key
