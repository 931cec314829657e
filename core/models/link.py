"""Links: one relation between two records (see :mod:`core.ledger.links`)."""

from __future__ import annotations

from pydantic import ConfigDict, Field, field_validator

from .base import Identifier, Record

#: The longest end of a link (a record id, or a ``file:`` path).
END_MAX = 600


class Link(Record):
    """``from`` stands in relation ``kind`` to ``to``; kept in ``links.<home>``."""

    model_config = ConfigDict(
        extra="forbid",
        validate_assignment=True,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    kind: str
    from_: Identifier = Field(alias="from", min_length=1, max_length=END_MAX)
    to: Identifier = Field(min_length=1, max_length=END_MAX)
    home: Identifier = Field(min_length=1, max_length=200)
    note: str = Field(default="", max_length=2000)
    #: Orders a record's episode references (0 for other links).
    seq: int = Field(default=0, ge=0, le=2**53)

    @field_validator("kind")
    @classmethod
    def _check_kind(cls, value: str) -> str:
        from ..ledger.links import KIND_RULE, is_kind

        if not is_kind(value):
            raise ValueError(f"{KIND_RULE} (got {value!r})")
        return value
