"""Rules: one-line instructions for a task or for every task."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from .base import Record
from .limits import MAX_INT
from .plain import RULE_TEXT_CAP, check_rule_scope

Polarity = Literal["works", "avoid", "note"]
RuleSource = Literal["derived", "consolidated", "manual", "imported"]
TEXT_CAP = RULE_TEXT_CAP

__all__ = ["TEXT_CAP", "Rule", "check_rule_scope"]


class Rule(Record):
    """A rule; ``seq`` orders rules by when they were added or reactivated."""

    text: str = Field(min_length=1, max_length=TEXT_CAP)
    scope: str = "global"
    polarity: Polarity = "note"
    source: RuleSource = "manual"
    active: bool = True
    seq: int = Field(default=0, ge=0, le=MAX_INT)

    @field_validator("scope")
    @classmethod
    def _check_scope(cls, value: str) -> str:
        return check_rule_scope(value)
