"""What recall reads from each table: one :data:`Unit` per findable record.

A unit names its record (``ref``, as ``memwork search`` prints it), says what
it is (``kind``), how a hit shows it (``title``), the text that is searched as
weighted fields, when it was recorded, which session it belongs to, and, for
working memory, when it expires. Field weights say how much a word counts
where it stands: a lesson's text, a slot's label, an episode's summary and
mistakes count fully; scopes, tags, task ids and error messages less (the
synthetic evaluation in ``bench/bench_recall.py`` measured the choice).

Observations are the one kind with an order that matters: a session is a
conversation, and the unit keeps its ``seq`` so the index can link each
observation to the one before it.

The same definition of each kind's searchable text (:data:`FIELDS`) feeds the workbench's
global search: :mod:`core.services.recall.search_docs` builds its documents from
:func:`body_text`, and :data:`BODY_FIELDS` says, in one place, where the two differ.

Plain functions over documents; no store access.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any, NamedTuple

from ...base.text import clip
from ...domain.readable import problem
from ...models.kinds import KINDS
from ...storage.tables import logical_name
from .asking import only_asks

#: How wide a hit's title may be (as the workbench's search box shows them).
TITLE_WIDTH = 90
NO_TIME = float("nan")
NEVER = float("inf")

#: Kinds as ``--kind`` names them, in the order results list them when scores tie.
KIND_NAMES = (
    "lesson",
    "rule",
    "card",
    "episode",
    "observation",
    "slot",
    "wm",
    "session",
    "checkpoint",
)

Field = tuple[float, str]


class Unit(NamedTuple):
    """One findable record, as the index takes it."""

    ref: str
    kind: str
    title: str
    fields: tuple[Field, ...]
    time: float  # seconds since the epoch; NaN when the record has no time
    session: str | None  # the session it belongs to, if any
    seq: int  # order inside its session (observations); 0 otherwise
    expires: float  # when it stops being findable (working-memory keys with a TTL)
    asks: bool = False  # a note that only asks (:func:`.asking.only_asks`)


# Field weights (multiples of 0.1: the index counts in tenths, exactly).
W_MAIN = 1.0
W_LABEL = 1.5
W_SIDE = 0.5
W_TAG = 0.5
W_ID = 0.3


_INSTANTS: dict[str, float] = {}


def instant(value: object) -> float:
    """An ISO-8601 instant as seconds since the epoch (NaN when absent or unreadable)."""
    if not isinstance(value, str) or not value:
        return NO_TIME
    found = _INSTANTS.get(value)
    if found is None:
        text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            return NO_TIME
        if parsed.tzinfo is None:
            from datetime import UTC

            parsed = parsed.replace(tzinfo=UTC)
        found = parsed.timestamp()
        if len(_INSTANTS) < 100_000:
            _INSTANTS[value] = found
    return found


def _title(kind: str, doc: dict[str, Any]) -> str:
    return KINDS[kind].title(doc, TITLE_WIDTH)


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


# -- the searchable text of each kind (recall's fields; the workbench's body: BODY_FIELDS) --
def _lesson_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return (
        (W_MAIN, _text(doc.get("content"))),
        (W_ID, _text(doc.get("scope"))),
        (W_TAG, " ".join(doc.get("tags") or [])),
    )


def _rule_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return ((W_MAIN, _text(doc.get("text"))), (W_ID, _text(doc.get("scope"))))


def _card_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return (
        (W_MAIN, _text(doc.get("lesson"))),
        (W_MAIN, _text(doc.get("bad_decision"))),
        (W_SIDE, _text(doc.get("correct_decision"))),
        (W_SIDE, _text(doc.get("evidence"))),
        (W_SIDE, _text(doc.get("mistake_type"))),
        (W_ID, _text(doc.get("task_id"))),
    )


def _episode_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    errors = " ".join(_text(e.get("message")) for e in doc.get("errors") or [])
    return (
        (W_MAIN, _text(doc.get("summary"))),
        (W_MAIN, " ".join(doc.get("mistakes") or [])),
        (W_SIDE, " ".join(doc.get("successes") or [])),
        (W_SIDE, errors),
        (W_ID, _text(doc.get("task_id"))),
    )


def _observation_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return (
        (W_MAIN, _text(doc.get("content"))),
        (W_TAG, " ".join(doc.get("tags") or [])),
    )


def _slot_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return (
        (W_LABEL, _text(doc.get("label")).replace("_", " ")),
        (W_MAIN, _text(doc.get("content"))),
        (W_SIDE, _text(doc.get("description"))),
    )


def _session_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return (
        (W_MAIN, _text(doc.get("title"))),
        (W_MAIN, _text(doc.get("summary"))),
        (W_SIDE, _text(doc.get("project"))),
        (W_SIDE, _text(doc.get("agent_id"))),
    )


def _checkpoint_fields(doc: dict[str, Any]) -> tuple[Field, ...]:
    return ((W_MAIN, _text(doc.get("description"))),)


#: Kind → the searchable text of one of its records, as weighted fields: the one
#: definition of what of each kind is searched, by recall (every field, weighted) and by
#: the workbench's global search (:data:`BODY_FIELDS`). Working memory is recall's alone
#: (:func:`_working_memory`): the workbench's search does not cover it.
FIELDS: dict[str, Callable[[dict[str, Any]], tuple[Field, ...]]] = {
    "lesson": _lesson_fields,
    "rule": _rule_fields,
    "card": _card_fields,
    "episode": _episode_fields,
    "observation": _observation_fields,
    "slot": _slot_fields,
    "session": _session_fields,
    "checkpoint": _checkpoint_fields,
}

#: Kind → which of its :data:`FIELDS`, in what order, make the body of its document in the
#: workbench's global search (:mod:`core.services.recall.search_docs`). That index searches
#: a record's title too, and the fields left out here are in the title (a lesson's or a
#: rule's text, a card's lesson and mistake type, an episode's task id, a slot's label, a
#: session's title). What the workbench reads beyond this is its own, and is all in
#: ``search_docs``: forgotten lessons (recall skips them) titled ``(forgotten)``; an
#: observation's session title, leading its title and its body; a checkpoint's time as its
#: body (its description is its title); no working memory.
BODY_FIELDS: dict[str, tuple[int, ...]] = {
    "lesson": (1, 2),
    "rule": (1,),
    "card": (5, 1, 2, 3),
    "episode": (0, 1, 2, 3),
    "observation": (1,),
    "slot": (2, 1),
    "session": (3, 2, 1),
    "checkpoint": (),
}


def body_text(kind: str, doc: dict[str, Any]) -> str:
    """The body of a record's document in the workbench's global search: its
    :data:`BODY_FIELDS`, in order."""
    fields = FIELDS[kind](doc)
    return " ".join(fields[i][1] for i in BODY_FIELDS[kind])


# -- recall's units -----------------------------------------------------------------------
def _lesson(doc: dict[str, Any]) -> Iterable[Unit]:
    if doc.get("deleted"):
        return  # forgotten: recall no longer finds it (restoring it brings it back)
    if problem("lessons", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    title = _title("lesson", doc)
    if doc.get("superseded_by"):  # kept as history: a hit says the agent no longer gets it
        title = f"(superseded) {title}"
    fields = _lesson_fields(doc)
    yield Unit(doc["id"], "lesson", title, fields, instant(doc.get("created_at")), None, 0, NEVER)


def _rule(doc: dict[str, Any]) -> Iterable[Unit]:
    if problem("rules", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    fields = _rule_fields(doc)
    time = instant(doc.get("created_at"))
    yield Unit(doc["id"], "rule", _title("rule", doc), fields, time, None, 0, NEVER)


def _card(doc: dict[str, Any]) -> Iterable[Unit]:
    if problem("mistake_cards", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    fields = _card_fields(doc)
    time = instant(doc.get("created_at"))
    yield Unit(doc["id"], "card", _title("card", doc), fields, time, None, 0, NEVER)


def _episode(doc: dict[str, Any]) -> Iterable[Unit]:
    if problem("episodes", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    fields = _episode_fields(doc)
    yield Unit(
        doc["id"],
        "episode",
        _title("episode", doc),
        fields,
        instant(doc.get("created_at")),
        doc.get("session_id") or None,
        0,
        NEVER,
    )


def _observation(doc: dict[str, Any]) -> Iterable[Unit]:
    if problem("observations", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    fields = _observation_fields(doc)
    # The session's title leads the shown title; it is added when the hit is shown,
    # so renaming a session renames its observations' hits without re-indexing them.
    content = _text(doc.get("content"))
    title = f"{doc.get('kind', '')}: {clip(content, TITLE_WIDTH)}"
    seq = doc.get("seq")
    yield Unit(
        KINDS["observation"].ref_of(doc),
        "observation",
        title,
        fields,
        instant(doc.get("created_at")),
        doc["session_id"],
        seq if isinstance(seq, int) else 0,
        NEVER,
        only_asks(content),
    )


def _working_memory(doc: dict[str, Any]) -> Iterable[Unit]:
    if "kv" not in doc:
        return  # a working-memory checkpoint, not the live state
    sid = doc["session_id"]
    for key, entry in sorted(doc["kv"].items()):
        value = entry.get("value")
        value = value if isinstance(value, str) else str(value)
        expires = instant(entry.get("expires_at"))
        yield Unit(
            f"{sid}/{key}",
            "wm",
            clip(f"{key} = {value}", TITLE_WIDTH),
            ((W_MAIN, key.replace("_", " ")), (W_MAIN, value)),
            instant(entry.get("set_at")),
            sid,
            0,
            NEVER if expires != expires else expires,  # NaN: no TTL
        )
    task = doc.get("task")
    if task:
        fields = (
            (W_MAIN, _text(task.get("description"))),
            (W_SIDE, _text(task.get("task_id"))),
            (W_ID, _text(task.get("status"))),
        )
        title = clip(f"task {task.get('task_id', '')}: {task.get('description', '')}", TITLE_WIDTH)
        time = instant(task.get("updated_at"))
        yield Unit(f"{sid}/task", "wm", title, fields, time, sid, 0, NEVER)
    for number, entry in enumerate(doc.get("scratchpad") or [], start=1):
        text = _text(entry.get("text"))
        yield Unit(
            f"{sid}/scratch/{number}",
            "wm",
            clip(text, TITLE_WIDTH),
            ((W_MAIN, text),),
            instant(entry.get("ts")),
            sid,
            0,
            NEVER,
        )


def _slot(doc: dict[str, Any]) -> Iterable[Unit]:
    if problem("slots", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    fields = _slot_fields(doc)
    time = instant(doc.get("created_at"))
    yield Unit(doc["id"], "slot", _title("slot", doc), fields, time, None, 0, NEVER)


def _session(doc: dict[str, Any]) -> Iterable[Unit]:
    if problem("sessions", doc) is not None:
        return  # a wrong-typed record is in no answer (core.domain.readable)
    fields = _session_fields(doc)
    time = instant(doc.get("started_at") or doc.get("created_at"))
    yield Unit(doc["id"], "session", _title("session", doc), fields, time, doc["id"], 0, NEVER)


def _checkpoint(doc: dict[str, Any]) -> Iterable[Unit]:
    fields = _checkpoint_fields(doc)
    time = instant(doc.get("created_at"))
    title = _title("checkpoint", doc)
    yield Unit(doc["id"], "checkpoint", title, fields, time, None, 0, NEVER)


#: Logical table → the units of one of its documents.
READERS: dict[str, Callable[[dict[str, Any]], Iterable[Unit]]] = {
    "lessons": _lesson,
    "rules": _rule,
    "mistake_cards": _card,
    "episodes": _episode,
    "observations": _observation,
    "working_memory": _working_memory,
    "slots": _slot,
    "sessions": _session,
    "checkpoints": _checkpoint,
}

#: Logical table → the one kind it holds.
KIND_OF_TABLE = {
    "lessons": "lesson",
    "rules": "rule",
    "mistake_cards": "card",
    "episodes": "episode",
    "observations": "observation",
    "working_memory": "wm",
    "slots": "slot",
    "sessions": "session",
    "checkpoints": "checkpoint",
}


_INDEXED: dict[str, bool] = {}


def indexed(table: str) -> bool:
    """Whether recall reads this physical table (remembered: a follower asks about every
    table of the store at each commit it catches up with)."""
    found = _INDEXED.get(table)
    if found is None:
        logical = logical_name(table)
        # "observations" and "working_memory" alone are legacy names, never per-session
        # tables.
        found = logical in READERS and (
            table != logical or logical not in ("observations", "working_memory", "episodes")
        )
        if len(_INDEXED) >= 100_000:
            _INDEXED.clear()
        _INDEXED[table] = found
    return found


def units(table: str, docs: Iterable[dict[str, Any]]) -> list[Unit]:
    """The units of a physical table's documents (observations in session order)."""
    read = reader(table)
    found = [unit for doc in docs for unit in read(doc)]
    if ordered(table):
        found.sort(key=session_order)
    return found


def reader(table: str) -> Callable[[dict[str, Any]], Iterable[Unit]]:
    """What turns one document of a physical table into its units."""
    return READERS[logical_name(table)]


def texts(table: str, doc: dict[str, Any]) -> set[str]:
    """The text recall reads of one document of ``table``: its searchable fields."""
    return {text for unit in reader(table)(doc) for _, text in unit.fields}


#: Tables whose document gives at most one unit, named by the document's id.
_BY_ID = frozenset(READERS) - {"observations", "working_memory"}


def by_id(table: str) -> bool:
    """Whether each document of ``table`` gives at most one unit, whose reference is the
    document's id: a changed document's old unit is then found by that id alone."""
    return logical_name(table) in _BY_ID


def ordered(table: str) -> bool:
    """Whether a table's units keep an order (a session's observations do)."""
    return logical_name(table) == "observations"


def session_order(unit: Unit) -> tuple[int, float, str]:
    """Where an observation stands in its session: its number, then its time."""
    return unit.seq, unit.time if unit.time == unit.time else 0.0, unit.ref
