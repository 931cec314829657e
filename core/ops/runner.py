"""Running an operation: checking what a door was given, then calling its core function.

Every door runs operations through here (:func:`call`), so an operation does
the same thing, with the same errors, wherever it is called from. The doors
that take JSON (``Memory``, MCP, HTTP) first pass what they were given
through :func:`check`, which fills in defaults and refuses, in one line
naming the field, an unknown parameter, a missing one or a value of the wrong
type; the CLI's parser (argparse) already did that for its own arguments.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

# Said before any operation opens a store: the schema steps that rewrite records, and
# what recall's files beside a folder store hold (so a commit that forgets words removes
# them, and one that only adds records keeps them).
from ..base.errors import InvalidInput
from ..base.jsonio import DOCUMENT_MAX, RECORD_MAX
from ..base.numbers import is_finite, shown_number
from ..domain import migrations as _migrations  # noqa: F401
from ..ledger.isolation import run_asking
from ..models.limits import check_int, check_size, check_value
from ..services.recall import index_files as _index_files  # noqa: F401
from .operations import Op, Param, is_required, pointing_elsewhere
from .wm_fallback import is_wm, reach

if TYPE_CHECKING:
    from datetime import datetime

    from ..ledger.curator import Curator
    from ..storage.store import Store
    from .wm_fallback import Fallback

_TYPE_WORDS = {
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "strs": "a list of strings",
    "json": "a JSON value",
    "object": "an object",
    "objects": "a list",
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def coerce(param: Param, value: Any) -> Any:
    """``value`` as ``param`` takes it, or ``InvalidInput`` naming the parameter.

    Integral floats count as integers (JSON has one kind of number); a tuple or
    any other iterable of strings counts as a list of strings (Python callers).
    """
    kind = param.type.rstrip("?")
    if value is None:
        if param.type.endswith("?"):
            return None
        raise InvalidInput(param.name, f"must be {_TYPE_WORDS[kind]} (got None)")
    ok = True
    if kind == "str":
        ok = isinstance(value, str)
    elif kind == "int":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        ok = _is_int(value)
        if ok:
            check_int(value, param.name)  # past 64 bits no store could write it back
    elif kind == "float":
        ok = (_is_int(value) or isinstance(value, float)) and not isinstance(value, bool)
        if ok and _is_int(value) and not is_finite(value):
            raise InvalidInput(param.name, f"must be a finite number (got {shown_number(value)})")
        value = float(value) if ok else value
    elif kind == "bool":
        ok = isinstance(value, bool)
    elif kind == "strs":
        if isinstance(value, str | bytes | Mapping):
            ok = False
        else:
            try:
                value = list(value)
            except TypeError:
                ok = False
            else:
                ok = all(isinstance(v, str) for v in value)
    elif kind == "object":
        ok = isinstance(value, dict)
    elif kind == "objects":
        # Each item is the operation's to check: it names the item that is wrong.
        ok = isinstance(value, list)
    if not ok:
        raise InvalidInput(param.name, f"must be {_TYPE_WORDS[kind]} (got {_shown(value)})")
    return check_rule(param, value)


def check_rule(param: Param, value: Any) -> Any:
    """``value`` when it keeps ``param``'s rules (choices, minimum); else ``InvalidInput``."""
    if param.choices and value not in param.choices and value is not None:
        instead = pointing_elsewhere(param, value, lambda op: op.name)
        raise InvalidInput(
            param.name,
            f"must be one of {', '.join(param.choices)} (got {_shown(value)}){instead}",
        )
    if param.minimum is not None and value is not None and value < param.minimum:
        raise InvalidInput(param.name, f"must be >= {param.minimum} (got {value})")
    return value


def check_rules(op: Op, params: Mapping[str, Any]) -> None:
    """Every rule of ``op``'s parameters that ``params`` holds (before the store opens)."""
    for p in op.params:
        if p.name in params:
            check_rule(p, params[p.name])


def _sized(param: Param, value: Any) -> Any:
    """The input limits every door shares (the CLI reads a record of at most 16 MB, a
    document of at most 256 MB): a value at most 16 MB, a list of records each at most
    16 MB and 256 MB in all."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str) and 4 * len(value) + 2 <= RECORD_MAX:
        return value  # (a character is at most 4 bytes of UTF-8: far under the cap)
    if param.type.rstrip("?") == "objects" and isinstance(value, list):
        for number, item in enumerate(value, start=1):
            try:
                check_size(item, param.name)
            except InvalidInput as exc:
                raise InvalidInput(exc.field, exc.rule, item=number) from None
        check_size(value, param.name, DOCUMENT_MAX)
    else:
        check_size(value, param.name)
    return value


#: (op, door) -> the op, its parameters at that door, their names and the names of those
#: that may be null: asked on every call (an agent's step may make several), and the
#: same for as long as the op is.
_AT_DOOR: dict[tuple[int, str], tuple[Op, tuple[Param, ...], frozenset[str], frozenset[str]]] = {}


#: What :func:`_at_door` takes for every parameter of an op, at any door.
ALL_DOORS = "*"


def _at_door(op: Op, door: str) -> tuple[tuple[Param, ...], frozenset[str]]:
    """The parameters ``op`` takes at ``door`` (every one: :data:`ALL_DOORS`), and
    their names."""
    found = _door_params(op, door)
    return found[1], found[2]


def _door_params(op: Op, door: str) -> tuple[Op, tuple[Param, ...], frozenset[str], frozenset[str]]:
    key = (id(op), door)
    found = _AT_DOOR.get(key)
    if found is None or found[0] is not op:  # (an id may be taken again by another op)
        params = tuple(p for p in op.params if door == ALL_DOORS or door in p.doors)
        found = _AT_DOOR[key] = (
            op,
            params,
            frozenset(p.name for p in params),
            frozenset(p.name for p in params if p.type.endswith("?")),
        )
    return found


def check(op: Op, door: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of ``op`` at ``door`` from ``given``: checked, defaults filled in."""
    _, params, known, nullable = _door_params(op, door)
    for name in given:
        if name not in known:
            expected = ", ".join(sorted(known)) or "none"
            raise InvalidInput(str(name), f"is not a parameter of {op.name} (it takes: {expected})")
    # Nesting first: any message about a value nested thousands deep (its repr) and any
    # check that walks it by recursion would end in a RecursionError. Then text no store
    # can hold (an unpaired surrogate) and numbers JSON cannot say (NaN, infinity), at
    # every door: found later, the one would end the write in an encoder's internal
    # error, the other be written back as null.
    for name, value in given.items():
        if value is not None:  # (nothing to check in a null, and most are)
            check_value(value, str(name))
    out: dict[str, Any] = {}
    for p in params:
        if p.name in given:
            value = given[p.name]
            # A null where null is allowed is taken as it is: what coerce would say.
            out[p.name] = (
                None if value is None and p.name in nullable else _sized(p, coerce(p, value))
            )
        elif is_required(p):
            raise InvalidInput(p.name, "is required")
        elif p.default is ...:
            out[p.name] = None  # nullable: the operation says what it needs instead
        else:
            out[p.name] = list(p.default) if isinstance(p.default, tuple) else p.default
    return out


def function(target: str, package: str = "memwork.core") -> Callable[..., Any]:
    """The function ``"module:function"`` names inside ``package`` (imported on first use).

    Looked up on every call (a dictionary lookup once imported), so a test that
    replaces the function is heard.
    """
    module, _, name = target.partition(":")
    full = f"{package}.{module}"
    # Resolved by name: the registry stays plain data that imports no domain module.
    held = sys.modules.get(full)
    if held is None or getattr(getattr(held, "__spec__", None), "_initializing", False):
        # Not imported yet, or being imported by another thread right now (a server's
        # first calls, side by side): the import waits for that thread to finish it,
        # where the module as it stands would lack the very function asked for.
        held = importlib.import_module(full)
    found: Callable[..., Any] = getattr(held, name)
    return found


def _takes(fn: Callable[..., Any], name: str) -> bool:
    """Whether ``fn`` takes a parameter called ``name`` (asked when a call's plan is
    made: :func:`_plan` keeps the answers per function code)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    return name in code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]


def call(
    op: Op,
    store: Store | Callable[[], Store],
    params: Mapping[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None = None,
    fallback: Fallback | None = None,
) -> Any:
    """Run ``op`` on ``store`` with checked ``params``; what its core function returns.

    The function gets each parameter under its keyword (``Param.arg`` or its name),
    and ``now`` and ``actor`` (the caller's) when it takes them and no parameter of
    the operation has that name (``history``'s ``actor`` is a filter). ``curator`` is
    the curator key a person gave the door (:mod:`core.ledger.curator`: the CLI's
    ``--curator-key FILE``), passed to functions that decide or may go around review;
    agents' doors never have one.

    ``fallback``: a long-lived process's working memory in process memory
    (:mod:`core.ops.wm_fallback`): a working-memory operation goes on there while a Redis
    store does not answer. ``store`` may then be a function that opens the store (one
    that did not answer when the process started): it is called when needed.
    """
    if fallback is not None:
        if is_wm(op):
            return fallback.run(
                op,
                store,
                params,
                lambda on: _run(op, on, params, now=now, actor=actor, curator=curator),
                now=now,
                actor=actor,
            )
    return _run(op, reach(store), params, now=now, actor=actor, curator=curator)


def _run(
    op: Op,
    store: Store,
    params: Mapping[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> Any:
    if op.review:
        return _reviewed(op, store, params, now=now, actor=actor, curator=curator)
    return _direct(op, store, params, now=now, actor=actor, curator=curator)


def _reviewed(
    op: Op,
    store: Store,
    params: Mapping[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> Any:
    """An operation declared ``review=True``: while the store's review is on and the caller
    did not present the curator key (``review.needs_review``), checked as it would run,
    then queued as a proposal holding its name and parameters (the proposal is returned,
    with ``"proposed": True``); else run. ``review_when`` narrows the calls review holds;
    ``review_recorded`` records the curator's own such call in the queue as decided."""
    from ..services import review

    if op.name not in review.SHOWN and not store.cache.in_transaction:
        _try(op, store, params, now=now, actor=actor, curator=curator)
    with store.transaction():
        held = not op.review_when or bool(function(op.review_when)(store, params))
        if held and review.needs_review(store, curator, now=now, actor=actor):
            proposal = review.propose_operation(
                store, op.name, dict(params), now=now, actor=actor, words=op.cli
            )
            return review.queued(store, proposal, now)
        shape = (
            review.shape(store, op.name, dict(params), now) if held and op.review_recorded else None
        )
        result = _direct(op, store, params, now=now, actor=actor, curator=curator)
        if shape is not None:
            review.record_decision(store, shape, result, now=now, actor=actor)
        return result


class _Undone(Exception):
    """Undoes a trial run (:func:`_try`)."""


def _try(
    op: Op,
    store: Store,
    params: Mapping[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> None:
    """Run an operation the review queue has no checks of its own for, and undo it: a call
    the operation would refuse is refused before it is queued, with the operation's own
    error (the queue checks the writes it knows without running them)."""
    from ..services import review

    try:
        with store.transaction():
            held = not op.review_when or bool(function(op.review_when)(store, params))
            if held and review.needs_review(store, curator, now=now, actor=actor):
                _direct(op, store, params, now=now, actor=actor, curator=curator)
            raise _Undone
    except _Undone:
        return


def replay(
    operation: str,
    store: Store,
    params: Mapping[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> Any:
    """Run an approved proposal's operation as the curator who approved it: its parameters
    checked again as any door's are, then the operation's own function, with the audit,
    isolation and validation of a direct call (review does not hold it again)."""
    from .operations import by_name

    op = by_name(operation)
    door = "api" if "api" in op.doors else op.doors[0]
    checked = check(op, door, params)
    return _direct(op, store, checked, now=now, actor=actor, curator=curator)


def _direct(
    op: Op,
    store: Store,
    params: Mapping[str, Any],
    *,
    now: datetime,
    actor: str,
    curator: Curator | None,
) -> Any:
    fn = function(op.run)
    keywords, extras = _plan(op, fn)
    kwargs = {arg: params[name] for name, arg in keywords if name in params}
    if extras:
        given = {"now": now, "actor": actor, "curator": curator, "replay": replay}
        for extra in extras:
            # replay: review approve's approved operation runs through here.
            kwargs[extra] = given[extra]
    # Who asks is said once, here, for every door: reads filter by it while agents are
    # isolated (core/ledger/isolation.py).
    return run_asking(actor, curator, fn, store, **kwargs)


#: (op, its function's code) -> the op, the code, each parameter's name with the keyword
#: the function takes it under, and which of ``now``, ``actor``, ``curator`` and
#: ``replay`` it is given besides: worked out once per code (a test that replaces the
#: function gets its own; both are held, so neither id is taken again while here).
_PLANS: dict[tuple[int, int], tuple[Op, Any, tuple[tuple[str, str], ...], tuple[str, ...]]] = {}


def _plan(op: Op, fn: Callable[..., Any]) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    code = getattr(fn, "__code__", None)
    key = (id(op), id(code))
    found = _PLANS.get(key) if code is not None else None
    if found is None or found[0] is not op or found[1] is not code:
        names = _at_door(op, ALL_DOORS)[1]
        keywords = tuple((p.name, p.arg or p.name) for p in op.params)
        extras = tuple(
            extra
            for extra in ("now", "actor", "curator", "replay")
            if (extra in ("curator", "replay") or extra not in names) and _takes(fn, extra)
        )
        if code is None:
            return keywords, extras
        if len(_PLANS) > 1024:  # functions made on the fly (tests): never many held
            _PLANS.clear()
        found = _PLANS[key] = (op, code, keywords, extras)
    return found[2], found[3]


def writes(op: Op, params: Mapping[str, Any]) -> bool:
    """Whether this call of ``op`` writes (``wm task`` with no field only reads)."""
    if op.read_unless:
        return any(params.get(name) is not None for name in op.read_unless)
    return op.writes
