"""Slots: labelled, pinned blocks of text that always lead the context.

A slot has a unique label (letters, digits, ``_ - . /``), content, a
description, a character limit, a read-only flag and a position. Rules this
module enforces, for every writer (CLI, API, workbench):

- Content is scrubbed on the way in and measured *after* scrubbing, so the
  limit is checked against what is actually stored.
- An edit never cuts text. An edit whose result would be longer than the
  limit is refused (``InvalidInput`` naming ``content``), and nothing is
  written. The one allowance: a slot that is already over its limit (only an
  import can do that) may be edited as long as the edit does not make it
  longer, so it can be trimmed step by step.
- ``append`` puts a newline between the existing content and the new text,
  unless the content is empty or already ends with a newline.
- ``replace`` replaces *every* occurrence of ``old`` (like ``str.replace``)
  and reports how many; ``old`` missing is ``InvalidInput`` naming ``old``.
- A read-only slot refuses set, append, replace and delete (``Conflict``).
  Only an explicit ``read_only=False`` (``set_slot`` or ``set_read_only``)
  lifts the flag; the CLI has no such flag, so agents cannot unlock a slot.
  Moving a read-only slot is allowed: position is presentation, not content.
- Labels are case-sensitive. Positions are kept dense (0..n-1) by create,
  delete and move; imports keep the positions they bring, and the order is
  always (position, label).
- A write that changes nothing (same content and settings) writes nothing
  and adds no audit entry, so an agent may re-``set`` a slot every step.

Reads do not import pydantic (the context export reads slots on every agent
step); validation models are imported by the writers only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..base import ids
from ..base.clock import iso
from ..base.errors import Conflict, InvalidInput, NotFound
from ..base.numbers import shown_number
from ..ledger import audit
from ..models.limits import MAX_INT
from ..privacy import scrub as _scrub_all
from ..storage.store import Store
from . import readable

TABLE = "slots"


def scrub(text: str) -> str:
    """Slots are curated: secrets go, but personal details a person put there stay."""
    return _scrub_all(text, personal=False)


#: Fields a stored slot has; computed fields are added by :func:`view`.
FIELDS = (
    "id",
    "label",
    "content",
    "description",
    "limit",
    "read_only",
    "position",
    "created_at",
    "updated_at",
)
COMPUTED = ("chars", "over_limit")


# -- pure rules ------------------------------------------------------------------------
def is_over_limit(slot: dict[str, Any]) -> bool:
    """Content longer than the limit (only imports can leave a slot like this)."""
    return len(slot.get("content", "")) > int(slot["limit"])


def view(slot: dict[str, Any]) -> dict[str, Any]:
    """The record plus the computed fields the CLI and UI show."""
    return {
        **slot,
        "chars": len(slot.get("content", "")),
        "over_limit": is_over_limit(slot),
    }


def separator(existing: str) -> str:
    """What ``append`` puts between the existing content and the new text."""
    return "" if not existing or existing.endswith("\n") else "\n"


def check_label(label: Any) -> str:
    """A valid slot label, or ``InvalidInput`` naming ``label`` and the rule."""
    from ..models.slot import LABEL_RULE
    from ..models.slot import check_label as model_check

    # The model's pattern ends in ``$``, which also matches before a final
    # newline; a label must never carry one (it would print as two lines).
    if isinstance(label, str) and "\n" in label:
        raise InvalidInput("label", f"must use {LABEL_RULE} (got {label!r})")
    try:
        return model_check(label)
    except ValueError as exc:
        raise InvalidInput("label", str(exc)) from None


def check_limit(limit: Any) -> int:
    """A limit is a whole number >= 1; numeric strings (as Letta files carry) are accepted."""
    value = limit
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise InvalidInput("limit", f"must be a whole number >= 1 (got {limit!r})") from None
    elif isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput("limit", f"must be a whole number >= 1 (got {limit!r})")
    if value < 1:
        raise InvalidInput("limit", f"must be at least 1 (got {value})")
    if value > MAX_INT:
        raise InvalidInput("limit", f"must be at most 2**53 ({MAX_INT}); got {shown_number(value)}")
    return value


def _check_fits(
    content: str,
    limit: int,
    *,
    before: str | None,
    limit_changed: bool,
    redacted: bool,
) -> None:
    """Refuse content over the limit, unless it only shrinks an already-over slot."""
    size = len(content)
    if size <= limit:
        return
    if before is not None and not limit_changed and size <= len(before):
        return  # trimming an imported over-limit slot: allowed, it gets no longer
    if before is not None and limit_changed and content == before:
        raise InvalidInput(
            "limit",
            f"{limit} is below the slot's current {size} characters; shorten the content first",
        )
    after = " after redaction" if redacted else ""
    raise InvalidInput(
        "content", f"would be {size} characters{after}, over the slot's limit of {limit}"
    )


def _writable(slot: dict[str, Any]) -> None:
    if slot.get("read_only"):
        raise Conflict(f"slot {slot['label']} is read-only")


def _validated(doc: dict[str, Any]) -> dict[str, Any]:
    from ..models.base import validate
    from ..models.slot import Slot

    return validate(Slot, doc).to_doc()


def _default_limit() -> int:
    from ..models.slot import DEFAULT_LIMIT

    return DEFAULT_LIMIT


# -- reads ----------------------------------------------------------------------------
def _ordered(store: Store) -> list[dict[str, Any]]:
    # A wrong-typed slot is left out (core.domain.readable): writes that renumber the
    # others leave it as it is.
    docs = readable.docs(store, TABLE)
    return sorted(docs.values(), key=lambda d: (d["position"], d["label"]))


def _find(store: Store, label: str, *, sound: bool = False) -> dict[str, Any] | None:
    # Writes look at every record (a label a wrong-typed slot holds is taken, never
    # made again over it); reads (``sound``) at those memwork can compute with.
    docs = readable.docs(store, TABLE) if sound else store.docs(TABLE)
    for doc in docs.values():
        if doc["label"] == label:
            return dict(doc)
    return None


def _require(store: Store, label: str, *, sound: bool = False) -> dict[str, Any]:
    found = _find(store, label, sound=sound)
    if found is None:
        check_label(label)  # an impossible label deserves the rule, not "not found"
        raise NotFound("slot", label)
    return found


def list_slots(store: Store) -> list[dict[str, Any]]:
    """Every slot with computed fields, ordered by position then label."""
    with store.reading():
        return [view(dict(d)) for d in _ordered(store)]


def get_slot(store: Store, label: str) -> dict[str, Any]:
    """One slot with computed fields; ``NotFound`` when missing."""
    with store.reading():
        return view(_require(store, label, sound=True))


def preview(
    store: Store,
    op: str,
    label: str,
    *,
    content: str | None = None,
    text: str | None = None,
    old: str | None = None,
    new: str | None = None,
    limit: int | None = None,
    description: str | None = None,
) -> dict[str, Any]:
    """What ``set``/``append``/``replace`` would do to a slot now, without writing.

    Applies the same rules as the writers (label, limit, read-only, ``old``
    present) and raises the same errors, so a review proposal that passes is one
    the store would take at this moment. Returns ``label``, ``exists``,
    ``before`` and ``after`` (the content), and ``limit``.
    """
    label = check_label(label)
    with store.reading():
        slot = _find(store, label)
    if op == "set":
        if not isinstance(content, str):
            raise InvalidInput("content", "must be text")
        if limit is not None:
            limit = check_limit(limit)
        after = scrub(content)
        if slot is not None:
            _writable(slot)
            new_limit = slot["limit"] if limit is None else limit
            _check_fits(
                after,
                new_limit,
                before=slot["content"],
                limit_changed=new_limit != slot["limit"],
                redacted=after != content,
            )
        else:
            new_limit = _default_limit() if limit is None else limit
            _check_fits(after, new_limit, before=None, limit_changed=True, redacted=False)
    elif op in ("append", "replace"):
        if slot is None:
            raise NotFound("slot", label)
        _writable(slot)
        new_limit = slot["limit"]
        if op == "append":
            if not isinstance(text, str) or not scrub(text):
                raise InvalidInput("text", "must not be empty (nothing to append)")
            after = scrub(slot["content"] + separator(slot["content"]) + scrub(text))
        else:
            if not isinstance(old, str) or not old:
                raise InvalidInput("old", "must not be empty")
            if not isinstance(new, str):
                raise InvalidInput("new", "must be text")
            if old not in slot["content"]:
                raise InvalidInput("old", f"{_preview(old)} does not occur in slot {label}")
            after = scrub(slot["content"].replace(old, new))
        _check_fits(after, new_limit, before=slot["content"], limit_changed=False, redacted=False)
    else:
        raise InvalidInput("op", f"must be set, append or replace (got {op!r})")
    return {
        "label": label,
        "exists": slot is not None,
        "before": slot["content"] if slot is not None else "",
        "after": after,
        "limit": new_limit,
        "description": description
        if description is not None
        else (slot or {}).get("description", ""),
    }


# -- writes ---------------------------------------------------------------------------
def _audit(
    store: Store, actor: str, action: str, slot: dict[str, Any], now: datetime, what: str
) -> None:
    summary = f"{what} ({len(slot['content'])}/{slot['limit']} chars"
    summary += ", over limit)" if is_over_limit(slot) else ")"
    audit.record(
        store,
        actor=actor,
        action=action,
        table=TABLE,
        record_id=slot["id"],
        summary=summary,
        now=now,
    )


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in FIELDS if k not in ("updated_at", "created_at"))


def _compact(store: Store, slots: list[dict[str, Any]]) -> None:
    """Renumber ``slots`` (already in the wanted order) 0..n-1, writing only changed ones.

    Neighbours that only shift keep their ``updated_at``: they were not edited.
    """
    changed = {}
    for position, slot in enumerate(slots):
        if slot["position"] != position:
            changed[slot["id"]] = {**slot, "position": position}
    store.put_many(TABLE, changed)


def set_slot(
    store: Store,
    label: str,
    content: str,
    *,
    now: datetime,
    actor: str,
    limit: int | None = None,
    description: str | None = None,
    read_only: bool | None = None,
) -> dict[str, Any]:
    """Create a slot, or overwrite an existing one's content.

    An existing slot keeps its position, and its description, limit and
    read-only flag unless given. A new slot goes last. A read-only slot is
    refused unless ``read_only=False`` is passed explicitly, which unlocks it.
    """
    label = check_label(label)
    if not isinstance(content, str):
        raise InvalidInput("content", f"must be text (got {type(content).__name__})")
    if limit is not None:
        limit = check_limit(limit)
    if description is not None and not isinstance(description, str):
        raise InvalidInput("description", f"must be text (got {type(description).__name__})")
    if read_only is not None and not isinstance(read_only, bool):
        raise InvalidInput("read_only", f"must be true or false (got {read_only!r})")
    text = scrub(content)
    stamp = iso(now)
    with store.transaction():
        existing = _find(store, label)
        if existing is not None:
            if existing.get("read_only") and read_only is not False:
                _writable(existing)
            new_limit = existing["limit"] if limit is None else limit
            _check_fits(
                text,
                new_limit,
                before=existing["content"],
                limit_changed=new_limit != existing["limit"],
                redacted=text != content,
            )
            doc = {
                **existing,
                "content": text,
                "limit": new_limit,
                "updated_at": stamp,
            }
            if description is not None:
                doc["description"] = scrub(description).strip()
            if read_only is not None:
                doc["read_only"] = read_only
            if _same(doc, existing):
                return view(existing)
            saved = _validated(doc)
            store.put(TABLE, saved["id"], saved)
            action = "unlock" if existing.get("read_only") and not saved["read_only"] else "set"
            _audit(store, actor, action, saved, now, f"{action} slot {label}")
            return view(saved)
        new_limit = _default_limit() if limit is None else limit
        _check_fits(text, new_limit, before=None, limit_changed=True, redacted=text != content)
        slots = _ordered(store)
        doc = {
            "id": ids.new_id("slot"),
            "label": label,
            "content": text,
            "description": scrub(description or "").strip(),
            "limit": new_limit,
            "read_only": bool(read_only),
            "position": max((s["position"] for s in slots), default=-1) + 1,
            "created_at": stamp,
            "updated_at": stamp,
        }
        saved = _validated(doc)
        store.put(TABLE, saved["id"], saved)
        _audit(store, actor, "create", saved, now, f"create slot {label}")
        return view(saved)


def create_slot(
    store: Store,
    label: str,
    *,
    now: datetime,
    actor: str,
    limit: int | str | None = None,
    description: str = "",
) -> dict[str, Any]:
    """Create a new, empty slot; an existing label is a ``Conflict`` (never overwritten).

    :func:`set_slot` overwrites an existing slot's content, which is right for an
    agent re-setting its slot but wrong for a person asking for a new one.
    ``limit`` may be typed text (``"2000"``); empty or None means the default.
    """
    label = check_label(label.strip() if isinstance(label, str) else label)
    if isinstance(limit, str):
        limit = limit.strip() or None
    limit_value = _default_limit() if limit is None else check_limit(limit)
    with store.transaction():
        if _find(store, label) is not None:
            raise Conflict(f"slot {label} already exists (pick another label)")
        return set_slot(
            store, label, "", now=now, actor=actor, limit=limit_value, description=description
        )


def append_slot(
    store: Store, label: str, text: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Append ``text`` to a slot (newline-separated; see :func:`separator`)."""
    if not isinstance(text, str) or not text:
        raise InvalidInput("text", "must not be empty (nothing to append)")
    addition = scrub(text)
    if not addition:
        raise InvalidInput(
            "text", "is empty once its <private>…</private> parts are removed (nothing to append)"
        )
    with store.transaction():
        slot = _require(store, label)
        _writable(slot)
        raw = slot["content"] + separator(slot["content"]) + addition
        # Scrub the joined text too: a secret could straddle the join.
        content = scrub(raw)
        _check_fits(
            content,
            slot["limit"],
            before=slot["content"],
            limit_changed=False,
            redacted=addition != text or content != raw,
        )
        saved = _validated({**slot, "content": content, "updated_at": iso(now)})
        store.put(TABLE, saved["id"], saved)
        added = len(content) - len(slot["content"])
        _audit(store, actor, "append", saved, now, f"append to slot {label}: +{added} chars")
        return view(saved)


def replace_op(
    store: Store, label: str, old: str, new: str, *, now: datetime, actor: str
) -> dict[str, Any]:
    """The ``replace_in_slot`` operation: the slot with ``replaced`` (how many times)."""
    slot, count = replace_in_slot(store, label, old, new, now=now, actor=actor)
    return {**slot, "replaced": count}


def replace_in_slot(
    store: Store, label: str, old: str, new: str, *, now: datetime, actor: str
) -> tuple[dict[str, Any], int]:
    """Replace every occurrence of ``old`` with ``new``: (the slot, occurrences replaced).

    ``old`` is matched against the stored (already scrubbed) content.
    """
    if not isinstance(old, str) or not old:
        raise InvalidInput("old", "must not be empty")
    if not isinstance(new, str):
        raise InvalidInput("new", f"must be text (got {type(new).__name__})")
    with store.transaction():
        slot = _require(store, label)
        _writable(slot)
        count = slot["content"].count(old)
        if count == 0:
            raise InvalidInput("old", f"{_preview(old)} does not occur in slot {label}")
        raw = slot["content"].replace(old, new)
        content = scrub(raw)
        _check_fits(
            content,
            slot["limit"],
            before=slot["content"],
            limit_changed=False,
            redacted=content != raw,
        )
        if content == slot["content"]:
            return view(slot), count
        saved = _validated({**slot, "content": content, "updated_at": iso(now)})
        store.put(TABLE, saved["id"], saved)
        times = "1 occurrence" if count == 1 else f"{count} occurrences"
        _audit(store, actor, "replace", saved, now, f"replace in slot {label}: {times}")
        return view(saved), count


def _preview(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def delete_slot(store: Store, label: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Delete a slot (refused when read-only); the others close the gap. Its own links
    go with it; links to it stay, and ``lint`` reports them as dangling."""
    from ..ledger import links

    with store.transaction():
        slot = _require(store, label)
        _writable(slot)
        store.delete(TABLE, [slot["id"]])
        links.delete(store, links.outgoing(store, TABLE, slot["id"]))
        _compact(store, [s for s in _ordered(store) if s["id"] != slot["id"]])
        _audit(store, actor, "delete", slot, now, f"delete slot {label}")
        return view(slot)


def move_slot(
    store: Store, label: str, new_position: int, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Move a slot to ``new_position`` (0-based); every slot is renumbered 0..n-1."""
    with store.transaction():
        slot = _require(store, label)
        slots = _ordered(store)
        last = len(slots) - 1
        if (
            isinstance(new_position, bool)
            or not isinstance(new_position, int)
            or not 0 <= new_position <= last
        ):
            raise InvalidInput("position", f"must be between 0 and {last} (got {new_position!r})")
        order = [s for s in slots if s["id"] != slot["id"]]
        order.insert(new_position, slot)
        if all(s["position"] == i for i, s in enumerate(order)):
            return view(slot)
        moved = {**slot, "position": new_position, "updated_at": iso(now)}
        order[new_position] = moved
        # Neighbours that only shift keep their updated_at (see _compact).
        _compact(store, order)
        store.put(TABLE, moved["id"], moved)
        # Counted from 1, as the Slots pane numbers them (the stored position is 0-based).
        _audit(
            store,
            actor,
            "move",
            moved,
            now,
            f"move slot {label} to position {new_position + 1} of {len(order)}",
        )
        return view(moved)


def set_read_only(
    store: Store, label: str, read_only: bool, *, now: datetime, actor: str
) -> dict[str, Any]:
    """Lock or unlock a slot without touching its content."""
    if not isinstance(read_only, bool):
        raise InvalidInput("read_only", f"must be true or false (got {read_only!r})")
    with store.transaction():
        slot = _require(store, label)
        if bool(slot.get("read_only")) == read_only:
            return view(slot)
        saved = _validated({**slot, "read_only": read_only, "updated_at": iso(now)})
        store.put(TABLE, saved["id"], saved)
        action = "lock" if read_only else "unlock"
        _audit(store, actor, action, saved, now, f"{action} slot {label}")
        return view(saved)


def lock(store: Store, label: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Make a slot read-only."""
    return set_read_only(store, label, True, now=now, actor=actor)


def unlock(store: Store, label: str, *, now: datetime, actor: str) -> dict[str, Any]:
    """Make a read-only slot editable again."""
    return set_read_only(store, label, False, now=now, actor=actor)


def put_imported_slot(
    store: Store,
    doc: dict[str, Any],
    *,
    now: datetime,
    actor: str,
    replace: bool = False,
) -> dict[str, Any]:
    """Store a slot brought in by an importer, keeping over-limit content whole.

    ``doc`` holds ``label`` and optionally ``content``, ``description``,
    ``limit`` (int or numeric string), ``read_only``, ``position``, ``id``,
    ``created_at``, ``updated_at`` (computed ``chars``/``over_limit`` are
    ignored). Content is scrubbed but never cut; a result over its limit is
    stored and flagged by :func:`view`. A label that already exists is a
    ``Conflict`` unless ``replace`` (the importer's ``--on-conflict replace``),
    which replaces it even when read-only: importing is the user's explicit act.
    Without ``position`` the slot goes last; a given position is kept as is
    (an export's positions come back unchanged), ties order by label.
    """
    if not isinstance(doc, dict):
        raise InvalidInput("slot", f"must be a JSON object (got {type(doc).__name__})")
    data = {k: v for k, v in doc.items() if k not in COMPUTED}
    label = check_label(data.get("label"))
    content = data.get("content")
    content = "" if content is None else content
    if not isinstance(content, str):
        raise InvalidInput("content", f"must be text (got {type(content).__name__})")
    limit = _default_limit() if data.get("limit") is None else check_limit(data["limit"])
    description = data.get("description") or ""
    if not isinstance(description, str):
        raise InvalidInput("description", f"must be text (got {type(description).__name__})")
    position = data.get("position")
    if position is not None and (
        isinstance(position, bool) or not isinstance(position, int) or position < 0
    ):
        raise InvalidInput("position", f"must be a whole number >= 0 (got {position!r})")
    stamp = iso(now)
    with store.transaction():
        existing = _find(store, label)
        if existing is not None and not replace:
            raise Conflict(f"slot {label} already exists")
        slot_id = data.get("id") or (existing["id"] if existing else ids.new_id("slot"))
        clash = store.get(TABLE, slot_id)
        if clash is not None and clash["label"] != label:
            raise Conflict(f"slot id {slot_id} is already used by slot {clash['label']}")
        position = data.get("position")
        if position is None and existing is not None:
            position = existing["position"]
        elif position is None:
            position = max((s["position"] for s in _ordered(store)), default=-1) + 1
        record = {
            **data,
            "id": slot_id,
            "label": label,
            "content": scrub(content),
            "description": scrub(description).strip(),
            "limit": limit,
            "read_only": False if data.get("read_only") is None else data["read_only"],
            "position": position,
            "created_at": data.get("created_at") or (existing or {}).get("created_at") or stamp,
            "updated_at": data.get("updated_at") or stamp,
        }
        saved = _validated(record)
        if existing is not None and existing["id"] != saved["id"]:
            store.delete(TABLE, [existing["id"]])
        store.put(TABLE, saved["id"], saved)
        _audit(store, actor, "import", saved, now, f"import slot {label}")
        return view(saved)
