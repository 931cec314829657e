"""Working-memory keys shared above the session: ``project:<P>`` and ``agent:<A>`` scopes.

A session, the agent instance running it and its project nest. A key set with a
scope is seen by every session whose ``project`` (or ``agent_id``) is that scope's
name; a read from a session resolves the session's own key first, then its agent's
scope, then its project's (the nearest wins, so a session's own key always does).
Every answer about a key says where it came from: ``scope`` is ``"session"`` for the
session's own keys, else the scope it was inherited from.

Each scope is one document (id: the scope) in the ``wm_scopes`` table, holding keys
exactly as a session's state does (:mod:`.state`): the same key rules,
TTLs, ``wm_default_ttl`` and lazy expiry (an expired key is invisible at once and
purged by the next write to that scope). Deleting or clearing a scope acts on that
scope only; a session's delete or clear never touches what it inherits.

These are the run functions of the key operations (``wm set/get/delete/list/keys/
exists/get-all/clear/stats``): without ``scope`` they act on the session, with it on
the scope (the session, when given too, is not needed and not touched).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Any

import orjson

from ...base.clock import iso
from ...base.errors import InvalidInput, NotFound
from ...ledger import isolation
from ...models.base import validate
from ...models.limits import check_json
from ...models.working_memory import WMScope
from ...privacy import identifier_problem, scrub_under
from ...storage.store import Store
from .. import sessions
from . import keys as session_keys
from . import overview
from .state import audit_change, check_key, check_ttl, entry_view, is_expired, stored_state

TABLE = "wm_scopes"
#: The kinds of scope above a session, nearest first.
KINDS = ("agent", "project")
SESSION = "session"
SCOPE_RULE = "must be project:<project> or agent:<agent>"


# -- rules ------------------------------------------------------------------------------
def check_scope(scope: object) -> str:
    """``scope`` when it is ``project:<name>`` or ``agent:<name>``, else InvalidInput."""
    if not isinstance(scope, str):
        raise InvalidInput("scope", f"{SCOPE_RULE} (got {scope!r})")
    kind, sep, name = scope.partition(":")
    shown = scope if len(scope) <= 60 else scope[:57] + "..."
    if not sep or kind not in KINDS or not name.strip():
        raise InvalidInput("scope", f"{SCOPE_RULE} (got {shown!r})")
    if name != name.strip():
        raise InvalidInput(
            "scope", f"{SCOPE_RULE}, without spaces around the {kind} (got {shown!r})"
        )
    problem = identifier_problem(name)
    if problem:
        raise InvalidInput("scope", f"{SCOPE_RULE}; the {kind} {problem}")
    return scope


def _who(store: Store, session: str | None, scope: str | None) -> tuple[str | None, str | None]:
    """The session or the scope a call acts on; one of them is needed. While agents are
    isolated, an ``agent:<A>`` scope is agent A's working memory: another agent's call
    finds no such scope (a project's keys are shared, like its profile)."""
    if scope is not None:
        check_scope(scope)
        kind, _, name = scope.partition(":")
        if kind == "agent":
            with store.reading():
                view = isolation.viewer(store)
            if not isolation.sees(view, name):
                raise NotFound("working-memory scope", scope)
        return None, scope
    if session is None or not str(session).strip():
        raise InvalidInput(
            "session", f"is required (or give scope: {SCOPE_RULE.removeprefix('must be ')})"
        )
    return session, None


def session_scopes(session_doc: dict[str, Any] | None) -> list[str]:
    """The scopes a session inherits from, nearest first (its agent's, then its project's)."""
    if session_doc is None:
        return []
    found = []
    agent = str(session_doc.get("agent_id") or "").strip()
    project = str(session_doc.get("project") or "").strip()
    if agent:
        found.append(f"agent:{agent}")
    if project:
        found.append(f"project:{project}")
    return found


def _live(kv: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {k: e for k, e in kv.items() if not is_expired(e, now)}


def _view(key: str, entry: dict[str, Any], scope: str, now: datetime) -> dict[str, Any]:
    return {**entry_view(key, entry, now), "scope": scope}


# -- reading ----------------------------------------------------------------------------
def _scope_kv(store: Store, scope: str) -> dict[str, Any]:
    if not store.has_table(TABLE):
        return {}
    doc = store.docs(TABLE).get(scope)
    return dict(doc["kv"]) if doc else {}


def resolved(store: Store, session: str, now: datetime) -> dict[str, tuple[dict[str, Any], str]]:
    """Every live key a session sees: key → (entry, where it came from), sorted by key.

    The session's own keys win over its agent's scope, which wins over its project's.
    """
    with store.reading():
        found = sessions.find_named(store, session)
        sid = found["id"] if found is not None else sessions.check_named_id(session.strip())
        own = (stored_state(store, sid) or {"kv": {}})["kv"]
        layers = [(SESSION, own)] + [(s, _scope_kv(store, s)) for s in session_scopes(found)]
    seen: dict[str, tuple[dict[str, Any], str]] = {}
    for where, kv in reversed(layers):  # the farthest first: nearer ones overwrite
        for key, entry in _live(kv, now).items():
            seen[key] = (entry, where)
    return dict(sorted(seen.items()))


def _keys_of(
    store: Store, session: str | None, scope: str | None, now: datetime
) -> dict[str, tuple[dict[str, Any], str]]:
    who, scope = _who(store, session, scope)
    if scope is not None:
        with store.reading():
            kv = _scope_kv(store, scope)
        return {k: (e, scope) for k, e in sorted(_live(kv, now).items())}
    assert who is not None
    return resolved(store, who, now)


def get_key(
    store: Store,
    session: str | None,
    key: str,
    *,
    scope: str | None = None,
    default: Any = None,
    now: datetime,
) -> dict[str, Any]:
    """A live key's entry and where it came from (``scope``), with ``found`` true; when
    there is no live key, NotFound, or with a ``default`` (not None) the answer
    ``{key, value: default, found: false, scope: None}``."""
    found = _keys_of(store, session, scope, now).get(key)
    if found is None:
        if default is None:
            raise NotFound("working-memory key", key)
        check_key(key)
        return {"key": key, "value": default, "found": False, "scope": None}
    return {**_view(key, found[0], found[1], now), "found": True}


def list_keys(
    store: Store, session: str | None, *, scope: str | None = None, now: datetime
) -> list[dict[str, Any]]:
    """Every live key (inherited ones too, from a session), sorted, each with ``scope``."""
    return [
        _view(k, e, where, now) for k, (e, where) in _keys_of(store, session, scope, now).items()
    ]


def key_names(
    store: Store,
    session: str | None,
    pattern: str = "*",
    *,
    scope: str | None = None,
    now: datetime,
) -> list[str]:
    """The live key names matching ``pattern`` (a glob), inherited ones included, sorted."""
    if not isinstance(pattern, str) or not pattern or len(pattern) > session_keys.PATTERN_MAX:
        raise InvalidInput(
            "pattern", f"must be a glob of 1 to {session_keys.PATTERN_MAX} characters"
        )
    return [k for k in _keys_of(store, session, scope, now) if fnmatchcase(k, pattern)]


def key_exists(
    store: Store, session: str | None, key: str, *, scope: str | None = None, now: datetime
) -> dict[str, Any]:
    """``{key, exists, scope}``: whether ``key`` is live, and where it came from (null when
    it does not exist)."""
    check_key(key)
    found = _keys_of(store, session, scope, now).get(key)
    return {"key": key, "exists": found is not None, "scope": found[1] if found else None}


def get_all(
    store: Store, session: str | None, *, scope: str | None = None, now: datetime
) -> dict[str, Any]:
    """Every live key's value, by key; inherited keys are named in ``_scopes`` (key →
    scope; a leading ``_`` is reserved, so it never meets a key), present only when a
    key was inherited."""
    keys = _keys_of(store, session, scope, now)
    out: dict[str, Any] = {k: e["value"] for k, (e, _) in keys.items()}
    inherited = {k: where for k, (_, where) in keys.items() if where != SESSION}
    if inherited and scope is None:
        out["_scopes"] = inherited
    return out


def stats(
    store: Store, session: str | None, *, scope: str | None = None, now: datetime
) -> dict[str, Any]:
    """What a session's working memory holds (:func:`.overview.stats`) plus what it inherits
    (``inherited_keys``: keys it sees from a scope and does not hold itself;
    ``scope_keys``: the live keys of each scope it inherits from); or a scope's counts."""
    who, scope = _who(store, session, scope)
    if scope is not None:
        with store.reading():
            kv = _live(_scope_kv(store, scope), now)
        return {
            "session_id": None,
            "scope": scope,
            "total_keys": len(kv),
            "user_keys": len(kv),
            "checkpoints": 0,
            "scratchpad_entries": 0,
            "has_task_state": False,
            "ttl_keys": sum(1 for e in kv.values() if e.get("expires_at")),
            "inherited_keys": 0,
            "scope_keys": {},
            "using_fallback": False,
        }
    assert who is not None
    with store.reading():
        counts = overview.stats(store, who, now=now)
        found = sessions.find_named(store, who)
        scope_keys = {s: len(_live(_scope_kv(store, s), now)) for s in session_scopes(found)}
        seen = resolved(store, who, now)
    inherited = sum(1 for _, where in seen.values() if where != SESSION)
    return {**counts, "scope": SESSION, "inherited_keys": inherited, "scope_keys": scope_keys}


# -- writing ----------------------------------------------------------------------------
def _load_scope(store: Store, scope: str, now: datetime) -> tuple[dict[str, Any], list[str]]:
    """A private copy of the scope's document, and the expired keys just purged from it."""
    stored = store.docs(TABLE).get(scope) if store.has_table(TABLE) else None
    if stored is not None:
        doc: dict[str, Any] = orjson.loads(orjson.dumps(stored))
    else:
        stamp = iso(now)
        doc = {"id": scope, "scope": scope, "kv": {}, "created_at": stamp, "updated_at": stamp}
    expired = sorted(k for k, e in doc["kv"].items() if is_expired(e, now))
    for key in expired:
        del doc["kv"][key]
    return doc, expired


def _save_scope(store: Store, doc: dict[str, Any], now: datetime) -> None:
    doc["updated_at"] = iso(now)
    store.put(TABLE, doc["id"], validate(WMScope, doc).to_doc())


def set_key(
    store: Store,
    session: str | None,
    key: str,
    value: Any,
    *,
    ttl: float | None = None,
    scope: str | None = None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Set ``key`` in the session, or in ``scope`` for every session of that project or
    agent; the entry with ``scope``."""
    who, scope = _who(store, session, scope)
    if scope is None:
        assert who is not None
        own = session_keys.set_key(store, who, key, value, ttl=ttl, now=now, actor=actor)
        return {**own, "scope": SESSION}
    check_key(key)
    seconds = check_ttl(ttl)
    check_json(value, "value")
    try:
        orjson.dumps(value)
    except TypeError:
        raise InvalidInput("value", f"must be a JSON value (got {type(value).__name__})") from None
    with store.transaction():
        if seconds is None:  # the store's default TTL applies to shared keys too
            from ...ledger.config import seconds as setting_seconds

            default = setting_seconds(store, "wm_default_ttl")
            seconds = float(default) if default is not None else None
        entry: dict[str, Any] = {
            "value": scrub_under(key, value),
            "set_at": iso(now),
            "expires_at": iso(now + timedelta(seconds=seconds)) if seconds is not None else None,
        }
        doc, purged = _load_scope(store, scope, now)
        doc["kv"][key] = entry
        _save_scope(store, doc, now)
        ttl_note = f" (ttl {seconds:g}s)" if seconds is not None else ""
        audit_change(
            store, actor, "wm-set", scope, f"set key {key!r}{ttl_note}", purged, now, table=TABLE
        )
    return _view(key, entry, scope, now)


def delete_key(
    store: Store,
    session: str | None,
    key: str,
    *,
    scope: str | None = None,
    missing_ok: bool = False,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Delete a live key of the session or of ``scope`` (the answer carries ``deleted``
    true); a session never deletes what it inherits (NotFound says where the key lives).
    ``missing_ok``: no live key of its own is no error: nothing is written and the answer
    is ``{key, deleted: false, scope: None}``."""
    try:
        gone = _delete_key(store, session, key, scope=scope, now=now, actor=actor)
    except NotFound as exc:
        if not missing_ok or exc.what != "working-memory key":
            raise
        check_key(key)
        return {"key": key, "deleted": False, "scope": None}
    return {**gone, "deleted": True}


def _delete_key(
    store: Store,
    session: str | None,
    key: str,
    *,
    scope: str | None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    who, scope = _who(store, session, scope)
    if scope is None:
        assert who is not None
        try:
            gone = session_keys.delete_key(store, who, key, now=now, actor=actor)
        except NotFound:
            inherited = resolved(store, who, now).get(key)
            if inherited is None:
                raise
            where = inherited[1]
            raise NotFound(
                "working-memory key",
                f"{key} in the session (it is inherited from {where}: "
                f"delete it with scope {where})",
            ) from None
        return {**gone, "scope": SESSION}
    with store.transaction():
        doc, purged = _load_scope(store, scope, now)
        entry = doc["kv"].pop(key, None)
        if entry is None:
            raise NotFound("working-memory key", f"{key} in {scope}")
        _save_scope(store, doc, now)
        audit_change(
            store, actor, "wm-delete", scope, f"delete key {key!r}", purged, now, table=TABLE
        )
    return _view(key, entry, scope, now)


def clear_keys(
    store: Store, session: str | None, *, scope: str | None = None, now: datetime, actor: str
) -> dict[str, Any]:
    """Delete every key of the session (its task state, scratchpad and checkpoints stay;
    what it inherits too) or of ``scope``; the keys cleared."""
    who, scope = _who(store, session, scope)
    if scope is None:
        assert who is not None
        return {**session_keys.clear_keys(store, who, now=now, actor=actor), "scope": SESSION}
    with store.transaction():
        doc, purged = _load_scope(store, scope, now)
        cleared = sorted(doc["kv"])
        doc["kv"] = {}
        _save_scope(store, doc, now)
        audit_change(
            store,
            actor,
            "wm-clear",
            scope,
            f"cleared {len(cleared)} keys",
            purged,
            now,
            table=TABLE,
        )
    return {"session_id": None, "scope": scope, "cleared": cleared}
