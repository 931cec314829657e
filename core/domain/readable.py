"""Records a table holds that memwork cannot compute with, kept out of every answer.

A table file edited by hand or damaged can hold a record whose field has the wrong
type (a lesson whose ``confidence`` is ``"high"``) or is missing. Reading such a
record would end a command in an internal error (a float of ``"high"``, a missing
``fingerprint``) and take every other record down with it. Instead, the reads that
compute with a table (:func:`docs`) leave the record out and say so once per process,
one line on stderr naming the table, the id, the field and the rule; ``memwork doctor``
names it too. The record itself stays in the store untouched (nothing is lost: a
person corrects or removes it, or restores a checkpoint), and an export keeps it.
The tables are the ones agents and the workbench compute with: lessons, actions,
slots, rules, mistake cards, sessions, observations and episodes; a table split over
files (``rules.global``, ``observations.<session>``, ``episodes.000001``) is checked
file by file against its kind's fields, and the line names the file's table.

A field an older memwork did not write is read with its default (:data:`DEFAULTS`).
The check is plain Python (no pydantic: ``memwork context`` runs it), a type per
field the code reads, done once per version of a table: a read of a table
nothing changed in costs a dictionary lookup, a cold read about 2 µs a record.
"""

from __future__ import annotations

import copy
import sys
import weakref
from collections.abc import Callable
from typing import Any

from ..storage.backend import Docs
from ..storage.store import Store
from ..storage.tables import logical_name

_NUMBER = "a number"
_WHOLE = "a whole number"
_TEXT = "a string"
_FLAG = "true or false"
_TEXTS = "a list of strings"
_OBJECT = "an object or null"
_OBJECTS = "a list of objects"
_TEXT_OR_NULL = "a string or null"
_DICT = "an object"
_KEYS = "a list of lists of strings"
_STAMPS = {"created_at": _TEXT, "updated_at": _TEXT}

#: Per table, the fields a record must hold and the type each must be.
FIELDS: dict[str, dict[str, str]] = {
    "lessons": {
        "id": _TEXT,
        "content": _TEXT,
        "fingerprint": _TEXT,
        "confidence": _NUMBER,
        "reinforcements": _WHOLE,
        "scope": _TEXT,
        "tags": _TEXTS,
        "decay_rate": _NUMBER,
        "last_reinforced_at": _TEXT,
        "pinned": _FLAG,
        "deleted": _FLAG,
        "wordings": _TEXTS,
        "created_at": _TEXT,
        "updated_at": _TEXT,
    },
    "actions": {
        "id": _TEXT,
        "title": _TEXT,
        "status": _TEXT,
        "priority": _WHOLE,
        "session_id": _TEXT,
        "project": _TEXT,
        "agent_id": _TEXT,
        "notes": _OBJECTS,
        "closed_at": _TEXT_OR_NULL,
        "created_at": _TEXT,
        "updated_at": _TEXT,
    },
    "slots": {
        "id": _TEXT,
        "label": _TEXT,
        "content": _TEXT,
        "description": _TEXT,
        "limit": _WHOLE,
        "read_only": _FLAG,
        "position": _WHOLE,
        **_STAMPS,
    },
    # Active rules (``rules.<scope>``) and their archive (``rules.archive.…``) alike.
    "rules": {
        "id": _TEXT,
        "text": _TEXT,
        "scope": _TEXT,
        "polarity": _TEXT,
        "source": _TEXT,
        "active": _FLAG,
        "seq": _WHOLE,
        **_STAMPS,
    },
    "mistake_cards": {
        "id": _TEXT,
        "mistake_type": _TEXT,
        "task_id": _TEXT,
        "worker_id": _TEXT_OR_NULL,
        "bad_decision": _TEXT,
        "correct_decision": _TEXT,
        "evidence": _TEXT,
        "lesson": _TEXT,
        "seen_count": _WHOLE,
        "first_seen_episode": _WHOLE,
        "last_seen_episode": _WHOLE,
        "merged_keys": _KEYS,
        "cut_chars": _DICT,
        **_STAMPS,
    },
    "sessions": {
        "id": _TEXT,
        "agent_id": _TEXT,
        "project": _TEXT,
        "title": _TEXT,
        "started_at": _TEXT,
        "ended_at": _TEXT_OR_NULL,
        "status": _TEXT,
        "summary": _TEXT,
        "observation_count": _WHOLE,
        "dropped_observations": _WHOLE,
        "max_observations": _WHOLE,
        "forgotten_observations": _WHOLE,
        "implicit": _FLAG,
        **_STAMPS,
    },
    # Every session's table (``observations.<session>``).
    "observations": {
        "id": _TEXT,
        "session_id": _TEXT,
        "kind": _TEXT,
        "content": _TEXT,
        "tags": _TEXTS,
        "seq": _WHOLE,
        "after_end": _FLAG,
        **_STAMPS,
    },
    # Every shard (``episodes.000001``).
    "episodes": {
        "id": _TEXT,
        "index": _WHOLE,
        "task_id": _TEXT,
        "score": _NUMBER,
        "steps": _WHOLE,
        "summary": _TEXT,
        "mistakes": _TEXTS,
        "successes": _TEXTS,
        "mistake_cards": _OBJECTS,
        "errors": _OBJECTS,
        "outcome": _TEXT,
        "session_id": _TEXT_OR_NULL,
        "worker_id": _TEXT_OR_NULL,
        "metadata": _DICT,
        "card_ids": _TEXTS,
        **_STAMPS,
    },
}
#: Fields a record may leave out, and the type each must be when it is there.
OPTIONAL: dict[str, dict[str, str]] = {
    "lessons": {"source": _TEXT, "effect_base": _OBJECT},
    # Stamped only on an agent's episode: most records never carry it, and filling it
    # in would copy every such record on each read.
    "episodes": {"agent_id": _TEXT},
}
#: What a field an older memwork did not write reads as (the model's default): such a
#: record is read with it, not left out.
DEFAULTS: dict[str, dict[str, Any]] = {
    "lessons": {
        "confidence": 0.5,
        "reinforcements": 0,
        "scope": "global",
        "tags": [],
        "decay_rate": 0.05,
        "pinned": False,
        "deleted": False,
        "wordings": [],
    },
    "actions": {
        "status": "pending",
        "priority": 0,
        "session_id": "",
        "project": "",
        "agent_id": "",
        "notes": [],
        "closed_at": None,
    },
    "slots": {
        "content": "",
        "description": "",
        "limit": 2000,
        "read_only": False,
        "position": 0,
    },
    "rules": {"scope": "global", "polarity": "note", "source": "manual", "active": True, "seq": 0},
    "mistake_cards": {
        "mistake_type": "unknown_mistake",
        "worker_id": None,
        "bad_decision": "",
        "correct_decision": "",
        "evidence": "",
        "lesson": "Avoid repeating this failure.",  # models.plain.DEFAULT_LESSON (see the test)
        "seen_count": 1,
        "merged_keys": [],
        "cut_chars": {},
    },
    "sessions": {
        "agent_id": "",
        "project": "",
        "title": "",
        "ended_at": None,
        "status": "active",
        "summary": "",
        "observation_count": 0,
        "dropped_observations": 0,
        "max_observations": 500,  # models.session.MAX_OBSERVATIONS (see the test)
        "forgotten_observations": 0,
        "implicit": False,
    },
    "observations": {"kind": "note", "tags": [], "seq": 0, "after_end": False},
    "episodes": {
        "summary": "",
        "mistakes": [],
        "successes": [],
        "mistake_cards": [],
        "errors": [],
        "session_id": None,
        "worker_id": None,
        "metadata": {},
        "card_ids": [],
    },
}


def _fits(value: Any, kind: str) -> bool:
    if kind == _TEXT:
        return type(value) is str
    if kind == _NUMBER:
        return type(value) in (int, float)
    if kind == _WHOLE:
        return type(value) is int
    if kind == _FLAG:
        return type(value) is bool
    if kind == _TEXTS:
        return type(value) is list and all(type(v) is str for v in value)
    if kind == _OBJECTS:
        return type(value) is list and all(type(v) is dict for v in value)
    if kind == _TEXT_OR_NULL:
        return value is None or type(value) is str
    if kind == _DICT:
        return type(value) is dict
    if kind == _KEYS:
        return type(value) is list and all(_fits(v, _TEXTS) for v in value)
    return value is None or type(value) is dict  # _OBJECT


def _shown(value: Any, kind: str) -> str:
    if isinstance(value, list):  # (not its repr: a hand-made list can nest past recursion)
        if kind == _KEYS:
            wrong = next((v for v in value if not _fits(v, _TEXTS)), None)
            if isinstance(wrong, list):
                return f"a list holding {_shown(wrong, _TEXTS)}"
            return f"a list holding {type(wrong).__name__}"
        item = dict if kind == _OBJECTS else str
        wrong = next((v for v in value if type(v) is not item), None)
        return f"a list holding {type(wrong).__name__}"
    text = repr(value) if not isinstance(value, dict) else "an object"
    return text if len(text) <= 40 else text[:39] + "…"


_quick: dict[str, Callable[[Any], bool]] = {}


def _term(field: str, kind: str) -> str:
    """The test of one field in :func:`_sound`'s expression (``d`` is the record)."""
    value = f"d[{field!r}]"
    simple = {_TEXT: "str", _WHOLE: "int", _FLAG: "bool"}
    if kind in simple:
        return f"type({value}) is {simple[kind]}"
    if kind == _NUMBER:
        return f"type({value}) in (int, float)"
    if kind == _DICT:
        return f"type({value}) is dict"
    if kind == _KEYS:
        return f"_fits({value}, {_KEYS!r})"
    if kind in (_OBJECT, _TEXT_OR_NULL):
        return f"({value} is None or type({value}) is {'dict' if kind == _OBJECT else 'str'})"
    item = "str" if kind == _TEXTS else "dict"
    return f"(type({value}) is list and (not {value} or all(type(x) is {item} for x in {value})))"


def _sound(table: str) -> Callable[[Any], bool]:
    """A quick yes for a record whose every field is there with its type, made once per
    table as one expression (a cold ``memwork context`` runs it over every lesson):
    :func:`problem` says why not, and reads a missing field with its default."""
    found = _quick.get(table)
    if found is None:
        required = [_term(f, k) for f, k in FIELDS.get(table, {}).items()]
        # An optional field may be absent (a record an older memwork wrote): sound too.
        optional = [
            f"({f!r} not in d or {_term(f, k)})" for f, k in OPTIONAL.get(table, {}).items()
        ]
        terms = " and ".join(required + optional)
        source = (
            "def sound(d):\n"
            "    try:\n"
            f"        return type(d) is dict and {terms}\n"
            "    except KeyError:\n"
            "        return False\n"
        )
        space: dict[str, Any] = {"_fits": _fits}
        exec(source, space)  # noqa: S102 - made from this module's own field table
        found = _quick[table] = space["sound"]
    return found


def problem(table: str, doc: Any) -> str | None:
    """What is wrong with ``doc`` as a record of ``table`` (``field: rule (got …)``), or
    None when memwork can compute with it. ``table`` may be a physical table's name
    (``rules.global``): its records are checked as its logical table's."""
    table = logical_name(table)
    if _sound(table)(doc):
        return None
    if type(doc) is not dict:
        return f"record: must be an object (got {type(doc).__name__})"
    defaults = DEFAULTS.get(table, {})
    for field, kind in FIELDS.get(table, {}).items():
        if field not in doc:
            if field in defaults:
                continue
            return f"{field}: is missing"
        if not _fits(doc[field], kind):
            return f"{field}: must be {kind} (got {_shown(doc[field], kind)})"
    for field, kind in OPTIONAL.get(table, {}).items():
        if field in doc and not _fits(doc[field], kind):
            return f"{field}: must be {kind} (got {_shown(doc[field], kind)})"
    return None


class _Seen:
    """One store's checked view of a table, as of one version of it."""

    __slots__ = ("raw", "stamp", "good")

    def __init__(self) -> None:
        self.raw: Docs | None = None
        self.stamp: tuple[int, int] | None = None
        self.good: Docs = {}


_views: weakref.WeakKeyDictionary[Store, dict[str, _Seen]] = weakref.WeakKeyDictionary()
#: (table, id, problem) already said in this process.
_said: set[tuple[str, str, str]] = set()


def docs(store: Store, table: str) -> Docs:
    """The records of ``table`` memwork can compute with (id → record; call inside a read):
    every record when all are sound (the store's own dict), else a copy without the
    others (each reported once on stderr, naming the physical table: the file to fix)
    and with the defaults of fields left out. ``table`` may be physical (``rules.global``,
    ``observations.<session>``)."""
    raw = store.docs(table)
    kind = logical_name(table)
    if kind not in FIELDS:
        return raw
    seen = _views.setdefault(store, {}).setdefault(table, _Seen())
    stamp = store.table_stamp(table)
    if seen.raw is raw and seen.stamp == stamp:
        return seen.good
    sound = _sound(kind)
    odd = [key for key, doc in raw.items() if not sound(doc)]
    good = raw
    if odd:
        good = dict(raw)
        defaults = DEFAULTS.get(kind, {})
        for key in odd:
            wrong = problem(kind, raw[key])
            if wrong is not None:
                _report(table, key, wrong)
                del good[key]
            else:  # fields an older memwork did not write: read with their defaults
                good[key] = {**copy.deepcopy(defaults), **raw[key]}
    seen.raw, seen.stamp, seen.good = raw, stamp, good
    return good


def _report(table: str, key: str, wrong: str) -> None:
    if (table, key, wrong) in _said:
        return
    _said.add((table, key, wrong))
    from ..privacy.controls import terminal_text

    line = f"memwork: {table}: record {key!r}: {wrong}; left out (memwork doctor names it)"
    try:
        print(terminal_text(line), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass  # a closed stderr never fails a read
