"""Reading an episode as an agent reports it, without pydantic for the usual case.

``memwork record-episode`` runs as a whole process on every agent step.
Importing pydantic and building :class:`core.models.episode.EpisodeInput`
costs that process three times what recording does, so :func:`parse` first
tries :func:`plain`: a hand-written reading of the same model that accepts only
what the model certainly accepts, with well-inside-the-limits sizes, and
returns exactly what the model would (its ``model_dump()``). Anything else —
an error, an unusual type, a very long text — goes to the model itself, so every
refusal keeps the model's exact message. A test compares the two on generated
inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..base.errors import InvalidInput
from ..base.names import check_id
from ..base.numbers import is_whole_number
from ..models.limits import check_json
from ..models.plain import OUTCOMES
from ..privacy import identifier_problem

#: Fields of the model; any other key is kept in ``metadata``.
FIELDS = frozenset(
    (
        "task_id",
        "score",
        "steps",
        "summary",
        "mistakes",
        "successes",
        "mistake_cards",
        "errors",
        "outcome",
        "session_id",
        "worker_id",
        "recorded_at",
        "metadata",
    )
)
_CARD_FIELDS = frozenset(
    ("mistake_type", "task_id", "worker_id", "bad_decision", "correct_decision", "evidence")
)
_ERROR_FIELDS = frozenset(("error_type", "message", "resolution"))

# Well inside the model's limits: beyond them the model decides (and words the refusal).
_TEXT = 20_000
_NAME = 200
_STEPS = 100_000


class _Unsure(Exception):
    """The plain reading cannot vouch for this input: ask the model."""


def _text(value: Any, limit: int = _TEXT) -> str:
    if type(value) is not str or len(value) > limit:
        raise _Unsure
    return value


def _optional_text(value: Any, limit: int = _NAME) -> str | None:
    return None if value is None else _text(value, limit)


def _identifier(value: Any) -> str | None:
    """An id the model checks as an Identifier: anything doubtful goes to the model."""
    if value is None:
        return None
    text = _text(value, _NAME)
    if identifier_problem(text):
        raise _Unsure
    return text


def _session_id(value: Any) -> str | None:
    text = _identifier(value)
    if text is not None:
        try:
            check_id(text, "session_id")
        except InvalidInput:
            raise _Unsure from None
    return text


def _text_list(value: Any) -> list[str]:
    if value is None:
        return []
    if type(value) is str:
        return [_text(value)] if value.strip() else []
    if type(value) is not list:
        raise _Unsure
    return [_text(v) for v in value if _text(v).strip()]


def _card(value: Any) -> dict[str, Any]:
    if type(value) is not dict or not value.keys() <= _CARD_FIELDS | {"lesson"}:
        raise _Unsure
    out: dict[str, Any] = {}
    kind = value.get("mistake_type", "unknown_mistake")
    # The model turns null into "" and then a blank type into the default.
    out["mistake_type"] = (
        "unknown_mistake"
        if "mistake_type" not in value
        else (_text("" if kind is None else kind, _NAME).strip() or "unknown_mistake")
    )
    out["task_id"] = _identifier(value.get("task_id"))
    out["worker_id"] = _identifier(value.get("worker_id"))
    for key in ("bad_decision", "correct_decision", "evidence"):
        given = value.get(key, "")
        out[key] = _text("" if given is None else given)
    out["lesson"] = _optional_text(value.get("lesson"), _TEXT)
    return out


def _error(value: Any) -> dict[str, Any]:
    if type(value) is not dict or not value.keys() <= _ERROR_FIELDS or "error_type" not in value:
        raise _Unsure
    kind = _text(value["error_type"], _NAME)
    if not kind:
        raise _Unsure
    return {
        "error_type": kind,
        "message": _text(value.get("message", "")),
        "resolution": _text(value.get("resolution", "")),
    }


def _list(value: Any, read: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    if value is None:
        raise _Unsure
    if type(value) is not list:
        raise _Unsure
    return [read(v) for v in value]


def plain(item: Any) -> dict[str, Any] | None:
    """``EpisodeInput(**item).model_dump()`` when that certainly succeeds, else None."""
    try:
        return _plain(item)
    except _Unsure:
        return None


def _plain(item: Any) -> dict[str, Any]:
    if type(item) is not dict:
        raise _Unsure
    data = item
    if "trajectory_summary" in data:
        data = dict(data)
        alias = data.pop("trajectory_summary")
        if not data.get("summary"):
            data["summary"] = alias
    extra = {k: v for k, v in data.items() if k not in FIELDS}
    if any(type(k) is not str or k.startswith(("_", "model_")) for k in extra):
        raise _Unsure  # names pydantic treats specially
    if "score" not in data:
        raise _Unsure
    score = data["score"]
    if type(score) not in (int, float) or not 0.0 <= score <= 1.0:
        raise _Unsure
    steps = data.get("steps", 0)
    if type(steps) is float and steps.is_integer():
        steps = int(steps)
    if type(steps) is not int or not 0 <= steps <= _STEPS:
        raise _Unsure
    task = data.get("task_id", "unknown")
    if task is None or (type(task) is str and not task.strip()):
        task = "unknown"
    elif "task_id" in data:
        raw = _text(task, _TEXT)
        task = raw.strip()
        if not 1 <= len(task) <= _NAME or identifier_problem(raw) or identifier_problem(task):
            raise _Unsure
    outcome = data.get("outcome")
    if outcome is not None and (type(outcome) is not str or outcome not in OUTCOMES):
        raise _Unsure
    metadata = data.get("metadata", {})
    if type(metadata) is not dict:
        raise _Unsure
    return {
        "task_id": task,
        "score": float(score),
        "steps": steps,
        "summary": _text(data.get("summary", "")),
        "mistakes": _text_list(data.get("mistakes")),
        "successes": _text_list(data.get("successes")),
        "mistake_cards": _list(data.get("mistake_cards", []), _card),
        "errors": _list(data.get("errors", []), _error),
        "outcome": outcome,
        "session_id": _session_id(data.get("session_id")),
        "worker_id": _identifier(data.get("worker_id")),
        "recorded_at": _optional_text(data.get("recorded_at")),
        "metadata": {**extra, **metadata} if extra else metadata,
    }


# -- what the episodic library accepts ---------------------------------------------------
#: A mistake card's fields (all text: the library formats them into lines).
_CARD_TEXT_ALL = (
    "mistake_type",
    "task_id",
    "worker_id",
    "bad_decision",
    "correct_decision",
    "evidence",
    "lesson",
)


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _as_text(value: Any) -> str:
    """A number as the library prints it in a line (``7``, ``0.5``)."""
    return str(value)


def coerce(item: Any) -> tuple[Any, list[str]]:
    """What the episodic library makes of an episode memwork's model refuses, and one
    note per change (``<field>: <what was done>``; the caller adds the item number).

    The library takes a missing score as 0.0, a numeric string as its number, skips a
    mistake card that is not an object, ignores fields a card does not have, and turns
    numbers in text fields into text. Nothing else is read differently: a score of 2,
    or an episode that is not an object, stays refused.
    """
    if type(item) is not dict:
        return item, []
    data = dict(item)
    notes: list[str] = []
    if "score" not in data:
        data["score"] = 0.0
        notes.append("score: missing; recorded as 0.0, as the episodic library reads it")
    elif type(data["score"]) is str:
        number = _number(data["score"])
        if number is not None and 0.0 <= number <= 1.0:
            notes.append(f"score: the text {data['score']!r} read as the number {number:g}")
            data["score"] = number
    steps = data.get("steps")
    if type(steps) is str and is_whole_number(steps.strip()):
        data["steps"] = int(steps.strip())
        notes.append(f"steps: the text {steps!r} read as the number {data['steps']}")
    for key in ("task_id", "worker_id", "summary", "trajectory_summary"):
        if _is_number(data.get(key)):
            notes.append(f"{key}: the number {data[key]!r} recorded as text")
            data[key] = _as_text(data[key])
    for key in ("mistakes", "successes"):
        value = data.get(key)
        if _is_number(value):
            notes.append(f"{key}: the number {value!r} recorded as text")
            data[key] = [_as_text(value)]
        elif type(value) is list and any(_is_number(v) for v in value):
            for n, v in enumerate(value):
                if _is_number(v):
                    notes.append(f"{key}.{n}: the number {v!r} recorded as text")
            data[key] = [_as_text(v) if _is_number(v) else v for v in value]
    cards = data.get("mistake_cards")
    if type(cards) is list:
        kept = []
        for n, card in enumerate(cards):
            if type(card) is not dict:
                shown = type(card).__name__ if card is not None else "null"
                notes.append(
                    f"mistake_cards.{n}: not an object (a {shown}); skipped, as the episodic "
                    "library skips it"
                )
                continue
            kept.append(_coerce_card(card, f"mistake_cards.{n}", notes))
        data["mistake_cards"] = kept
    return data, notes


def _coerce_card(card: dict[str, Any], where: str, notes: list[str]) -> dict[str, Any]:
    out = {}
    for key, value in card.items():
        if key not in _CARD_TEXT_ALL:
            notes.append(f"{where}.{key}: not a mistake card field; ignored")
            continue
        if _is_number(value):
            notes.append(f"{where}.{key}: the number {value!r} recorded as text")
            value = _as_text(value)
        out[key] = value
    return out


def _number(text: str) -> float | None:
    import math

    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def parse_lenient(item: Any, *, number: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """:func:`parse`, reading what the model refuses as the episodic library would
    (:func:`coerce`); the episode and a note per change, each naming the item and field.

    The usual episode parses at once; only a refused one pays for the second reading.
    A refusal that reading cannot save is the model's message for what is left.
    """
    try:
        return parse(item, number=number), []
    except InvalidInput:
        read, notes = coerce(item)
        if not notes:
            raise
    prefix = f"item {number}: " if number is not None else ""
    return parse(read, number=number), [prefix + note for note in notes]


def parse(item: Any, *, number: int | None = None) -> dict[str, Any]:
    """Validate one episode; the model's ``model_dump()``, or its InvalidInput naming the field.

    An episode comes from outside, so its integers and nesting are bounded first
    (:mod:`core.models.limits`), whichever reading then takes it.
    """
    if type(item) is dict:
        try:
            check_json(item, "")
        except InvalidInput as exc:
            raise InvalidInput(exc.field, exc.rule, item=number) from None
    found = plain(item)
    if found is not None:
        return found
    from ..models.base import validate
    from ..models.episode import EpisodeInput

    return validate(EpisodeInput, item, item=number, outside=True).model_dump()
