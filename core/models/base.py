"""What every stored record shares, and turning pydantic errors into one line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from ..base.errors import InvalidInput
from ..privacy import identifier_problem, scrub

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

M = TypeVar("M", bound=BaseModel)


def check_identifier(value: str) -> str:
    """An identifier is stored as given, so one that looks like a secret is refused."""
    problem = identifier_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def check_timestamp(value: str) -> str:
    """An ISO-8601 instant (what :func:`core.base.clock.iso` writes; other offsets are read too)."""
    from .plain_session import is_instant

    if not is_instant(value):
        raise ValueError("must be an ISO-8601 instant such as 2026-11-01T12:00:00Z")
    return value


#: A stored instant: decay, TTLs and the failure window compute with it.
Timestamp = Annotated[str, AfterValidator(check_timestamp)]

#: A string that links records (a task, session or worker id, a scope, a label, an actor).
Identifier = Annotated[str, AfterValidator(check_identifier)]


class Record(BaseModel):
    """A stored record: a stable string id and UTC ISO-8601 timestamps."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    id: str
    created_at: Timestamp
    updated_at: Timestamp

    def to_doc(self) -> dict[str, Any]:
        """The JSON-ready document the store keeps."""
        return self.model_dump(mode="json")


def _describe(error: ErrorDetails) -> tuple[str, str]:
    loc = ".".join(str(part) for part in error.get("loc", ())) or "value"
    msg = str(error.get("msg", "is invalid"))
    for prefix in ("Value error, ", "Assertion failed, "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    kind = error.get("type", "")
    if kind == "missing":
        msg = "is required"
    elif kind == "extra_forbidden":
        msg = "is not a known field"
    else:
        value = error.get("input")
        if not isinstance(value, dict | list) and kind not in ("value_error",):
            shown = scrub(repr(value), personal=False)  # an echo never repeats a secret
            if len(shown) > 40:
                shown = shown[:37] + "..."
            msg = f"{msg[0].lower()}{msg[1:]} (got {shown})"
    return loc, msg


def invalid_input(exc: ValidationError, *, item: int | None = None) -> InvalidInput:
    """A pydantic error as memwork's one line: the first error's field and rule."""
    field, rule = _describe(exc.errors()[0])
    return InvalidInput(field, rule, item=item)


def validate(model: type[M], data: Any, *, item: int | None = None, outside: bool = False) -> M:
    """Validate ``data`` into ``model``; the error names the field and the rule.

    ``outside``: the data came in as JSON from outside (an episode, an imported
    record), so its integers and nesting are checked too (:mod:`core.models.limits`);
    records memwork builds itself only hold values that were checked on the way in.
    """
    if not isinstance(data, dict):
        raise InvalidInput(
            "record", f"must be a JSON object (got {type(data).__name__})", item=item
        )
    if outside:
        from .limits import check_json

        try:
            check_json(data, "")
        except InvalidInput as exc:
            raise InvalidInput(exc.field, exc.rule, item=item) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid_input(exc, item=item) from None
