"""Which fields of a stored record are identifiers, curated text or reported text.

Every string in a record that came from outside is one of three things:

- an **identifier** (ids, ``task_id``, ``session_id``, ``worker_id``, scopes,
  slot labels, the audit actor, working-memory keys...): stored exactly as given,
  because records link through it. One that holds a secret or a control
  character is refused (:func:`check_doc`), never rewritten;
- **curated** text (a slot's content and description): secrets are removed,
  personal details a person put there stay;
- **reported** text (everything else: summaries, mistakes, lessons, tags,
  observation kinds, checkpoint descriptions, metadata...): secrets and
  personal details are removed.

The importer checks and scrubs every record with these rules on the way in, and
the export scrubs every record again on the way out, so a store written by an
older memwork (or edited by hand) cannot leak what the scrubber now knows.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import InvalidInput
from . import identifier_problem, scrub, scrub_under, scrub_value

__all__ = ["CURATED", "check_doc", "is_identifier", "scrub_doc"]

_IDENTIFIERS = frozenset(
    {
        "id",
        "label",
        "scope",
        "actor",
        "fingerprint",
        "supersedes",
        "superseded_by",
        "merged_from",
        # A link's ends and where it lives (core/ledger/links.py).
        "from",
        "to",
        "home",
    }
)
#: Fields kept with personal details, per table.
CURATED: dict[str, frozenset[str]] = {"slots": frozenset({"content", "description"})}
#: Fields whose dict keys are identifiers too (working-memory keys).
_KEYED = frozenset({"kv"})
#: Agent-given values: their keys are the agent's own, scrubbed as text, never refused.
_OPAQUE = frozenset({"metadata", "value", "note"})


def is_identifier(field: str) -> bool:
    """Whether a field holds identifiers (stored as given, refused when secret-shaped)."""
    return field in _IDENTIFIERS or field.endswith(("_id", "_ids"))


def _identifiers(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def check_doc(table: str, doc: dict[str, Any], where: str) -> None:
    """Refuse a record whose identifiers hold a secret or a control character.

    The message names the record (``where``, e.g. ``episodes[3]``) and the field.
    """
    for field, value in doc.items():
        if is_identifier(field):
            for ident in _identifiers(value):
                problem = identifier_problem(ident)
                if problem:
                    raise InvalidInput(f"{where}.{field}", problem)
        elif field in _OPAQUE:
            continue
        elif isinstance(value, dict):
            if field in _KEYED:
                for key in value:
                    problem = identifier_problem(str(key))
                    if problem:
                        raise InvalidInput(f"{where}.{field} key", problem)
                for key, inner in value.items():
                    if isinstance(inner, dict):
                        check_doc(table, inner, f"{where}.{field}.{key}")
            else:
                check_doc(table, value, f"{where}.{field}")
        elif isinstance(value, list):
            for n, item in enumerate(value, start=1):
                if isinstance(item, dict):
                    check_doc(table, item, f"{where}.{field}[{n}]")


def _scrub_text(value: Any, personal: bool) -> Any:
    if isinstance(value, str):
        return scrub(value, personal=personal)
    if isinstance(value, list):
        return [_scrub_text(v, personal) for v in value]
    if isinstance(value, dict):
        return {_scrub_key(k): _scrub_field(k, v, personal) for k, v in value.items()}
    return value


def _scrub_key(key: Any) -> Any:
    # Keys of agent-given objects (metadata, working-memory values) are data too.
    if isinstance(key, str) and identifier_problem(key):
        return scrub(key, personal=False)
    return key


def _scrub_field(field: Any, value: Any, personal: bool) -> Any:
    if field in _OPAQUE:
        # Agent-given values: a value under a secret-named key goes whole, at any depth.
        return scrub_value(value, personal=personal)
    if field in _KEYED and isinstance(value, dict):
        # Working-memory entries: "db_password" holds a secret whatever its value says.
        return {
            _scrub_key(key): (
                {
                    **{k: _scrub_field(k, v, personal) for k, v in entry.items()},
                    "value": scrub_under(key, entry.get("value"), personal=personal),
                }
                if isinstance(key, str) and isinstance(entry, dict) and "value" in entry
                else _scrub_text(entry, personal)
            )
            for key, entry in value.items()
        }
    if isinstance(field, str) and is_identifier(field):
        # Stored as given; one stored before the check existed still must not leave.
        if isinstance(value, str) and identifier_problem(value):
            return scrub(value, personal=False)
        if isinstance(value, list):
            return [
                scrub(v, personal=False) if isinstance(v, str) and identifier_problem(v) else v
                for v in value
            ]
        return value
    return _scrub_text(value, personal)


def scrub_doc(table: str, doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with its text scrubbed by the rules above (identifiers kept)."""
    curated = CURATED.get(table, frozenset())
    return {_scrub_key(k): _scrub_field(k, v, personal=k not in curated) for k, v in doc.items()}
