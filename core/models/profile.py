"""Project profiles: a slot-like block of text per project (see core/domain/profiles.py)."""

from __future__ import annotations

from pydantic import Field

from .base import Identifier, Record
from .limits import MAX_INT

#: A profile's default limit, in characters (as a slot's).
DEFAULT_PROFILE_LIMIT = 2000


class Profile(Record):
    """What a project is, in a paragraph or two: shown after the slots in its context."""

    project: Identifier = Field(min_length=1, max_length=200)
    content: str = ""
    limit: int = Field(default=DEFAULT_PROFILE_LIMIT, ge=1, le=MAX_INT)
