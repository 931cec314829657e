"""Sessions and observations checked without pydantic, for ``memwork observe``.

An agent may observe on every step, each time as a whole process, and importing
pydantic to build the models would cost that process about half its time. The
check here is conservative: it accepts only a document the models
(:class:`core.models.session.Session`, ``Observation``) certainly accept as it
is (every field present, of its exact type, within its rules) and returns it in
the models' field order, as ``model_dump`` would. Anything else returns None, and
the caller lets the model judge it: the model then coerces, fills defaults or
refuses with its own message, exactly as before. Tests compare both on many
documents.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base.errors import InvalidInput
from ..base.names import check_id
from ..privacy import identifier_problem
from .limits import MAX_INT

#: The models' fields, in their order (a test checks them against the models).
SESSION_FIELDS = (
    "id",
    "created_at",
    "updated_at",
    "agent_id",
    "project",
    "title",
    "started_at",
    "ended_at",
    "status",
    "summary",
    "observation_count",
    "dropped_observations",
    "max_observations",
    "forgotten_observations",
    "implicit",
)
OBSERVATION_FIELDS = (
    "id",
    "created_at",
    "updated_at",
    "session_id",
    "kind",
    "content",
    "tags",
    "seq",
    "after_end",
)
_SESSION_KEYS = frozenset(SESSION_FIELDS)
_OBSERVATION_KEYS = frozenset(OBSERVATION_FIELDS)
#: The longest agent id and observation kind the models take.
AGENT_ID_MAX = 200
KIND_MAX = 50


def is_instant(value: str) -> bool:
    """Whether ``value`` is an ISO-8601 instant (``Z`` or an offset; what
    :func:`core.base.clock.iso` writes)."""
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _identifier(value: object) -> bool:
    return type(value) is str and identifier_problem(value) is None


def _session_id(value: object) -> bool:
    if type(value) is not str or not _identifier(value):
        return False
    try:
        check_id(value, "session_id")
    except InvalidInput:
        return False
    return True


def _instant(value: object) -> bool:
    return type(value) is str and is_instant(value)


def _count(value: object, least: int = 0) -> bool:
    return type(value) is int and least <= value <= MAX_INT


def plain_session(doc: Any) -> dict[str, Any] | None:
    """``doc`` as the session model would store it, or None when the model must judge it."""
    if type(doc) is not dict or doc.keys() != _SESSION_KEYS:
        return None
    ended = doc["ended_at"]
    agent = doc["agent_id"]
    ok = (
        _session_id(doc["id"])
        and _instant(doc["created_at"])
        and _instant(doc["updated_at"])
        and _instant(doc["started_at"])
        and (ended is None or _instant(ended))
        and _identifier(agent)
        and len(agent) <= AGENT_ID_MAX
        and type(doc["project"]) is str
        and type(doc["title"]) is str
        and type(doc["summary"]) is str
        and doc["status"] in ("active", "ended")
        and type(doc["status"]) is str
        and _count(doc["observation_count"])
        and _count(doc["dropped_observations"])
        and _count(doc["max_observations"], 1)
        and _count(doc["forgotten_observations"])
        and type(doc["implicit"]) is bool
    )
    return {name: doc[name] for name in SESSION_FIELDS} if ok else None


def plain_observation(doc: Any) -> dict[str, Any] | None:
    """``doc`` as the observation model would store it, or None when the model must
    judge it."""
    if type(doc) is not dict or doc.keys() != _OBSERVATION_KEYS:
        return None
    kind, content, tags = doc["kind"], doc["content"], doc["tags"]
    ok = (
        type(doc["id"]) is str
        and _session_id(doc["session_id"])
        and _instant(doc["created_at"])
        and _instant(doc["updated_at"])
        and type(kind) is str
        and 1 <= len(kind) <= KIND_MAX
        and type(content) is str
        and len(content) >= 1
        and type(tags) is list
        and all(type(tag) is str for tag in tags)
        and _count(doc["seq"])
        and type(doc["after_end"]) is bool
    )
    if not ok:
        return None
    # model_dump gives the list a copy of its own.
    return {name: list(tags) if name == "tags" else doc[name] for name in OBSERVATION_FIELDS}
