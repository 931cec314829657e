"""Settings an operator gives in the environment, beside ``MEMWORK_DB``.

- ``MEMWORK_TOKEN_BUDGET``: the context's token budget when a caller gives none
  (every door: ``memwork context``, ``Memory.context``, MCP ``get_context``, the
  HTTP route, the workbench's first preview). Unset: the default style keeps to
  2000 and the episodic style is never cut.
- ``MEMWORK_MAX_OBS_PER_SESSION``: how many observations a session started from
  now on keeps (past it the oldest are dropped and counted). Default 500. A
  session keeps the cap it started with, so changing the variable never drops
  observations from a session already running.

A value that is not a whole number in range is refused where it is read, in one
line naming the variable (exit 2 at the CLI), never taken for the default.
Read on every call (cheap: one environment lookup), so a long-lived process
hears a change only when it restarts its environment, as for every variable.
"""

from __future__ import annotations

import os

from .errors import InvalidInput

TOKEN_BUDGET_ENV = "MEMWORK_TOKEN_BUDGET"
MAX_OBS_ENV = "MEMWORK_MAX_OBS_PER_SESSION"

#: The context's token budget when neither the caller nor the environment gives one (every
#: door's default for the default style; the episodic style has none: the library it
#: mirrors never cuts its context).
DEFAULT_TOKEN_BUDGET = 2000
#: Observations a session keeps when the environment says nothing.
DEFAULT_MAX_OBSERVATIONS = 500
#: The largest value either variable takes (a budget past it means "no budget" anyway).
_CEILING = 2**31


def _whole(name: str, minimum: int, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    text = raw.strip()
    try:
        value = int(text, 10)
    except ValueError:
        value = None
    if value is None or not minimum <= value <= _CEILING:
        rule = f"must be a whole number from {minimum} to {_CEILING} (got {raw!r})"
        raise InvalidInput(name, rule)
    return value


def token_budget() -> int:
    """The default token budget: ``MEMWORK_TOKEN_BUDGET``, else 2000 (0 is allowed: the
    context then keeps only its first line)."""
    return _whole(TOKEN_BUDGET_ENV, 0, DEFAULT_TOKEN_BUDGET)


def configured_token_budget() -> int | None:
    """``MEMWORK_TOKEN_BUDGET`` when it is set, else None (the context's style decides)."""
    raw = os.environ.get(TOKEN_BUDGET_ENV)
    if raw is None or raw.strip() == "":
        return None
    return token_budget()


def max_observations() -> int:
    """The observation cap of a new session: ``MEMWORK_MAX_OBS_PER_SESSION``, else 500."""
    return _whole(MAX_OBS_ENV, 1, DEFAULT_MAX_OBSERVATIONS)


def token_budget_or_default() -> int:
    """:func:`token_budget`, or 2000 when the variable is malformed (the workbench's first
    preview: it shows the budget field, where the user sees and edits it)."""
    try:
        return token_budget()
    except InvalidInput:
        return DEFAULT_TOKEN_BUDGET
