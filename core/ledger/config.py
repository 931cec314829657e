"""Store settings: a few switches that travel with the store, whatever its backend.

Settings live in one document of the store's own ``meta`` table (``meta/config``),
so a checkpoint, a copy to another backend or an export carries them, and
``memwork context`` reads them for free (it already reads ``meta``). Each key
has a fixed set of values and a default; a key never set reads as its default.

- ``review`` (``on``/``off``, default ``off``): while on, lesson adds and slot
  set/append/replace that come from agents become proposals waiting for a
  person (:mod:`core.services.review`).
- ``context_log`` (``on``/``off``, default ``off``): while on, every
  ``memwork context`` an agent asks for records which lessons and slots it
  injected (one audit entry each, action ``inject``), so the History pane can
  say when a record was put in front of an agent. Off by default because the
  context runs on every agent step and otherwise never writes.
- ``embedder`` (``off``/``wordllama``, default ``off``): when a search's words find
  fewer records than asked for, the records nearest its meaning by that embedder fill
  the rest (:mod:`core.services.recall.semantic`; ``MEMWORK_EMBEDDER`` overrides it).
- ``wm_default_ttl`` (``off`` or whole seconds, default ``off``): the TTL a
  working-memory key set without one gets (:func:`core.domain.working_memory.keys.set_key`).
- ``isolation`` (``shared``/``agent``, default ``shared``): with ``agent``, each agent
  reads only its own sessions, observations, working memory and episodes, plus what
  is global (:mod:`core.ledger.isolation`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base.errors import InvalidInput
from ..base.numbers import is_whole_number
from ..storage.store import Store

META = "meta"
DOC = "config"

#: key → (allowed values, default, one line of help).
SETTINGS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "review": (
        ("on", "off"),
        "off",
        "agents' lesson adds and slot edits wait for review as proposals",
    ),
    "context_log": (
        ("on", "off"),
        "off",
        "memwork context records which lessons and slots it injected (audit action inject)",
    ),
    "embedder": (
        ("off", "wordllama"),
        "off",
        "search fuses an embedder's similarities with BM25 (MEMWORK_EMBEDDER wins)",
    ),
    "wm_default_ttl": (
        ("off", "SECONDS"),
        "off",
        "the TTL of a working-memory key set without --ttl (off, or whole seconds)",
    ),
    "isolation": (
        ("shared", "agent"),
        "shared",
        "agent: each agent reads only its own sessions, observations, working memory and "
        "episodes, plus global records (slots, lessons, rules, cards, profiles)",
    ),
}
#: Settings that take a whole number (in this range) besides ``off``.
NUMERIC: dict[str, tuple[int, int]] = {"wm_default_ttl": (1, 100 * 365 * 24 * 3600)}


def _checked(key: str, new: Any) -> str:
    """``new`` as ``key`` stores it, or ``InvalidInput`` naming the allowed values."""
    text = new.strip().lower() if isinstance(new, str) else new
    if key in NUMERIC and isinstance(text, str) and text != "off":
        low, high = NUMERIC[key]
        if not is_whole_number(text) or not low <= int(text) <= high:
            raise InvalidInput(
                "value", f"{key} must be off or whole seconds from {low} to {high} (got {new!r})"
            )
        return str(int(text))
    values = SETTINGS[key][0]
    if text not in values or key in NUMERIC and text != "off":
        raise InvalidInput("value", f"{key} must be one of {', '.join(values)} (got {new!r})")
    return str(text)


def check_key(key: str) -> str:
    """A known setting, or ``InvalidInput`` naming ``key`` and the known ones."""
    if key not in SETTINGS:
        raise InvalidInput("key", f"must be one of {', '.join(sorted(SETTINGS))} (got {key!r})")
    return key


def stored(store: Store) -> dict[str, str]:
    """The settings written in the store (call inside ``store.reading()``); no defaults."""
    doc = store.docs(META).get(DOC) or {}
    return {k: str(v) for k, v in doc.items() if k in SETTINGS}


def value(store: Store, key: str) -> str:
    """The value of ``key``: what the store says, else the default (call inside a read)."""
    check_key(key)
    # Asked twice by every search: the one setting, not the dict of them all.
    doc = store.docs(META).get(DOC) or {}
    return str(doc[key]) if key in doc else SETTINGS[key][1]


def is_on(store: Store, key: str) -> bool:
    """Whether an on/off setting is on (call inside a read or a transaction)."""
    return value(store, key) == "on"


def seconds(store: Store, key: str) -> int | None:
    """A numeric setting's value in seconds, or None when it is off (inside a read)."""
    text = value(store, key)
    return None if text == "off" else int(text)


def get(store: Store, key: str) -> str:
    """The value of ``key`` (its own consistent read)."""
    with store.reading():
        return value(store, key)


def all_settings(store: Store) -> list[dict[str, Any]]:
    """Every setting: key, value, default, allowed values, whether it was set, what it does."""
    with store.reading():
        written = stored(store)
    return [
        {
            "key": key,
            "value": written.get(key, default),
            "default": default,
            "values": list(values),
            "set": key in written,
            "help": help_text,
        }
        for key, (values, default, help_text) in sorted(SETTINGS.items())
    ]


def get_op(store: Store, key: str) -> dict[str, str]:
    """The ``get_config`` operation: ``{"key", "value"}``."""
    key = check_key(key)
    return {"key": key, "value": get(store, key)}


def set_value(store: Store, key: str, new: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Set ``key`` to ``new`` (audited); returns ``{"key", "value", "previous"}``.

    Setting a key to the value it already has writes nothing.
    """
    check_key(key)
    new = _checked(key, new)
    from . import (
        audit,  # only writers need it: the context reads settings every step
    )

    with store.transaction():
        previous = value(store, key)
        if previous != new:
            doc = dict(store.docs(META).get(DOC) or {"id": DOC})
            doc[key] = new
            store.put(META, DOC, doc)
            audit.record(
                store,
                actor=actor,
                action="config",
                table=META,
                record_id=DOC,
                summary=f"config {key}: {previous} -> {new}",
                now=now,
            )
    return {"key": key, "value": new, "previous": previous}
