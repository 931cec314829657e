"""Slots: pinned blocks of text that always lead the context."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from .base import Record, check_identifier
from .limits import MAX_INT

LABEL_RULE = "letters, digits and _ - . / only (1-200 characters)"
_LABEL = re.compile(r"^[A-Za-z0-9_\-./]{1,200}$")
DEFAULT_LIMIT = 2000


def check_label(value: str) -> str:
    """Slot labels allow path-style names such as ``corrections/mistakes``."""
    if not isinstance(value, str) or not _LABEL.fullmatch(value):
        raise ValueError(f"must use {LABEL_RULE} (got {value!r})")
    return check_identifier(value)


class Slot(Record):
    """A labelled block of text with a character limit."""

    label: str
    content: str = ""
    description: str = ""
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_INT)
    read_only: bool = False
    position: int = 0

    @field_validator("label")
    @classmethod
    def _check_label(cls, value: str) -> str:
        return check_label(value)

    @property
    def over_limit(self) -> bool:
        """Imported slots may exceed their limit; they are kept whole and flagged."""
        return len(self.content) > self.limit
