"""Records a table holds that memwork cannot compute with, kept out of every answer.

A table file edited by hand or damaged can hold a record whose field has the wrong
type (a lesson whose ``confidence`` is ``"high"``) or is missing. Reading such a
record would end a command in an internal error (a float of ``"high"``, a missing
``fingerprint``) and take every other record down with it. Instead, the reads that
compute with a table (:func:`docs`) leave the record out and say so once per process,
one line on stderr naming the table, the id, the field and the rule; ``memwork doctor``
names it too. The record itself stays in the store untouched (nothing is lost: a
person corrects or removes it, or restores a checkpoint), and an export keeps it.

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

_NUMBER = "a number"
_WHOLE = "a whole number"
_TEXT = "a string"
_FLAG = "true or false"
_TEXTS = "a list of strings"
_OBJECT = "an object or null"
_OBJECTS = "a list of objects"
_TEXT_OR_NULL = "a string or null"

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
}
#: Fields a record may leave out, and the type each must be when it is there.
OPTIONAL: dict[str, dict[str, str]] = {
    "lessons": {"source": _TEXT, "effect_base": _OBJECT},
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
    return value is None or type(value) is dict  # _OBJECT


def _shown(value: Any, kind: str) -> str:
    if isinstance(value, list):  # (not its repr: a hand-made list can nest past recursion)
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
        fields = {**FIELDS.get(table, {}), **OPTIONAL.get(table, {})}
        terms = " and ".join(_term(f, k) for f, k in fields.items())
        source = (
            "def sound(d):\n"
            "    try:\n"
            f"        return type(d) is dict and {terms}\n"
            "    except KeyError:\n"
            "        return False\n"
        )
        space: dict[str, Any] = {}
        exec(source, space)  # noqa: S102 - made from this module's own field table
        found = _quick[table] = space["sound"]
    return found


def problem(table: str, doc: Any) -> str | None:
    """What is wrong with ``doc`` as a record of ``table`` (``field: rule (got …)``), or
    None when memwork can compute with it."""
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
    others (each reported once on stderr) and with the defaults of fields left out."""
    raw = store.docs(table)
    if table not in FIELDS:
        return raw
    seen = _views.setdefault(store, {}).setdefault(table, _Seen())
    stamp = store.table_stamp(table)
    if seen.raw is raw and seen.stamp == stamp:
        return seen.good
    sound = _sound(table)
    odd = [key for key, doc in raw.items() if not sound(doc)]
    good = raw
    if odd:
        good = dict(raw)
        defaults = DEFAULTS.get(table, {})
        for key in odd:
            wrong = problem(table, raw[key])
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
