"""Rules: [WORKS]/[AVOID] derivation, the newest-N-active window, manual rules."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import ids
from ..base.clock import iso
from ..base.errors import InvalidInput
from ..base.text import ellipsize, one_line
from ..ledger import audit, isolation, links
from ..models.plain import (
    RULE_POLARITIES,
    RULE_SOURCES,
    RULE_TEXT_CAP,
    check_rule_scope,
)
from ..privacy import scrub
from ..storage import counters
from ..storage.store import Store
from ..storage.tables import rule_table
from . import readable, rule_archive

TABLE = "rules"
ACTIVE_PER_TASK = 10
ACTIVE_GLOBAL = 20
WORKS_AT = 0.85
AVOID_BELOW = 0.50


def table_for(scope: str) -> str:
    """The physical table that holds a scope's active rules."""
    return rule_table(scope)


def _archived(store: Store, scope: str) -> list[dict[str, Any]]:
    tables = rule_archive.tables(store, scope)
    return [r for n in tables for r in readable.docs(store, n).values() if r["scope"] == scope]


def _all_docs(store: Store) -> list[dict[str, Any]]:
    return [d for name in store.table_names(TABLE) for d in store.docs(name).values()]


def _find(store: Store, rule_id: str) -> tuple[str, dict[str, Any] | None]:
    """The table holding rule ``rule_id`` and the rule; active tables are looked at first.
    A wrong-typed rule is not found (:mod:`.readable`): no read or switch computes with it."""
    names = store.table_names(TABLE)
    archived = rule_archive.ARCHIVE + "."
    active = [n for n in names if not n.startswith(archived)]
    for name in (*active, *(n for n in names if n.startswith(archived))):
        rule = readable.docs(store, name).get(rule_id)
        if rule is not None:
            return name, rule
    return "", None


def _home_of(store: Store, rule: dict[str, Any]) -> str:
    """The physical table that holds ``rule`` now (its links live beside it)."""
    if rule.get("active", True):
        return table_for(rule["scope"])
    return _find(store, rule["id"])[0]


def with_episodes(store: Store, rule: dict[str, Any]) -> dict[str, Any]:
    """``rule`` with ``episode_ids``: the episodes its ``derived_from`` links name (those
    this call may see)."""
    found = links.with_episode_ids(store, _home_of(store, rule), [rule], links.DERIVED_FROM)[0]
    return {**found, "episode_ids": isolation.visible_episodes(store, found["episode_ids"])}


def task_scope(task_id: str) -> str:
    """``task:<task_id>``."""
    return f"task:{task_id}"


def active_limit(scope: str) -> int:
    """How many rules of a scope stay active."""
    return ACTIVE_GLOBAL if scope == "global" else ACTIVE_PER_TASK


def in_scope(store: Store, scope: str, *, active_only: bool = True) -> list[dict[str, Any]]:
    """Rules of one scope, oldest first (by ``seq``)."""
    rules = [r for r in readable.docs(store, table_for(scope)).values() if r["scope"] == scope]
    if not active_only:
        rules += _archived(store, scope)
    return sorted(rules, key=lambda r: r["seq"])


def all_rules(store: Store, *, active_only: bool = False) -> list[dict[str, Any]]:
    """Every rule: global first, then by scope, each oldest first, with the episodes that
    derived it (``episode_ids``, from its ``derived_from`` links; those this call sees)."""
    rules = []
    for name in store.table_names(TABLE):
        docs = [r for r in readable.docs(store, name).values() if r["active"] or not active_only]
        if docs:
            rules += links.with_episode_ids(store, name, docs, links.DERIVED_FROM)
    for rule in rules:  # copies already: keep only the episodes this call may see
        rule["episode_ids"] = isolation.visible_episodes(store, rule["episode_ids"])
    return sorted(rules, key=lambda r: (r["scope"] != "global", r["scope"], r["seq"]))


def polarity_of(text: str) -> str:
    """A rule's polarity from its prefix: [WORKS]/[HIGH SCORE …] works, [AVOID] avoid
    (after a consolidator's ``[CONSOLIDATED]``, if any)."""
    text = text.removeprefix("[CONSOLIDATED]").lstrip()
    if text.startswith(("[WORKS]", "[HIGH SCORE")):
        return "works"
    if text.startswith("[AVOID]"):
        return "avoid"
    return "note"


def derived_texts(score: float, successes: list[str], mistakes: list[str]) -> list[tuple[str, str]]:
    """(text, polarity) of the rules an episode implies.

    A rule holds at most 2,000 characters; a longer success or mistake (a stack
    trace, say) gives a rule cut with an ellipsis, while the episode keeps it whole.
    """
    if score >= WORKS_AT:
        return [(ellipsize(f"[WORKS] {s}", RULE_TEXT_CAP), "works") for s in successes]
    if score < AVOID_BELOW:
        return [(ellipsize(f"[AVOID] {m}", RULE_TEXT_CAP), "avoid") for m in mistakes]
    return []


def upsert(
    store: Store,
    text: str,
    scope: str,
    *,
    polarity: str,
    source: str,
    now: datetime,
    episode_ids: list[str] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """Add a rule unless it is already active; an inactive copy comes back as the newest.

    Returns the rule written (None when nothing changed) and what happened:
    ``added``, ``reactivated`` or ``unchanged``. ``episode_ids`` (the episodes
    proposing it) get ``derived_from`` links from the rule, even when it was already
    active: they are where its context line comes from (:mod:`core.services.context.sources`).
    """
    stamp = iso(now)
    table = table_for(scope)
    # A wrong-typed rule is not there for a write either: the sound copy is added beside it.
    for active in readable.docs(store, table).values():
        if active["text"] == text:
            links.note_episodes(
                store, links.DERIVED_FROM, active["id"], table, episode_ids or [], now
            )
            return None, "unchanged"
    same = rule_archive.copies(store, scope, text)
    if same:
        chunk, newest = max(same, key=lambda found: found[1]["seq"])
        rule = dict(newest)
        rule_archive.remove(store, chunk, rule["id"])
        links.rehome(store, rule["id"], chunk, table)
        rule.update(active=True, seq=counters.take(store, "rule_seq"), updated_at=stamp)
        outcome = "reactivated"
    else:
        rule = {
            "id": ids.new_id("rule"),
            "text": text,
            "scope": scope,
            "polarity": polarity,
            "source": source,
            "active": True,
            "seq": counters.take(store, "rule_seq"),
            "created_at": stamp,
            "updated_at": stamp,
        }
        outcome = "added"
    doc = _validated(rule)
    store.put(table, doc["id"], doc)
    links.note_episodes(store, links.DERIVED_FROM, doc["id"], table, episode_ids or [], now)
    return doc, outcome


_RULE_FIELDS = frozenset(
    (
        "id",
        "text",
        "scope",
        "polarity",
        "source",
        "active",
        "seq",
        "created_at",
        "updated_at",
    )
)


def _validated(rule: dict[str, Any]) -> dict[str, Any]:
    """The rule as the model would store it; pydantic only for one it would refuse or change.

    Recording an episode derives rules on every step; a rule built here that
    obeys every constraint of :class:`core.models.rule.Rule` is stored as is,
    anything else goes through the model for its exact verdict and message.
    """
    if (
        rule.keys() == _RULE_FIELDS
        and all(type(rule[k]) is str for k in ("id", "text", "scope", "created_at", "updated_at"))
        and 1 <= len(rule["text"]) <= RULE_TEXT_CAP
        and rule["polarity"] in RULE_POLARITIES
        and rule["source"] in RULE_SOURCES
        and type(rule["active"]) is bool
        and type(rule["seq"]) is int
        and rule["seq"] >= 0
    ):
        try:
            check_rule_scope(rule["scope"])
        except ValueError:
            pass
        else:
            return dict(rule)
    from ..models.base import validate
    from ..models.rule import Rule

    return validate(Rule, rule).to_doc()


def enforce_window(store: Store, scope: str, now: datetime) -> list[str]:
    """Deactivate all but the newest N active rules of ``scope``; return those deactivated."""
    active = in_scope(store, scope)
    overflow = active[: max(0, len(active) - active_limit(scope))]
    stamp = iso(now)
    if overflow:
        store.delete(table_for(scope), [r["id"] for r in overflow])
    for r in overflow:
        chunk = rule_archive.put(store, {**r, "active": False, "updated_at": stamp})
        links.rehome(store, r["id"], table_for(scope), chunk)  # its links go along
    return [r["id"] for r in overflow]


def derive_from_episode(store: Store, episode: dict[str, Any], now: datetime) -> list[str]:
    """Rules an episode implies, added to its task's scope (call inside a transaction)."""
    scope = task_scope(episode["task_id"])
    touched = []
    for text, polarity in derived_texts(
        episode["score"], episode.get("successes", []), episode.get("mistakes", [])
    ):
        doc, outcome = upsert(
            store,
            text,
            scope,
            polarity=polarity,
            source="derived",
            now=now,
            episode_ids=[episode["id"]],
        )
        if doc is not None:
            touched.append(doc["id"])
    if touched:
        enforce_window(store, scope, now)
    return touched


def add_rule(
    store: Store,
    text: str,
    *,
    now: datetime,
    actor: str,
    scope: str = "global",
    polarity: str | None = None,
    source: str = "manual",
) -> tuple[dict[str, Any], str]:
    """A manual rule; the polarity follows a ``[WORKS]``/``[AVOID]`` prefix unless given."""
    clean = one_line(scrub(text))
    if not clean:
        raise InvalidInput("text", "must not be empty")
    try:
        check_rule_scope(scope)
    except ValueError as exc:
        raise InvalidInput("scope", str(exc)) from None
    if polarity is None:
        polarity = polarity_of(clean)
    with store.transaction():
        doc, outcome = upsert(store, clean, scope, polarity=polarity, source=source, now=now)
        if doc is None:
            existing = [r for r in in_scope(store, scope) if r["text"] == clean][0]
            return existing, outcome
        enforce_window(store, scope, now)
        audit.record(
            store,
            actor=actor,
            action="add" if outcome == "added" else "reactivate",
            table=TABLE,
            record_id=doc["id"],
            summary=f"{outcome} rule ({scope}): {clean[:120]}",
            now=now,
        )
    return doc, outcome


def add_op(
    store: Store, text: str, *, now: datetime, actor: str, scope: str = "global"
) -> dict[str, Any]:
    """The ``add_rule`` operation: the rule with its ``outcome`` (added, unchanged or
    reactivated)."""
    doc, outcome = add_rule(store, text, now=now, actor=actor, scope=scope)
    with store.reading():
        return {**with_episodes(store, doc), "outcome": outcome}


def list_op(
    store: Store,
    *,
    all: bool = False,  # noqa: A002 - the CLI's flag
    scope: str | None = None,
) -> list[dict[str, Any]]:
    """The ``list_rules`` operation: active rules (every rule with ``all``), of one scope
    when ``scope`` is given."""
    with store.reading():
        docs = all_rules(store, active_only=not all)
    return [d for d in docs if d["scope"] == scope] if scope else docs


def activate(store: Store, rule_id: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Switch a rule on, as the newest of its scope."""
    return set_active(store, rule_id, True, now=now, actor=actor)


def deactivate(store: Store, rule_id: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Switch a rule off."""
    return set_active(store, rule_id, False, now=now, actor=actor)


def set_active(
    store: Store, rule_id: str, active: bool, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Switch a rule on (as the newest of its scope) or off by hand."""
    from ..base.errors import NotFound

    with store.transaction():
        table, found = _find(store, rule_id)
        if found is None:
            raise NotFound("rule", rule_id)
        rule = dict(found)
        if table.startswith(rule_archive.ARCHIVE + "."):
            rule_archive.remove(store, table, rule_id)
        else:
            store.delete(table, [rule_id])
        rule["active"] = active
        rule["updated_at"] = iso(now)
        if active:
            rule["seq"] = counters.take(store, "rule_seq")
            store.put(table_for(rule["scope"]), rule_id, rule)
            links.rehome(store, rule_id, table, table_for(rule["scope"]))
            enforce_window(store, rule["scope"], now)
        else:
            links.rehome(store, rule_id, table, rule_archive.put(store, rule))
        rule = with_episodes(store, rule)
        audit.record(
            store,
            actor=actor,
            action="activate" if active else "deactivate",
            table=TABLE,
            record_id=rule_id,
            summary=f"{'activated' if active else 'deactivated'}: {rule['text'][:120]}",
            now=now,
        )
    return rule
