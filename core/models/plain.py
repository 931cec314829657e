"""What the models share with the hot paths that must not import pydantic.

Recording an episode runs on every agent step, as a whole process: importing
pydantic and building the models would cost it three times what the work does.
The constants and checks here are the models' own; :mod:`core.models.episode`,
``card`` and ``rule`` import them from here, so they cannot drift apart.
"""

from __future__ import annotations

import re
from typing import Any

# -- episodes --------------------------------------------------------------------------
SUCCESS_AT = 0.85
FAILURE_BELOW = 0.5
OUTCOMES = ("success", "failure", "partial")


def outcome_for(score: float) -> str:
    """The outcome a score implies: >= 0.85 success, < 0.5 failure, else partial."""
    if score >= SUCCESS_AT:
        return "success"
    if score < FAILURE_BELOW:
        return "failure"
    return "partial"


# -- mistake cards ---------------------------------------------------------------------
DEFAULT_LESSON = "Avoid repeating this failure."  # its cap is core.models.card_text.TEXT_CAP

# -- rules -----------------------------------------------------------------------------
RULE_TEXT_CAP = 2000
RULE_POLARITIES = ("works", "avoid", "note")
RULE_SOURCES = ("derived", "consolidated", "manual", "imported")
_RULE_SCOPE = re.compile(r"^(global|task:.+)$")


_identifier_problem: Any = None


def check_rule_scope(value: str) -> str:
    """A rule's scope is ``global`` or ``task:<task_id>``."""
    if not _RULE_SCOPE.fullmatch(value):
        raise ValueError(f"must be 'global' or 'task:<task_id>' (got {value!r})")
    global _identifier_problem
    if _identifier_problem is None:  # an import statement per rule recorded cost ~1.4 µs
        from ..privacy import identifier_problem as _identifier_problem
    problem = _identifier_problem(value)  # scopes are stored as given, like every identifier
    if problem:
        raise ValueError(problem)
    return value
